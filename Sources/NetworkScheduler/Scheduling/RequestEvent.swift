import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Something that happened to a request, for logging and metrics. Each names its request by
/// caller, method and URL, and holds no secret: no header, no body, no query.
///
/// ```swift
/// struct Logger: RequestEvent.Monitor {
///     func record(_ event: RequestEvent) {
///         if case .failed(let caller, let error, _) = event {
///             print("\(caller.id) \(caller.method) \(caller.url?.path ?? "") failed: \(error)")
///         }
///     }
/// }
/// ```
public enum RequestEvent: Sendable {
    /// A caller's request entered its host's line as a new network call.
    case enqueued(Caller)
    /// A caller joined an identical call already in flight instead of making its own.
    case joined(Caller)
    /// A network call started an attempt, after waiting `queuedFor` seconds.
    case started(Call, queuedFor: TimeInterval)
    /// A network call will be tried again (`attempt` is the coming attempt's number) after
    /// `after` seconds, because its last attempt ended with `cause`. Also sent when a call is
    /// replayed with a refreshed token, and when it waits for connectivity.
    case retried(Call, attempt: Int, after: TimeInterval, cause: ServiceError)
    /// A caller got its model.
    case succeeded(Caller, ResponseMetrics)
    /// A caller ended with an error other than cancellation.
    case failed(Caller, ServiceError, ResponseMetrics)
    /// A caller was cancelled, by itself, its group or its Swift task.
    case cancelled(Caller)
    /// A network call waited longer than the maximum wait of its priority
    /// (``RequestScheduler/Configuration-swift.struct/maximumWait``) and moved up one level.
    case promoted(Call, from: RequestPriority, to: RequestPriority)
    /// A call with an `Idempotency-Key` whose callers all left while it was on the wire ended
    /// there, with this status or error; identical requests get it for a while
    /// (``RequestScheduler/Configuration-swift.struct/keptOutcomeWindow``).
    case outcomeKept(Call, Result<Int, ServiceError>)
    /// A host (`scheme://host:port`) was paused, let a probe through, or became available
    /// again (see ``HostHealth``).
    case hostHealthChanged(host: String, HostHealth)
    /// A network call's body went out or came in by another step: about a hundredth of an
    /// upload or a download (and at least 64 KiB), and for a stream at most ten a second.
    case progressed(Call, TransferProgress)
    /// A caller got its model from the scheduler's cache, without waiting for the server to
    /// confirm it: how, in its metrics' ``ResponseMetrics/cacheUse``. It ends the caller, as
    /// ``succeeded(_:_:)`` would.
    case servedFromCache(Caller, ResponseMetrics)
    /// The server answered a request the cache made conditional on its stored answer: 304
    /// (the stored answer still holds, and is used) or a new answer.
    case revalidated(Call, statusCode: Int)
}

extension RequestEvent {
    /// The caller an event is about.
    public struct Caller: Sendable, Hashable, CustomStringConvertible {
        /// The caller's ID, as its handle has it.
        public let id: RequestHandle.ID
        /// Its priority at the time of the event.
        public let priority: RequestPriority
        /// Its request's method.
        public let method: String
        /// Its request's URL without query, fragment or credentials; nil if it makes none.
        public let url: URL?
        /// The number of the call it made or joined (``Call/number``); nil before it is
        /// attached to one, and for a caller the cache answered at once.
        public let callNumber: Int?
        /// The requests it waited for (`after:`), by ID: none if it waited for none, or only
        /// for operations.
        public let dependencies: [RequestHandle.ID]
        /// Its resource's tags (``Resource/tagged(_:)``): a generated OpenAPI client's call has
        /// `openapi:` and its operation's ID.
        public internal(set) var tags: Set<String> = []

        /// `#12 high GET https://api.example.com/v1/me`.
        public var description: String { "\(id) \(priority) \(RequestEvent.line(method, url))" }
    }

    /// The network call an event is about, shared by one or more callers.
    public struct Call: Sendable, Hashable, CustomStringConvertible {
        /// Its number in its scheduler: calls are numbered from 1 in the order they are made,
        /// and a call keeps its number for its life, through every attempt, whichever of its
        /// callers leave.
        public let number: Int
        /// The callers it has at the time of the event, in the order they were sent; none for
        /// a kept outcome, whose callers left.
        public let callers: [RequestHandle.ID]
        /// Its request's method.
        public let method: String
        /// Its request's URL without query, fragment or credentials.
        public let url: URL?

        /// `GET https://api.example.com/v1/me for #12 #15`.
        public var description: String {
            RequestEvent.line(method, url) + (callers.isEmpty ? "" : " for " + callers.map(\.description).joined(separator: " "))
        }
    }

    /// `url` as an event shows it: scheme, host, port and path, since a query may carry a key
    /// and the user part a password.
    static func loggable(_ url: URL?) -> URL? {
        // Most URLs have nothing to remove: those are kept as they are, without a copy.
        if let url, url.query == nil, url.fragment == nil, url.user == nil, url.password == nil { return url }
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.url
    }

    fileprivate static func line(_ method: String, _ url: URL?) -> String {
        guard let url else { return method }
        return "\(method) \(url.absoluteString)"
    }
}

extension RequestEvent.Caller {
    /// The caller `id` sending `target` (a submission's method and URL), as events show it.
    init(id: RequestHandle.ID, priority: RequestPriority, target: (method: String, url: URL?), callNumber: Int? = nil,
         dependencies: [RequestHandle.ID] = [], tags: Set<String> = []) {
        self.init(id: id, priority: priority, method: target.method, url: RequestEvent.loggable(target.url),
                  callNumber: callNumber, dependencies: dependencies, tags: tags)
    }
}

extension RequestEvent {
    /// Observes a scheduler's events. Called synchronously on the thread where the event happens,
    /// never under the scheduler's lock: keep it quick and thread-safe. Events of different calls
    /// may come from different threads at once; one call's come in the order they happened (a
    /// retry before the attempt it starts, a caller's end after its call's start, and every
    /// ``joined(_:)`` after the ``enqueued(_:)`` of the caller that made the call, even when
    /// the joiner attached on another thread before that one was told).
    ///
    /// ## What a monitor hears of each caller
    ///
    /// A caller is one `send`, `value(for:)`, `reply(for:)`, `operation(for:)`, download or
    /// stream connection, named by its ``RequestHandle/ID`` in every event about it:
    ///
    /// - **Its end, exactly once**, whatever ends it: ``succeeded(_:_:)``,
    ///   ``servedFromCache(_:_:)``, ``failed(_:_:_:)`` or ``cancelled(_:)``. So is a caller the
    ///   cache answered, one whose dependency failed, one cancelled or past its deadline before
    ///   it was sent, one whose request could not be built, and an awaiting task cancelled before
    ///   it asked (which gets an ID of its own, and sends nothing).
    /// - **Its begin, at most once and before its end**: ``enqueued(_:)`` as it makes a new call,
    ///   or ``joined(_:)`` as it joins one in flight. A caller that ends before it reaches a
    ///   call (any of the above but a caller cancelled once sent) is told only its end.
    ///
    /// So a count of requests counts ends, and a gauge of callers in flight goes up on a begin
    /// and down on the end of a caller it saw begin.
    public protocol Monitor: Sendable {
        /// Called once for each event.
        ///
        /// - Parameter event: what happened.
        func record(_ event: RequestEvent)
    }
}

extension RequestEvent: CustomStringConvertible, CustomDebugStringConvertible {
    /// The event, its callers, and the request's method and URL without query: nothing that
    /// can hold a secret, so that a log of events holds none.
    public var description: String {
        switch self {
        case .enqueued(let caller): "enqueued \(caller)"
        case .joined(let caller): "joined \(caller)"
        case let .started(call, queuedFor): "started \(call) after \(queuedFor) s"
        case let .retried(call, attempt, after, cause):
            "retried \(call) as attempt \(attempt) after \(after) s, because of \(cause)"
        case let .succeeded(caller, metrics): "succeeded \(caller) \(metrics.statusCode.map(String.init) ?? "")"
        case let .failed(caller, error, _): "failed \(caller): \(error)"
        case .cancelled(let caller): "cancelled \(caller)"
        case let .promoted(call, from, to): "promoted \(call) from \(from) to \(to)"
        case let .hostHealthChanged(host, health): "\(host) \(health)"
        case let .outcomeKept(call, outcome):
            "kept \(call): \((try? outcome.get()).map(String.init) ?? "\(outcome)")"
        case let .progressed(call, progress):
            "progressed \(call): \(progress.bytesSent) bytes sent, \(progress.bytesReceived) received"
        case let .servedFromCache(caller, metrics): "served \(caller) from the cache (\(metrics.cacheUse))"
        case let .revalidated(call, statusCode): "revalidated \(call): \(statusCode)"
        }
    }

    /// The same as ``description``.
    public var debugDescription: String { description }
}

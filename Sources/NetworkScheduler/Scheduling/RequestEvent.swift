import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Something that happened to a request, for logging and metrics.
public enum RequestEvent: Sendable {
    /// A caller's request entered a priority queue as a new network call.
    case enqueued(RequestHandle.ID, RequestPriority, URLRequest)
    /// A caller joined an identical call already in flight instead of making its own.
    case joined(RequestHandle.ID, RequestPriority, URLRequest)
    /// A network call started, after waiting `queuedFor` seconds.
    case started(URLRequest, queuedFor: TimeInterval)
    /// A network call will be tried again (`attempt` is the coming attempt's number) after
    /// `after` seconds, because its last attempt ended with `cause`. Also sent when a call is
    /// replayed with a refreshed token, and when it waits for connectivity.
    case retried(URLRequest, attempt: Int, after: TimeInterval, cause: ServiceError)
    /// A caller got its model.
    case succeeded(RequestHandle.ID, RequestPriority, ResponseMetrics)
    /// A caller ended with an error other than cancellation.
    case failed(RequestHandle.ID, RequestPriority, ServiceError, ResponseMetrics)
    /// A caller was cancelled, by itself, its group or its Swift task.
    case cancelled(RequestHandle.ID, RequestPriority)
    /// A network call waited longer than the maximum wait of its priority
    /// (``RequestScheduler/Configuration-swift.struct/maximumWait``) and moved up one level.
    case promoted(URLRequest, from: RequestPriority, to: RequestPriority)
    /// A call with an `Idempotency-Key` whose callers all left while it was on the wire ended
    /// there, with this status or error; identical requests get it for a while
    /// (``RequestScheduler/Configuration-swift.struct/keptOutcomeWindow``).
    case outcomeKept(URLRequest, Result<Int, ServiceError>)
    /// A host (`scheme://host:port`) was paused, let a probe through, or became available
    /// again (see ``HostHealth``).
    case hostHealthChanged(host: String, HostHealth)
}

/// Observes a scheduler's events. Called synchronously on the thread where the event happens,
/// never under the scheduler's lock: keep it quick and thread-safe.
public protocol RequestEventMonitor: Sendable {
    /// Called once for each event.
    func record(_ event: RequestEvent)
}

extension RequestEvent: CustomStringConvertible, CustomDebugStringConvertible {
    /// The event, the caller, and the request's method, host and path: no header, no body and
    /// no query (which may carry a key), so that a log of events holds no secret.
    public var description: String {
        switch self {
        case let .enqueued(id, priority, request): "enqueued \(id) \(priority) \(Self.line(of: request))"
        case let .joined(id, priority, request): "joined \(id) \(priority) \(Self.line(of: request))"
        case let .started(request, queuedFor): "started \(Self.line(of: request)) after \(queuedFor) s"
        case let .retried(request, attempt, after, cause):
            "retried \(Self.line(of: request)) as attempt \(attempt) after \(after) s, because of \(cause)"
        case let .succeeded(id, priority, metrics): "succeeded \(id) \(priority) \(metrics.statusCode.map(String.init) ?? "")"
        case let .failed(id, priority, error, _): "failed \(id) \(priority) \(error)"
        case let .cancelled(id, priority): "cancelled \(id) \(priority)"
        case let .promoted(request, from, to): "promoted \(Self.line(of: request)) from \(from) to \(to)"
        case let .hostHealthChanged(host, health): "\(host) \(health)"
        case let .outcomeKept(request, outcome):
            "kept \(Self.line(of: request)): \((try? outcome.get()).map(String.init) ?? "\(outcome)")"
        }
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    private static func line(of request: URLRequest) -> String {
        let method = request.httpMethod ?? "GET"
        guard let url = request.url else { return method }
        let port = url.port.map { ":\($0)" } ?? ""
        return "\(method) \(url.scheme ?? "")://\(url.host ?? "")\(port)\(url.path)"
    }
}

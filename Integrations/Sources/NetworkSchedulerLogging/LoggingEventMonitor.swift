import Foundation
import Logging
import NetworkScheduler

/// Writes a scheduler's events to a swift-log `Logger`: one line per event, with its caller or
/// call, method and URL as metadata, and nothing that can hold a secret (no header, query, body
/// or response header: the events carry none).
///
/// ```swift
/// var logger = Logger(label: "api")
/// logger.logLevel = .info
/// let scheduler = RequestScheduler {
///     $0.eventMonitors = [LoggingEventMonitor(logger: logger)]
/// }
/// ```
///
/// Routine events (a caller enqueued, joined, started, succeeded or cancelled) are logged at
/// ``Levels/routine``, `.debug` by default; retries, promotions and kept outcomes at
/// ``Levels/notable``; failures at ``Levels/failure``; a host paused at ``Levels/hostPaused``.
/// A level the logger filters out costs a comparison: the line and its metadata are not built.
public struct LoggingEventMonitor: RequestEvent.Monitor {
    /// The level each kind of event is logged at.
    public struct Levels: Sendable, Equatable {
        /// A caller enqueued, joined, started, succeeded or was cancelled; a host available again.
        public var routine: Logger.Level
        /// A retry, a promotion, a kept outcome, a host letting a probe through.
        public var notable: Logger.Level
        /// A caller that ended with an error.
        public var failure: Logger.Level
        /// A host paused (a 429 or 503 with `Retry-After`, or failures in a row).
        public var hostPaused: Logger.Level

        /// Levels; every parameter has the default described on its property.
        ///
        /// - Parameters:
        ///   - routine: the level of routine events, `.debug`.
        ///   - notable: the level of retries, promotions and kept outcomes, `.info`.
        ///   - failure: the level of failures, `.notice`.
        ///   - hostPaused: the level of a paused host, `.warning`.
        public init(routine: Logger.Level = .debug, notable: Logger.Level = .info,
                    failure: Logger.Level = .notice, hostPaused: Logger.Level = .warning) {
            self.routine = routine
            self.notable = notable
            self.failure = failure
            self.hostPaused = hostPaused
        }
    }

    /// The logger the events go to.
    public let logger: Logger
    /// The level of each kind of event.
    public let levels: Levels

    /// A monitor that writes to `logger`.
    ///
    /// - Parameters:
    ///   - logger: where the events go; its level filters them.
    ///   - levels: the level of each kind of event.
    public init(logger: Logger, levels: Levels = Levels()) {
        self.logger = logger
        self.levels = levels
    }

    /// Logs `event` at its level, if the logger takes that level.
    ///
    /// - Parameter event: what happened.
    public func record(_ event: RequestEvent) {
        // The message and metadata are autoclosures: `log` builds them only for a level it takes.
        logger.log(level: level(of: event), "\(event)", metadata: Self.metadata(of: event), source: "NetworkScheduler")
    }

    func level(of event: RequestEvent) -> Logger.Level {
        switch event {
        case .enqueued, .joined, .started, .succeeded, .cancelled, .hostHealthChanged(_, .available), .progressed,
             .servedFromCache, .revalidated:
            levels.routine
        case .retried, .promoted, .outcomeKept, .hostHealthChanged(_, .probing):
            levels.notable
        case .failed:
            levels.failure
        case .hostHealthChanged(_, .paused):
            levels.hostPaused
        }
    }

    /// The event's fields, named as the OpenTelemetry HTTP conventions name them where one does.
    static func metadata(of event: RequestEvent) -> Logger.Metadata {
        switch event {
        case .enqueued(let caller), .joined(let caller), .cancelled(let caller):
            return fields(of: caller)
        case let .started(call, queuedFor):
            return fields(of: call).merging(["queue.wait_seconds": "\(queuedFor)"]) { $1 }
        case let .retried(call, attempt, after, cause):
            return fields(of: call).merging([
                "http.request.resend_count": "\(attempt - 1)",
                "retry.after_seconds": "\(after)",
                "error.type": "\(cause.caseName)",
            ]) { $1 }
        case let .succeeded(caller, metrics), let .servedFromCache(caller, metrics):
            return fields(of: caller).merging(fields(of: metrics)) { $1 }
        case let .revalidated(call, statusCode):
            return fields(of: call).merging(["http.response.status_code": "\(statusCode)"]) { $1 }
        case let .failed(caller, error, metrics):
            return fields(of: caller).merging(fields(of: metrics)) { $1 }.merging(["error.type": "\(error.caseName)"]) { $1 }
        case let .promoted(call, from, to):
            return fields(of: call).merging(["priority.from": "\(from)", "priority.to": "\(to)"]) { $1 }
        case let .outcomeKept(call, outcome):
            var fields = fields(of: call)
            switch outcome {
            case .success(let status): fields["http.response.status_code"] = "\(status)"
            case .failure(let error): fields["error.type"] = "\(error.caseName)"
            }
            return fields
        case let .hostHealthChanged(host, health):
            return ["server.address": "\(host)", "host.health": "\(health)"]
        case let .progressed(call, progress):
            return fields(of: call).merging([
                "transfer.bytes_sent": "\(progress.bytesSent)",
                "transfer.bytes_received": "\(progress.bytesReceived)",
            ]) { $1 }
        }
    }

    private static func fields(of caller: RequestEvent.Caller) -> Logger.Metadata {
        [
            "request.id": "\(caller.id)",
            "request.priority": "\(caller.priority)",
            "http.request.method": "\(caller.method)",
            "url.full": "\(caller.url?.absoluteString ?? "")",
        ]
    }

    private static func fields(of call: RequestEvent.Call) -> Logger.Metadata {
        [
            "request.ids": .array(call.callers.map { "\($0)" }),
            "http.request.method": "\(call.method)",
            "url.full": "\(call.url?.absoluteString ?? "")",
        ]
    }

    private static func fields(of metrics: ResponseMetrics) -> Logger.Metadata {
        var fields: Logger.Metadata = [
            "shared": "\(metrics.wasShared)",
            "queue.wait_seconds": "\(metrics.queuedDuration)",
            "network.duration_seconds": "\(metrics.networkDuration)",
        ]
        if let status = metrics.statusCode { fields["http.response.status_code"] = "\(status)" }
        if metrics.cacheUse != .none { fields["cache.use"] = "\(metrics.cacheUse)" }
        return fields
    }
}

import Foundation

/// Gives the header fields that carry a caller's context to its server: a trace's
/// `traceparent` and `tracestate`, `baggage`, a request ID. Set it on a client
/// (``APIClient/contextPropagation``); `NetworkSchedulerTracing` in the Integrations package
/// is one, for swift-distributed-tracing.
///
/// The scheduler asks it once per caller, as the caller is sent, on the thread and in the
/// task that sends it (so that a task-local context is the caller's), before it waits for
/// dependencies or the cache. The fields go with every attempt of the caller's request, to
/// its client's own origin only, like the token; a redirect to another origin drops them.
/// A call shared by identical callers carries the fields of the caller that made it: their
/// names must be among the headers the scheduler ignores when it matches identical requests
/// (``RequestScheduler/Configuration-swift.struct/headersIgnoredByDeduplication``, which
/// lists `traceparent`, `tracestate` and `baggage`), or no two callers would share a call.
///
/// ```swift
/// struct RequestIDs: ContextPropagation {
///     var fieldNames: Set<String> { ["X-Request-ID"] }
///     func fields(for caller: RequestEvent.Caller) -> HeaderFields {
///         ["X-Request-ID": UUID().uuidString]
///     }
/// }
/// api.contextPropagation = RequestIDs()
/// ```
public protocol ContextPropagation: Sendable {
    /// The names of every field it may give: a redirect to another origin drops them.
    var fieldNames: Set<String> { get }

    /// The fields to send with `caller`'s request.
    ///
    /// - Parameter caller: the caller being sent (it has no call yet).
    /// - Returns: the fields; each replaces any the request has of its name.
    func fields(for caller: RequestEvent.Caller) -> HeaderFields
}

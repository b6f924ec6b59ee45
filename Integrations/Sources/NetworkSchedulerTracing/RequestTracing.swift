import Foundation
import NetworkScheduler
import Tracing

/// Traces a scheduler's requests with swift-distributed-tracing: a span per caller, child of
/// the context of the task that sent it, and under it a span per attempt on the wire. The
/// caller's span carries its priority, whether it shared its call, how it used the cache, its
/// waits and its outcome; an attempt's carries its number, the call's wait in its host's line,
/// its status, and why it was retried. A call shared by several callers runs under the span of
/// the caller that made it, linked to every other caller's span. The caller's context reaches
/// the server in the tracer's fields (`traceparent` and `tracestate` with a W3C propagator),
/// on its client's own origin only.
///
/// It is both the scheduler's event monitor and its clients' context propagation, and needs to
/// be both: a span it starts as a caller is sent ends with the caller's event.
///
/// ```swift
/// let tracing = RequestTracing() // InstrumentationSystem.tracer, as bootstrapped
/// let scheduler = RequestScheduler { $0.eventMonitors.append(tracing) }
/// var api = APIClient(baseURL: serverURL, scheduler: scheduler)
/// api.contextPropagation = tracing
/// ```
public final class RequestTracing: RequestEvent.Monitor, ContextPropagation, @unchecked Sendable {
    // Safety: the mutable state is in `state`, behind `lock`.
    private let tracer: any Tracer
    public let fieldNames: Set<String>
    private let lock = NSLock()
    private var state = TraceState()

    /// A tracing monitor and propagation.
    ///
    /// - Parameters:
    ///   - tracer: the tracer that makes the spans and writes the fields; the bootstrapped
    ///     one (`InstrumentationSystem.tracer`) by default.
    ///   - fieldNames: the names of the fields the tracer's propagator writes, which a
    ///     redirect to another origin drops; the W3C ones by default. They must be among the
    ///     headers the scheduler ignores when it matches identical requests.
    public init(tracer: (any Tracer)? = nil, fieldNames: Set<String> = ["traceparent", "tracestate", "baggage"]) {
        self.tracer = tracer ?? InstrumentationSystem.tracer
        self.fieldNames = fieldNames
    }

    /// Starts the caller's span in the current task's context, and returns its fields.
    public func fields(for caller: RequestEvent.Caller) -> HeaderFields {
        let span = startCallerSpan(caller)
        var carrier = FieldCarrier()
        tracer.inject(span.context, into: &carrier, using: FieldInjector())
        return carrier.fields
    }

    /// Follows the event in the spans.
    public func record(_ event: RequestEvent) {
        let now = DefaultTracerClock.now
        switch event {
        case .enqueued(let caller), .joined(let caller):
            attach(caller)
        case let .started(call, queuedFor):
            startAttempt(of: call, queuedFor: queuedFor, at: now)
        case let .retried(call, attempt, after, cause):
            let span = withState { $0.endAttempt(of: call.number) }
            span?.attributes["networkscheduler.retry.after"] = after
            span?.attributes["networkscheduler.retry.attempt"] = attempt
            span?.recordError(cause)
            span?.setStatus(SpanStatus(code: .error, message: "\(cause)"))
            span?.end(at: now)
        case .succeeded(let caller, let metrics), .servedFromCache(let caller, let metrics):
            end(caller, metrics: metrics, error: nil, at: now)
        case let .failed(caller, error, metrics):
            end(caller, metrics: metrics, error: error, at: now)
        case .cancelled(let caller):
            end(caller, metrics: nil, error: .cancelled, at: now)
        case let .promoted(call, from, to):
            for span in withState({ $0.callerSpans(of: call.number) }) {
                span.addEvent(SpanEvent(name: "promoted", attributes: ["networkscheduler.priority.from": "\(from)",
                                                                      "networkscheduler.priority.to": "\(to)"]))
            }
        case let .outcomeKept(call, outcome):
            let span = withState { $0.endAttempt(of: call.number, forgetting: true) }
            if case .success(let status) = outcome { span?.attributes["http.response.status_code"] = status }
            span?.end(at: now)
        case .hostHealthChanged, .progressed, .revalidated:
            break
        }
    }

    // MARK: - Callers

    private func startCallerSpan(_ caller: RequestEvent.Caller) -> any Span {
        let span = tracer.startSpan(caller.method, context: ServiceContext.current ?? .topLevel, ofKind: .client,
                                    at: DefaultTracerClock.now, function: #function, file: #fileID, line: #line)
        span.attributes["http.request.method"] = caller.method
        if let url = caller.url { span.attributes["url.full"] = url.absoluteString }
        span.attributes["networkscheduler.caller"] = caller.id.description
        span.attributes["networkscheduler.priority"] = caller.priority.description
        // A generated OpenAPI client's call, by the tag its transport gives it.
        if let operation = caller.tags.first(where: { $0.hasPrefix("openapi:") }) {
            span.attributes["openapi.operation_id"] = String(operation.dropFirst("openapi:".count))
        }
        withState { $0.callers[caller.id] = TraceState.CallerTrace(span: span) }
        return span
    }

    /// Notes the call the caller made or joined; a caller of a client without this
    /// propagation gets its span now, in the context of the thread that sent it.
    private func attach(_ caller: RequestEvent.Caller) {
        guard let number = caller.callNumber else { return }
        let known = withState { $0.callers[caller.id] != nil }
        if !known { _ = startCallerSpan(caller) }
        let (span, running) = withState { $0.attach(caller.id, toCall: number) }
        // A caller that joins a call on the wire is linked to its attempt, and it to the caller.
        if let span, let running { running.addLink(SpanLink(context: span.context, attributes: ["networkscheduler.caller": "\(caller.id)"])) }
    }

    private func end(_ caller: RequestEvent.Caller, metrics: ResponseMetrics?, error: ServiceError?, at now: DefaultTracerClock.Instant) {
        // Cancelled, or at its own deadline, a caller leaves alone; any other outcome is its
        // call's answer, which ends the attempt.
        let endsAttempt = error != .cancelled && error != .deadlineExceeded
        let (trace, attempt) = withState { $0.leave(caller.id, endsAttempt: endsAttempt) }
        if let attempt {
            if let status = metrics?.statusCode { attempt.attributes["http.response.status_code"] = status }
            if let error, error != .cancelled {
                attempt.recordError(error)
                attempt.setStatus(SpanStatus(code: .error, message: "\(error)"))
            }
            attempt.end(at: now)
        }
        guard let span = trace?.span else { return }
        if let metrics {
            if let status = metrics.statusCode { span.attributes["http.response.status_code"] = status }
            span.attributes["networkscheduler.shared"] = metrics.wasShared
            span.attributes["networkscheduler.cache"] = "\(metrics.cacheUse)"
            span.attributes["networkscheduler.queue_wait"] = metrics.queuedDuration
            span.attributes["networkscheduler.network_time"] = metrics.networkDuration
        }
        switch error {
        case nil: span.attributes["networkscheduler.outcome"] = "succeeded"
        case .cancelled?: span.attributes["networkscheduler.outcome"] = "cancelled"
        case let error?:
            span.attributes["networkscheduler.outcome"] = "failed"
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: "\(error)"))
        }
        span.end(at: now)
    }

    // MARK: - Attempts

    /// An attempt's span, under the span of the first of its call's callers still here, and
    /// linked to the others'.
    private func startAttempt(of call: RequestEvent.Call, queuedFor: TimeInterval, at now: DefaultTracerClock.Instant) {
        guard let (parent, others, attempt) = withState({ $0.nextAttempt(of: call.number) }) else { return }
        let span = tracer.startSpan(call.method, context: parent.context, ofKind: .client, at: now,
                                    function: #function, file: #fileID, line: #line)
        span.attributes["http.request.method"] = call.method
        if let url = call.url { span.attributes["url.full"] = url.absoluteString }
        span.attributes["networkscheduler.call"] = call.number
        span.attributes["networkscheduler.attempt"] = attempt
        span.attributes["networkscheduler.queue_wait"] = queuedFor
        if attempt > 1 { span.attributes["http.request.resend_count"] = attempt - 1 }
        for other in others { span.addLink(SpanLink(context: other.context, attributes: [:])) }
        withState { $0.calls[call.number]?.attempt = span }
    }

    private func withState<Result>(_ body: (inout TraceState) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }
}

/// The spans of callers and calls in flight.
private struct TraceState {
    struct CallerTrace {
        let span: any Span
        var callNumber: Int?
    }

    struct CallTrace {
        /// Its callers still here, in the order they came.
        var callers: [RequestHandle.ID] = []
        var attempt: (any Span)?
        var attempts = 0
    }

    var callers: [RequestHandle.ID: CallerTrace] = [:]
    var calls: [Int: CallTrace] = [:]

    /// Notes `caller` on its call: its span, and the call's attempt on the wire, if any.
    mutating func attach(_ caller: RequestHandle.ID, toCall number: Int) -> ((any Span)?, (any Span)?) {
        callers[caller]?.callNumber = number
        calls[number, default: CallTrace()].callers.append(caller)
        return (callers[caller]?.span, calls[number]?.attempt)
    }

    /// The parent of the call's next attempt, the spans it links to, and its number.
    mutating func nextAttempt(of number: Int) -> (parent: any Span, others: [any Span], attempt: Int)? {
        guard var call = calls[number] else { return nil }
        let spans = call.callers.compactMap { callers[$0]?.span }
        guard let parent = spans.first else { return nil }
        call.attempts += 1
        calls[number] = call
        return (parent, Array(spans.dropFirst()), call.attempts)
    }

    /// Ends the call's running attempt: its span, to end.
    mutating func endAttempt(of number: Int, forgetting: Bool = false) -> (any Span)? {
        let span = calls[number]?.attempt
        calls[number]?.attempt = nil
        if forgetting { calls[number] = nil }
        return span
    }

    /// Removes the caller: its trace, and its call's attempt span if its outcome ends it (or
    /// the caller was the last).
    mutating func leave(_ caller: RequestHandle.ID, endsAttempt: Bool) -> (CallerTrace?, (any Span)?) {
        guard let trace = callers.removeValue(forKey: caller) else { return (nil, nil) }
        guard let number = trace.callNumber, var call = calls[number] else { return (trace, nil) }
        call.callers.removeAll { $0 == caller }
        var attempt: (any Span)?
        if endsAttempt || call.callers.isEmpty {
            attempt = call.attempt
            call.attempt = nil
        }
        calls[number] = call.callers.isEmpty ? nil : call
        return (trace, attempt)
    }

    func callerSpans(of number: Int) -> [any Span] {
        calls[number]?.callers.compactMap { callers[$0]?.span } ?? []
    }
}

/// Header fields, as the tracer's propagator writes them.
private struct FieldCarrier {
    var fields = HeaderFields()
}

private struct FieldInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout FieldCarrier) {
        carrier.fields[key] = value
    }
}

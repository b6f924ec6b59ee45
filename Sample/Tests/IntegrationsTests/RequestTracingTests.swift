import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import InMemoryTracing
import NetworkScheduler
import NetworkSchedulerOpenAPI
import NetworkSchedulerTesting
import NetworkSchedulerTracing
import Testing
import Tracing

/// The in-memory tracer, writing its span context as a W3C `traceparent`, as swift-otel's
/// propagator does.
private struct W3CInMemoryTracer: Tracer {
    let tracer = InMemoryTracer()

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        tracer.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? {
        tracer.activeSpan(identifiedBy: context)
    }

    func forceFlush() {}

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
        where Extract.Carrier == Carrier {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
        where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }
}

private struct User: Codable, Sendable {
    let id: Int
}

@Suite struct RequestTracingTests {
    private let tracer = W3CInMemoryTracer()
    private let tracing: RequestTracing
    private let stub: StubTransport
    private let api: APIClient
    /// The callers that joined a call, as the scheduler told them.
    private let joined = JoinedCallers()

    init() {
        self.init(reply: { _ in .json(#"{"id": 1}"#) })
    }

    private init(retryPolicy: RetryPolicy = .never, reply: @escaping @Sendable (URLRequest) -> StubResponse) {
        tracing = RequestTracing(tracer: tracer)
        stub = StubTransport(reply: reply)
        let scheduler = RequestScheduler { [tracing, stub, joined] in
            $0.transport = stub
            $0.eventMonitors = [tracing, joined]
            $0.retryPolicy = retryPolicy
        }
        var api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler)
        api.contextPropagation = tracing
        self.api = api
    }

    /// The spans ended so far. An awaiting caller's end is told before its `value(for:)`
    /// returns, and its attempt's span ends with it: nothing is left to wait for.
    private var finished: [FinishedInMemorySpan] { tracer.tracer.finishedSpans }

    @Test func aCallersSpanIsTheChildOfItsTasksSpanAndItsAttemptsSpanItsChild() async throws {
        let screen = tracer.startSpan("screen", context: .topLevel, ofKind: .internal, at: DefaultTracerClock.now,
                                      function: #function, file: #fileID, line: #line)
        try await ServiceContext.withValue(screen.context) {
            _ = try await api.value(for: Resource<User>(path: "me"), priority: .high)
        }
        screen.end()

        let spans = finished
        let caller = try #require(spans.first { $0.attributes.get("networkscheduler.caller") != nil })
        let attempt = try #require(spans.first { $0.attributes.get("networkscheduler.attempt") != nil })
        #expect(caller.parentSpanID == screen.spanContext.spanID)
        #expect(attempt.parentSpanID == caller.spanID)
        #expect(caller.operationName == "GET")
        #expect(caller.attributes.get("networkscheduler.priority") == .string("high"))
        #expect(caller.attributes.get("http.response.status_code") == .int64(200))
        #expect(caller.attributes.get("networkscheduler.shared") == .bool(false))
        #expect(caller.attributes.get("networkscheduler.outcome") == .string("succeeded"))
        #expect(attempt.attributes.get("networkscheduler.attempt") == .int64(1))
        #expect(attempt.attributes.get("http.response.status_code") == .int64(200))
    }

    /// A generated OpenAPI client's operation, sent through `SchedulerClientTransport`: its ID
    /// is on its caller's span.
    @Test func aGeneratedClientsCallCarriesItsOperationIDOnItsSpan() async throws {
        let transport = SchedulerClientTransport(client: api)
        let (response, _) = try await transport.send(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/me"), body: nil,
                                                     baseURL: URL(string: "https://api.test/v1")!, operationID: "getMe")
        _ = try await api.value(for: Resource<User>(path: "users/2"))

        #expect(response.status == .ok)
        let callers = finished.filter { $0.attributes.get("networkscheduler.caller") != nil }
        let operation = try #require(callers.first { $0.attributes.get("url.full") == .string("https://api.test/v1/me") })
        let plain = try #require(callers.first { $0.attributes.get("url.full") == .string("https://api.test/v1/users/2") })
        #expect(operation.attributes.get("openapi.operation_id") == .string("getMe"))
        #expect(plain.attributes.get("openapi.operation_id") == nil)
    }

    @Test func theServerGetsTheCallersTraceparentAndAnotherOriginNone() async throws {
        _ = try await api.value(for: Resource<User>(path: "me"))
        _ = try await api.value(for: Resource<User>(path: "https://cdn.test/user"))

        let arrivals = await stub.arrivals.wait(for: 2)
        let spans = finished
        let caller = try #require(spans.first { $0.attributes.get("url.full") == .string("https://api.test/v1/me")
            && $0.attributes.get("networkscheduler.caller") != nil })
        #expect(arrivals[0].request.value(forHTTPHeaderField: "traceparent") == "00-\(caller.traceID)-\(caller.spanID)-01")
        #expect(arrivals[1].request.value(forHTTPHeaderField: "traceparent") == nil)
        #expect(spans.filter { $0.attributes.get("url.full") == .string("https://cdn.test/user") }.count == 2)
    }

    @Test func aSharedCallRunsUnderItsMakersSpanLinkedToTheOthers() async throws {
        let held = RequestTracingTests(reply: { _ in .hold })
        let first = Task { try await held.api.value(for: Resource<User>(path: "me")) }
        await held.stub.arrivals.wait(for: 1)
        let second = Task { try await held.api.reply(for: Resource<User>(path: "me")) }
        await held.joined.log.wait(for: 1)
        // Both callers and the attempt are open: the second joined.
        #expect(held.tracer.tracer.activeSpans.count == 3)
        held.stub.release(path: "/v1/me", with: .json(#"{"id": 1}"#))
        _ = try await first.value
        #expect(try await second.value.wasShared)

        let spans = held.finished
        let callers = spans.filter { $0.attributes.get("networkscheduler.caller") != nil }
        let attempt = try #require(spans.first { $0.attributes.get("networkscheduler.attempt") != nil })
        #expect(callers.count == 2)
        #expect(held.stub.arrivals.elements.count == 1)
        let maker = try #require(callers.first { $0.spanID == attempt.parentSpanID })
        let joiner = try #require(callers.first { $0.spanID != maker.spanID })
        #expect(attempt.links.map { $0.context.inMemorySpanContext?.spanID } == [joiner.spanID])
        #expect(joiner.attributes.get("networkscheduler.shared") == .bool(true))
    }

    @Test func aRetriedAttemptEndsWithItsCauseAndTheNextIsItsSibling() async throws {
        let answers = Locked503s()
        let flaky = RequestTracingTests(retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0)) { _ in
            answers.next() ? .serverError(503) : .json(#"{"id": 1}"#)
        }

        _ = try await flaky.api.value(for: Resource<User>(path: "me"))

        let spans = flaky.finished
        let attempts = spans.filter { $0.attributes.get("networkscheduler.attempt") != nil }
            .sorted { ($0.attributes.get("networkscheduler.attempt") == .int64(1)) && !($1.attributes.get("networkscheduler.attempt") == .int64(1)) }
        let caller = try #require(spans.first { $0.attributes.get("networkscheduler.caller") != nil })
        #expect(attempts.count == 2)
        #expect(attempts.allSatisfy { $0.parentSpanID == caller.spanID })
        #expect(attempts.first?.status?.code == .error)
        #expect(attempts.first?.attributes.get("networkscheduler.retry.attempt") == .int64(2))
        #expect(attempts.last?.attributes.get("http.request.resend_count") == .int64(1))
        #expect(caller.status == nil)
    }
}

/// Answers 503 the first time only.
private final class Locked503s: @unchecked Sendable {
    // Safety: behind its lock.
    private let lock = NSLock()
    private var answered = false

    func next() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        defer { answered = true }
        return !answered
    }
}

/// Logs each caller that joins a call, for a test to wait on.
private final class JoinedCallers: RequestEvent.Monitor {
    let log = EventLog<RequestHandle.ID>()

    func record(_ event: RequestEvent) {
        if case .joined(let caller) = event { log.append(caller.id) }
    }
}

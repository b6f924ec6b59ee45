import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkSchedulerTesting
import Testing
@testable import NetworkScheduler

/// A trace's context, as a task-local: what a tracing library keeps per task.
private enum Trace {
    @TaskLocal static var parent: String?
}

/// A propagation that sends the sending task's trace as `traceparent`, and counts its reads.
private struct TaskTrace: ContextPropagation {
    let reads = Counter()
    var fieldNames: Set<String> { ["traceparent"] }

    func fields(for caller: RequestEvent.Caller) -> HeaderFields {
        _ = reads.next()
        return Trace.parent.map { ["traceparent": "00-\($0)-\(caller.id.description.dropFirst())-01"] } ?? [:]
    }
}

@Suite struct ContextPropagationTests {
    private static func harness(reply: @escaping @Sendable (URLRequest) -> StubResponse = { _ in .json(userJSON) })
        -> (Harness, APIClient, TaskTrace) {
        let harness = Harness(reply: reply)
        var api = harness.api
        let propagation = TaskTrace()
        api.contextPropagation = propagation
        return (harness, api, propagation)
    }

    @Test func aCallersFieldsAreReadInItsTaskAndReachItsOwnOriginOnly() async throws {
        let (harness, api, _) = Self.harness()

        try await Trace.$parent.withValue("trace-a") {
            _ = try await api.value(for: Resource<User>(path: "me"))
            _ = try await api.value(for: Resource<User>(path: "https://cdn.test/avatar"))
        }

        let arrivals = await harness.transport.arrivals.wait(for: 2)
        #expect(arrivals.map { $0.request.url?.host ?? "" } == ["api.test", "cdn.test"])
        #expect(arrivals[0].request.value(forHTTPHeaderField: "traceparent")?.hasPrefix("00-trace-a-") == true)
        #expect(arrivals[1].request.value(forHTTPHeaderField: "traceparent") == nil)
    }

    @Test func aDependentsFieldsAreReadWhenItIsSentNotWhenItsDependencyEnds() async throws {
        let (harness, api, _) = Self.harness { request in request.url?.path == "/v1/login" ? .hold : .json(userJSON) }
        let outcomes = Outcomes<User>()

        Trace.$parent.withValue("trace-b") {
            let login = api.send(Resource<User>(.post, path: "login")) { _ in }
            api.send(Resource<User>(path: "me"), after: [login], completion: outcomes.completion("me"))
        }
        await harness.transport.arrivals.wait(for: 1)
        // Released on another thread, with no trace of its own.
        harness.transport.release(path: "/v1/login", with: .json(userJSON))
        await outcomes.wait(for: 1)

        let me = try #require(await harness.transport.arrivals.wait(for: 2).last)
        #expect(me.path == "/v1/me")
        #expect(me.request.value(forHTTPHeaderField: "traceparent")?.hasPrefix("00-trace-b-") == true)
    }

    @Test func identicalCallersOfDifferentTracesShareOneCallWhichCarriesTheFirstsTrace() async throws {
        let (harness, api, propagation) = Self.harness { _ in .hold }
        let outcomes = Outcomes<User>()

        Trace.$parent.withValue("first") { api.send(Resource<User>(path: "me"), completion: outcomes.completion("first")) }
        Trace.$parent.withValue("second") { api.send(Resource<User>(path: "me"), completion: outcomes.completion("second")) }
        await harness.events.joined.wait(for: 1)
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(path: "/v1/me", with: .json(userJSON))
        await outcomes.wait(for: 2)

        let arrivals = harness.transport.arrivals.elements
        #expect(arrivals.count == 1)
        #expect(arrivals.first?.request.value(forHTTPHeaderField: "traceparent")?.hasPrefix("00-first-") == true)
        #expect(propagation.reads.count == 2)
    }

    @Test func aRedirectToAnotherOriginDropsTheContextFields() {
        var api = Harness().api
        api.contextPropagation = TaskTrace()

        let submission = api.resolve(Resource<User>(path: "me")).submission

        #expect(submission.transportPolicy(maximumResponseSize: 1).originBoundHeaders.contains("traceparent"))
    }
}

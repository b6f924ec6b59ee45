import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler

/// Cancel scopes beyond a group: everything (a logout), or what a predicate over a request's
/// method, URL and tags selects.
@Suite struct CancelScopeTests {
    @Test func cancelAllEndsEveryRequestRunningWaitingOrWaitingForDependencies() async {
        // Given one request on the wire, one waiting for the budget, and one for a dependency
        let harness = Harness(budget: 1) { _ in .hold }
        let outcomes = Outcomes<User>()
        let running = harness.api.send(Resource<User>(path: "running"), completion: outcomes.completion("running"))
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "waiting"), completion: outcomes.completion("waiting"))
        harness.api.send(Resource<User>(path: "dependent"), after: [running], completion: outcomes.completion("dependent"))

        // When everything is cancelled
        harness.scheduler.cancelAll()

        // Then each ends with .cancelled, the running task is cancelled, and nothing is left
        let results = await outcomes.wait(for: 3)
        #expect(results.count == 3 && results.values.allSatisfy { $0.failure == .cancelled })
        #expect(await harness.transport.cancellations.wait(for: 1).count == 1)
        await harness.scheduler.queuesDrained()
        #expect(harness.isIdle)
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func aRequestSentAfterCancelAllRunsAsUsual() async throws {
        let harness = Harness()
        harness.scheduler.cancelAll()
        #expect(try await harness.api.value(for: Resource<User>(path: "after")).id == 1)
    }

    @Test func aPredicateCancelsOnlyTheRequestsItSelects() async {
        // Given requests tagged or not, to the API and to another host, all held
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "sync/1").tagged("sync"), completion: outcomes.completion("sync 1"))
        harness.api.send(Resource<User>(.post, path: "sync/2").tagged("sync", "user"), completion: outcomes.completion("sync 2"))
        harness.api.send(Resource<User>(path: "https://cdn.test/avatar"), completion: outcomes.completion("cdn"))
        harness.api.send(Resource<User>(path: "me"), completion: outcomes.completion("me"))
        await harness.transport.arrivals.wait(for: 4)

        // When the sync requests are cancelled, then those to the CDN
        harness.scheduler.cancel { $0.tags.contains("sync") }
        let cancelled = await outcomes.wait(for: 2)
        harness.scheduler.cancel { $0.url?.host == "cdn.test" }
        let alsoCancelled = await outcomes.wait(for: 3)
        while harness.transport.release(with: .json(userJSON)) {}

        // Then exactly those ended with .cancelled, and the rest got their answer
        #expect(Set(cancelled.keys) == ["sync 1", "sync 2"] && cancelled.values.allSatisfy { $0.failure == .cancelled })
        #expect(alsoCancelled["cdn"]?.failure == .cancelled)
        #expect(await outcomes.wait(for: 4)["me"]?.success?.id == 1)
    }

    @Test func aHandleDescribesItsRequest() {
        let harness = Harness { _ in .hold }
        let handle = harness.api.send(Resource<User>(.post, path: "posts", query: [URLQueryItem(name: "draft", value: "1")])
            .tagged("compose")) { _ in }

        #expect(handle.method == "POST")
        #expect(handle.url?.absoluteString == "https://api.test/v1/posts?draft=1")
        #expect(handle.tags == ["compose"])
        handle.cancel()
    }
}

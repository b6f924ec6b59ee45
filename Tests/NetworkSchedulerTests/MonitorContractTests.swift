import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkSchedulerTesting
import Testing
@testable import NetworkScheduler

/// What `RequestEvent.Monitor` promises of each caller: its end once, after its begin.
@Suite struct MonitorContractTests {
    /// A caller's begin is decided under the scheduler's lock and told after it, on the thread
    /// that attached it; another thread may end the caller in between (its group cancelled, its
    /// call answered). That end is told after the begin, not before: here the begin is decided,
    /// the caller ends, and only then is the begin told.
    @Test func anEndThatComesBeforeItsBeginIsToldIsToldAfterIt() {
        let harness = Harness()
        let request = harness.api.resolve(Resource<User>(path: "users/1"))
        let handle = harness.scheduler.makeHandle(request, priority: .normal, group: nil, callbacks: nil,
                                                  completion: .model { _ in })
        handle.attached(toCall: 7)

        handle.complete(with: .failure(.cancelled))

        #expect(harness.events.ended.count == 0, "not before its begin")
        guard case .cancelled(let caller)? = handle.beginTold() else {
            Issue.record("the end waits for its begin")
            return
        }
        #expect(caller.id == handle.id)
        #expect(caller.callNumber == 7)
        #expect(handle.beginTold() == nil, "told once")
    }

    /// Without the race, the end is told at once, by the thread that ends the caller.
    @Test func anEndAfterItsBeginIsToldAtOnce() async {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("a"))
        _ = await outcomes.wait(for: 1)

        let ended = await harness.events.ended.wait(for: 1)
        #expect(harness.events.enqueued.count == 1)
        guard case .succeeded? = ended.first else {
            Issue.record("expected the caller to succeed, heard \(ended)")
            return
        }
    }
}

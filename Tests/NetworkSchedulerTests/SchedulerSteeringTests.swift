import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler

/// Request deadlines, host health and adaptive budgets through the scheduler's public API,
/// over a stub transport.
@Suite struct SchedulerSteeringTests {
    static let base = URL(string: "https://api.test/v1")!

    @Test func anAwaitedRequestPastItsDeadlineThrowsAndItsTaskIsCancelled() async {
        let harness = Harness { _ in .hold }
        await #expect(throws: ServiceError.deadlineExceeded) {
            try await harness.api.value(for: Resource<User>(path: "slow").within(0.05))
        }
        #expect(await harness.transport.cancellations.wait(for: 1).count == 1)
        await harness.scheduler.queuesDrained()
        #expect(harness.isIdle)
    }

    @Test func aRetryAfterPausesTheHostAsItsHealthAndEventsShow() async {
        let harness = Harness { request in
            request.url?.path == "/v1/limited" ? .respond(status: 503, headers: ["Retry-After": "30"]) : .json(userJSON)
        }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "limited"), completion: outcomes.completion("limited"))
        #expect(await outcomes.wait(for: 1)["limited"]?.failure?.statusCode == 503)
        guard case .paused(let until) = harness.scheduler.health(of: Self.base) else {
            Issue.record("not paused: \(harness.scheduler.health(of: Self.base))")
            return
        }
        #expect(until.timeIntervalSinceNow > 25 && until.timeIntervalSinceNow <= 30)
        #expect(await harness.events.health.wait(for: 1).count == 1)
        #expect(harness.metrics.snapshot.hostPauses == 1)
        #expect(harness.scheduler.health(of: URL(string: "https://other.test")!) == .available)

        // A request sent meanwhile waits, and a deadline is how it gives up.
        await #expect(throws: ServiceError.deadlineExceeded) {
            try await harness.api.value(for: Resource<User>(path: "users/1").within(0.05))
        }
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func anAdaptiveBudgetHalvesOnA503() async {
        let harness = Harness(budget: 4, reply: { _ in .respond(status: 503) }) { configuration in
            configuration.hostHealth = HostHealth.Policy(pausesOnRetryAfter: false, adaptsBudget: true)
        }
        #expect(harness.scheduler.currentBudget(of: Self.base) == 4)
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "busy"), completion: outcomes.completion("busy"))
        #expect(await outcomes.wait(for: 1)["busy"]?.failure?.statusCode == 503)
        #expect(harness.scheduler.currentBudget(of: Self.base) == 2)
    }
}

import Foundation
import Testing
@testable import NetworkScheduler

/// With a budget of one, a held "blocker" saturates the host; the requests queued behind it
/// start one by one as each is answered, and the stub records the order.
@Suite struct SchedulerPriorityTests {
    private func startOrder(_ harness: Harness, count: Int) async -> [String] {
        for started in 1...count {
            await harness.transport.arrivals.wait(for: started)
            harness.transport.release(with: .json(userJSON))
        }
        return harness.transport.arrivals.elements.dropFirst().map { String($0.path.dropFirst("/v1/".count)) }
    }

    @Test func waitingRequestsStartByPriorityThenFirstInFirstOut() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)

        let sends: [(String, RequestPriority)] = [
            ("low-1", .low), ("normal-1", .normal), ("background-1", .background), ("critical-1", .critical),
            ("high-1", .high), ("low-2", .low), ("high-2", .high), ("normal-2", .normal), ("critical-2", .critical),
        ]
        for (path, priority) in sends {
            harness.api.send(Resource<User>(path: path), priority: priority) { _ in }
        }

        let order = await startOrder(harness, count: sends.count + 1)
        #expect(order == ["critical-1", "critical-2", "high-1", "high-2", "normal-1", "normal-2",
                          "low-1", "low-2", "background-1"])
    }

    @Test func aHigherPriorityJoinerEscalatesTheSharedCall() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "prefetch"), priority: .low) { _ in }
        harness.api.send(Resource<User>(path: "other"), priority: .normal) { _ in }

        harness.api.send(Resource<User>(path: "prefetch"), priority: .critical) { _ in }

        #expect(await startOrder(harness, count: 3) == ["prefetch", "other"])
    }

    @Test func theSharedCallDropsBackWhenItsUrgentCallerLeaves() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "prefetch"), priority: .low) { _ in }
        harness.api.send(Resource<User>(path: "other"), priority: .normal) { _ in }
        let urgent = harness.api.send(Resource<User>(path: "prefetch"), priority: .critical) { _ in }

        urgent.cancel()

        #expect(await startOrder(harness, count: 3) == ["other", "prefetch"])
    }
}

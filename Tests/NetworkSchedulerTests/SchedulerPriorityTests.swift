import Foundation
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

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

    @Test func aCallThatDropsBackKeepsItsPlaceAmongItsPriority() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        for index in 0..<5 {
            harness.api.send(Resource<User>(path: "f\(index)"), priority: .low) { _ in }
        }
        let urgent = harness.api.send(Resource<User>(path: "f0"), priority: .high) { _ in }

        urgent.cancel()

        #expect(await startOrder(harness, count: 6) == ["f0", "f1", "f2", "f3", "f4"])
    }

    // MARK: - The slot kept free of low-priority calls

    private func paths(_ arrivals: [StubTransport.Arrival]) -> [String] {
        arrivals.map { String($0.path.dropFirst("/v1/".count)) }
    }

    @Test func lowPriorityCallsLeaveASlotForAMoreUrgentOne() async {
        let harness = Harness(budget: 3) { _ in .hold }
        for index in 0..<5 {
            harness.api.send(Resource<User>(path: "low-\(index)"), priority: .low) { _ in }
        }
        await harness.transport.arrivals.wait(for: 2)

        harness.api.send(Resource<User>(path: "urgent"), priority: .normal) { _ in }

        // Operations started together reach the transport in any order.
        let started = paths(await harness.transport.arrivals.wait(for: 3))
        #expect(Set(started.prefix(2)) == ["low-0", "low-1"] && started.last == "urgent")
        let line = harness.scheduler.state.withLock { $0.machine.lineCounts }
        #expect(line.running == 3 && line.lowPriorityRunning == 2 && line.waiting == 3)
        // A low call that ends hands its slot to the next low one, not beyond.
        harness.transport.release(with: .json(userJSON))
        #expect(paths(await harness.transport.arrivals.wait(for: 4)).last == "low-2")
        #expect(harness.scheduler.state.withLock { $0.machine.lineCounts.lowPriorityRunning } == 2)
    }

    @Test func withNoSlotReservedLowPriorityCallsTakeTheWholeBudget() async {
        let harness = Harness(budget: 3, slotsReservedAboveLowPriority: 0) { _ in .hold }
        for index in 0..<5 {
            harness.api.send(Resource<User>(path: "low-\(index)"), priority: .background) { _ in }
        }

        #expect(Set(paths(await harness.transport.arrivals.wait(for: 3))) == ["low-0", "low-1", "low-2"])
        #expect(harness.scheduler.state.withLock { $0.machine.lineCounts.lowPriorityRunning } == 3)
    }

    @Test func aWaitingLowCallMadeUrgentByAJoinerTakesTheKeptSlotAtOnce() async {
        let harness = Harness(budget: 2) { _ in .hold }
        harness.api.send(Resource<User>(path: "prefetch-1"), priority: .low) { _ in }
        harness.api.send(Resource<User>(path: "prefetch-2"), priority: .low) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        #expect(harness.scheduler.state.withLock { $0.machine.lineCounts.waiting } == 1)

        harness.api.send(Resource<User>(path: "prefetch-2"), priority: .high) { _ in }

        #expect(paths(await harness.transport.arrivals.wait(for: 2)) == ["prefetch-1", "prefetch-2"])
    }
}

extension HeavyTests {
    @Suite struct StaleLineEntryTests {
        @Test func callersCancelledWhileTheirHostStaysBusyLeaveNothingAlive() async {
            // Given a host kept busy, and ten callers that keep waiting
            let harness = Harness(budget: 1) { _ in .hold }
            harness.api.send(Resource<User>(path: "blocker")) { _ in }
            await harness.transport.arrivals.wait(for: 1)
            let waiting = (0..<10).map { harness.api.send(Resource<User>(path: "keep-\($0)"), priority: .low) { _ in } }

            // When 10,000 others are sent and cancelled behind them
            let cancelled = await onOwnThread {
                let cancelled = WeakHandles()
                for index in 0..<10_000 {
                    let handle = harness.api.send(Resource<User>(path: "gone-\(index)"), priority: .low) { _ in }
                    handle.cancel()
                    cancelled.add(handle)
                }
                return cancelled
            }
            await harness.events.ended.wait(for: 10_000)

            // Then the line keeps at most a bounded number of stale entries, and the handles go
            let entries = harness.scheduler.state.withLock { $0.machine.lineEntryCount }
            #expect(entries <= 2 * waiting.count + 64)
            #expect(cancelled.alive <= 2 * waiting.count + 64)
            #expect(harness.scheduler.state.withLock { $0.machine.lineCounts.waiting } == waiting.count)
        }
    }
}

/// Weak references to handles, to see which are still alive.
final class WeakHandles: @unchecked Sendable {
    // Safety: used from one thread at a time, handed over by a continuation.
    private struct Box { weak var handle: RequestHandle? }
    private var boxes: [Box] = []

    func add(_ handle: RequestHandle) { boxes.append(Box(handle: handle)) }
    var alive: Int { boxes.count { $0.handle != nil } }
}

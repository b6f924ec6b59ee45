import Foundation
import Testing
@testable import NetworkScheduler

/// When every caller is done, nothing it used is still alive.
@Suite struct LeakTests {
    private final class Sentinel: Sendable {}

    private struct Tracked {
        weak var handle: RequestHandle?
        weak var operation: DataTaskOperation?
        weak var captured: Sentinel?
    }

    /// Sends one request whose completion captures a sentinel, and returns weak references to
    /// the handle, its operation and the sentinel, taken while the call is in flight.
    private func sendTracked(_ harness: Harness, outcomes: Outcomes<User>) async -> Tracked {
        let sentinel = Sentinel()
        let handle = harness.api.send(Resource<User>(path: "users/1")) { result in
            withExtendedLifetime(sentinel) { outcomes.completion("only")(result) }
        }
        await harness.transport.arrivals.wait(for: 1)
        let operation = harness.scheduler.state.withLock { $0.operations.made.first }
        #expect(operation != nil)
        return Tracked(handle: handle, operation: operation, captured: sentinel)
    }

    @Test func nothingOutlivesAStreamReadToItsEndAndLetGo() async throws {
        let harness = Harness { _ in .streams(chunks: [Data("a".utf8), Data("b".utf8)]) }
        weak var channel: StreamChannel<Data>?
        weak var handle: RequestHandle?
        do {
            let stream = harness.api.stream(.chunks("export"))
            (channel, handle) = (stream.channel, stream.handle)
            for try await _ in stream {}
        }
        await harness.scheduler.queuesDrained()
        await harness.callbacksRan()

        #expect(harness.isIdle)
        #expect(channel == nil)
        #expect(handle == nil)
    }

    @Test func nothingOutlivesACompletedRequest() async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let tracked = await sendTracked(harness, outcomes: outcomes)

        harness.transport.release(with: .json(userJSON))
        await harness.events.ended.wait(for: 1)
        await harness.scheduler.queuesDrained()
        await harness.callbacksRan()

        #expect(outcomes.log.count == 1)
        #expect(harness.isIdle)
        #expect(tracked.handle == nil)
        #expect(tracked.operation == nil)
        #expect(tracked.captured == nil)
    }

    @Test func nothingOutlivesACancelledRequest() async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let tracked = await sendTracked(harness, outcomes: outcomes)

        tracked.handle?.cancel()
        await harness.events.ended.wait(for: 1)
        await harness.transport.cancellations.wait(for: 1)
        await harness.scheduler.queuesDrained()
        await harness.callbacksRan()

        #expect(outcomes.log.elements.first?.result.failure == .cancelled)
        #expect(harness.isIdle)
        #expect(tracked.handle == nil)
        #expect(tracked.operation == nil)
        #expect(tracked.captured == nil)
    }

    /// A caller that left a call still on the wire costs nothing while the call runs, even with
    /// a monitor listening (when the machine names a call's callers to the operation's maker).
    @Test func aCallerThatLeftIsNotKeptByTheOperationStillRunningItsCall() async {
        let harness = Harness { _ in .never }
        let outcomes = Outcomes<User>()
        let tracked = await sendTracked(harness, outcomes: outcomes)

        tracked.handle?.cancel()
        await harness.events.ended.wait(for: 1)
        await harness.callbacksRan()

        #expect(outcomes.log.elements.first?.result.failure == .cancelled)
        #expect(tracked.operation != nil, "its transport never reports, so its operation still runs")
        #expect(tracked.handle == nil)
        #expect(tracked.captured == nil)
    }

    @Test func aDependentCancelledWhileItsOperationNeverFinishesIsNotKeptByIt() async {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let migration = GateOperation() // never opened
        weak var weakHandle: RequestHandle?
        weak var captured: Sentinel?
        do {
            let sentinel = Sentinel()
            captured = sentinel
            weakHandle = harness.api.send(Resource<User>(path: "users/1"), after: [migration]) { result in
                withExtendedLifetime(sentinel) { outcomes.completion("only")(result) }
            }
        }

        weakHandle?.cancel()
        await harness.events.ended.wait(for: 1)
        await harness.callbacksRan()

        #expect(outcomes.log.elements.first?.result.failure == .cancelled)
        #expect(harness.isIdle)
        #expect(weakHandle == nil)
        #expect(captured == nil)
        withExtendedLifetime(migration) {}
    }

    @Test func nothingOutlivesSharedCallersOrAGroup() async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        weak var weakGroup: RequestGroup?
        weak var weakJoiner: RequestHandle?
        do {
            let group = RequestGroup()
            weakGroup = group
            weakJoiner = harness.api.send(Resource<User>(path: "users/1"), group: group, completion: outcomes.completion("a"))
            harness.api.send(Resource<User>(path: "users/1"), group: group, completion: outcomes.completion("b"))
            await harness.transport.arrivals.wait(for: 1)
        }
        await harness.events.ended.wait(for: 2) // the group was released, so both were cancelled
        await harness.scheduler.queuesDrained()
        await harness.callbacksRan()

        #expect(weakGroup == nil)
        #expect(weakJoiner == nil)
        #expect(harness.isIdle)
        #expect(outcomes.log.count == 2 && outcomes.log.elements.allSatisfy { $0.result.failure == .cancelled })
    }

    @Test func aDrainedSchedulerCountsNoOperationInItsQueues() async {
        // The census right after the drain: a drain that resumed from a barrier block of the
        // queue would count that block as the queue's one operation.
        let harness = Harness { _ in .json(userJSON) }
        var counted: [Int] = []
        for index in 0..<200 {
            _ = try? await harness.api.value(for: Resource<User>(path: "users/\(index)"))
            await harness.scheduler.queuesDrained()
            counted.append(harness.scheduler.census.queuedOperations)
        }
        #expect(counted.allSatisfy { $0 == 0 }, "operations counted after a drain: \(counted.filter { $0 != 0 })")
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler

/// Live priority through the scheduler: a handle's priority, a group's, and what the running
/// task is told.
@Suite struct LivePriorityTests {
    /// Releases each held call in turn, with one budget slot, and returns the paths in the
    /// order they reached the stub.
    private func pathsInOrder(_ harness: Harness, expecting count: Int) async -> [String] {
        for arrived in 1..<count {
            await harness.transport.arrivals.wait(for: arrived)
            harness.transport.release(with: .json(userJSON))
        }
        let arrivals = await harness.transport.arrivals.wait(for: count)
        harness.transport.release(with: .json(userJSON))
        return arrivals.map { String($0.path.dropFirst("/v1/".count)) }
    }

    @Test func aWaitingRequestRaisedStartsBeforeThoseItNowOutranks() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        let handles = (0..<3).map { harness.api.send(Resource<User>(path: "waiting-\($0)")) { _ in } }

        handles[2].priority = .high

        #expect(handles[2].priority == .high)
        #expect(await pathsInOrder(harness, expecting: 4) == ["blocker", "waiting-2", "waiting-0", "waiting-1"])
    }

    /// Behind a busy slot, two requests of a screen being hidden, then two of the one shown.
    private func twoScreens(_ harness: Harness) async -> (hidden: RequestGroup, shown: RequestGroup) {
        let hidden = RequestGroup()
        let shown = RequestGroup()
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        for index in 0..<2 { harness.api.send(Resource<User>(path: "hidden-\(index)"), group: hidden) { _ in } }
        for index in 0..<2 { harness.api.send(Resource<User>(path: "shown-\(index)"), group: shown) { _ in } }
        return (hidden, shown)
    }

    @Test func aHiddenScreensRequestsWaitBehindTheShownOnes() async {
        let harness = Harness(budget: 1) { _ in .hold }
        let (hidden, shown) = await twoScreens(harness)

        hidden.setPriority(.low)

        #expect(await pathsInOrder(harness, expecting: 5) == ["blocker", "shown-0", "shown-1", "hidden-0", "hidden-1"])
        withExtendedLifetime((hidden, shown)) {}
    }

    @Test func aScreenShownAgainGoesFirstInTheOrderItsRequestsWereSent() async {
        let harness = Harness(budget: 1) { _ in .hold }
        let (hidden, shown) = await twoScreens(harness)

        hidden.setPriority(.low)
        hidden.setPriority(.high)

        #expect(await pathsInOrder(harness, expecting: 5) == ["blocker", "hidden-0", "hidden-1", "shown-0", "shown-1"])
        withExtendedLifetime((hidden, shown)) {}
    }

    @Test func anAwaitedRequestIsRerankedThroughItsGroup() async throws {
        let harness = Harness(budget: 1) { _ in .hold }
        let screen = RequestGroup()
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "normal")) { _ in }
        let awaited = Task { try await harness.api.value(for: Resource<User>(path: "awaited"), priority: .low, group: screen) }
        await harness.events.enqueued.wait(for: 3)

        screen.setPriority(.critical)

        #expect(await pathsInOrder(harness, expecting: 3) == ["blocker", "awaited", "normal"])
        #expect(try await awaited.value.id == 1)
    }

    @Test func aRunningRequestsTaskIsToldEachNewPriority() async {
        let harness = Harness { _ in .hold }
        let handle = harness.api.send(Resource<User>(path: "running"), priority: .low) { _ in }
        await harness.transport.arrivals.wait(for: 1)

        handle.priority = .critical
        handle.priority = .normal

        let told = await harness.transport.priorities.wait(for: 3)
        #expect(told.map(\.priority) == [.low, .critical, .normal])
        #expect(told.allSatisfy { $0.path == "/v1/running" })
    }

    @Test func aRequestThatEndedKeepsItsPriorityAndChangesNothing() async throws {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let handle = harness.api.send(Resource<User>(path: "done"), priority: .low, completion: outcomes.completion("done"))
        _ = await outcomes.wait(for: 1)

        handle.priority = .critical

        #expect(handle.priority == .low)
        #expect(harness.transport.priorities.elements.map(\.priority) == [.low])
        #expect(harness.isIdle)
    }

    @Test func aURLSessionTaskCarriesItsPriorityAndItsChanges() throws {
        let transport = URLSessionTransport()
        defer { transport.invalidate() }
        let request = URLRequest(url: URL(string: "http://127.0.0.1:9/never")!)

        let task = transport.startTask(for: request, policy: TransportPolicy(priority: .high)) { _ in }
        defer { task.cancel() }
        let sessionTask = try #require(task as? URLSessionTask)
        #expect(sessionTask.priority == 0.75)

        task.reprioritize(to: .background)
        #expect(sessionTask.priority == 0.1)

        // A normal request's task keeps the priority it was made with, which is normal's.
        let normal = transport.startTask(for: request, policy: TransportPolicy(priority: .normal)) { _ in }
        defer { normal.cancel() }
        #expect(try #require(normal as? URLSessionTask).priority == URLSessionTask.defaultPriority)
    }
}

/// Bounded waits through the scheduler: a call that waited longer than its priority's maximum
/// moves up, and the monitors and metrics hear of it.
@Suite struct AgingTests {
    @Test func aLowRequestThatWaitedTooLongGoesAheadOfNormalOnesSentAfterIt() async {
        let harness = Harness(budget: 1, maximumWait: [.low: 0.05]) { _ in .hold }
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "sync"), priority: .low) { _ in }
        let promoted = await harness.events.promoted.wait(for: 1)
        harness.api.send(Resource<User>(path: "screen")) { _ in }

        harness.transport.release(with: .json(userJSON))

        #expect(promoted.map(\.path) == ["/v1/sync"] && promoted.first?.to == .normal)
        #expect(await harness.transport.arrivals.wait(for: 2).last?.path == "/v1/sync")
        #expect(harness.metrics.snapshot.promotions == 1)
    }
}

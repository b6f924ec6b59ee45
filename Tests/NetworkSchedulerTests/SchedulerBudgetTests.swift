import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct SchedulerBudgetTests {
    @Test func noMoreCallsRunAtOnceToOneHostThanTheBudget() async {
        let harness = Harness(budget: 3) { _ in .hold }
        let outcomes = Outcomes<User>()
        for index in 0..<20 {
            harness.api.send(Resource<User>(path: "users/\(index)"), completion: outcomes.completion("\(index)"))
        }
        await harness.transport.arrivals.wait(for: 3)
        #expect(harness.transport.heldCount == 3)

        for answered in 1...20 {
            await harness.transport.arrivals.wait(for: min(20, answered + 2))
            harness.transport.release(with: .json(userJSON))
        }

        #expect(await outcomes.wait(for: 20).count == 20)
        #expect(harness.transport.maxInFlight == 3)
    }

    @Test func aWaitingCallHasNoOperationUntilABudgetSlotFrees() async {
        let harness = Harness(budget: 2) { _ in .hold }
        for index in 0..<10 {
            harness.api.send(Resource<User>(path: "users/\(index)")) { _ in }
        }
        await harness.transport.arrivals.wait(for: 2)
        var (operations, line) = harness.scheduler.state.withLock { ($0.operations.count, $0.machine.lineCounts) }
        #expect(operations == 2 && line.running == 2 && line.waiting == 8)
        #expect(harness.scheduler.census.queuedOperations <= 2)

        harness.transport.release(with: .json(userJSON))
        await harness.transport.arrivals.wait(for: 3)

        (operations, line) = harness.scheduler.state.withLock { ($0.operations.count, $0.machine.lineCounts) }
        #expect(operations == 2 && line.running == 2 && line.waiting == 7)
    }

    @Test func cancellingEveryWaitingCallLeavesNothingInTheLine() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        let screen = RequestGroup()
        let outcomes = Outcomes<User>()
        for index in 0..<100 {
            let priority = RequestPriority.allCases[index % RequestPriority.allCases.count]
            harness.api.send(Resource<User>(path: "users/\(index)"), priority: priority, group: screen,
                             completion: outcomes.completion("\(index)"))
        }

        screen.cancelAll()

        let ended = await outcomes.wait(for: 100)
        #expect(ended.count == 100 && ended.values.allSatisfy { if case .failure(.cancelled) = $0 { true } else { false } })
        let (line, isEmpty) = harness.scheduler.state.withLock { ($0.machine.lineCounts, $0.machine.lineEntryCount == 0) }
        #expect(line.running == 1 && line.waiting == 0 && isEmpty)
        harness.transport.release(with: .json(userJSON))
        await harness.events.ended.wait(for: 101)
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func eachHostHasItsOwnBudget() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "https://one.test/a")) { _ in }
        harness.api.send(Resource<User>(path: "https://two.test/a")) { _ in }
        harness.api.send(Resource<User>(path: "https://one.test/b")) { _ in }

        let arrivals = await harness.transport.arrivals.wait(for: 2)
        #expect(Set(arrivals.compactMap(\.request.url?.host)) == ["one.test", "two.test"])
        #expect(harness.transport.heldCount == 2)
    }

    @Test func aHostNamedWithItsDefaultPortSharesItsBudget() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "http://one.test/a")) { _ in }
        harness.api.send(Resource<User>(path: "http://ONE.test:80/b")) { _ in }
        harness.api.send(Resource<User>(path: "https://one.test:443/c")) { _ in }
        harness.api.send(Resource<User>(path: "https://one.test/d")) { _ in }

        await harness.transport.arrivals.wait(for: 2)
        let line = harness.scheduler.state.withLock { $0.machine.lineCounts }
        #expect(line.running == 2 && line.waiting == 2)
        #expect(harness.transport.heldCount == 2)
    }

    @Test func theBudgetNeverExceedsWhatTheTransportCanRun() {
        let transport = StubTransport(maximumConnectionsPerHost: 4)
        let tooMany = RequestScheduler(configuration: .init(transport: transport, hostBudget: 50))
        let fewer = RequestScheduler(configuration: .init(transport: transport, hostBudget: 2))
        let unset = RequestScheduler(configuration: .init(transport: transport))

        #expect(tooMany.hostBudget == 4)
        #expect(fewer.hostBudget == 2)
        #expect(unset.hostBudget == 4)
    }

    @Test func theDefaultBudgetIsTheSessionsConnectionLimit() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 3
        let transport = URLSessionTransport(configuration: configuration)
        let scheduler = RequestScheduler(configuration: .init(transport: transport))
        #expect(scheduler.hostBudget == 3)
        transport.invalidate()
    }

    #if canImport(FoundationNetworking)
    @Test func onLinuxTheDefaultBudgetIsWhatLibcurlKeepsConnectionsFor() {
        // A session allows 6 by default; libcurl would close and reopen connections beyond 4.
        let transport = URLSessionTransport()
        let scheduler = RequestScheduler(configuration: .init(transport: transport))
        #expect(transport.session.configuration.httpMaximumConnectionsPerHost == 6)
        #expect(scheduler.hostBudget == 4)
        #expect(transport.maximumConnectionsPerDistantHost == 6, "a distant host gets the session's whole count")
        transport.invalidate()
    }
    #endif
}

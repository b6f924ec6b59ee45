import Foundation
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// A host whose answers take 5 ms or more is across a network: through the scheduler it gets
/// the transport's count of connections for a distant host, unless the budget was set by hand.
/// Time is the virtual clock's: an answer takes as long as the test moves it.
@Suite struct DistantHostTests {
    private static let host = URL(string: "https://api.test")!

    /// A scheduler over a transport of 2 connections per host near by and 4 far away, with 30
    /// GETs held at the stub, 2 of them on the wire; `configure` changes its configuration.
    private static func burst(configure: (inout RequestScheduler.Configuration) -> Void = { _ in })
        async -> (Harness, VirtualClock) {
        let clock = VirtualClock()
        let harness = Harness(budget: 2, distantBudget: 4, slotsReservedAboveLowPriority: 0) { _ in .hold } configure: {
            $0.clock = clock
            configure(&$0)
        }
        for index in 0..<30 { harness.api.send(Resource<User>(path: "items/\(index)")) { _ in } }
        await harness.transport.arrivals.wait(for: 2)
        return (harness, clock)
    }

    @Test func aHostWhoseFirstAnswerTookFiftyMillisecondsRunsTheDistantCount() async {
        let (harness, clock) = await Self.burst()

        clock.advance(by: 0.050)
        harness.transport.release(with: .json(userJSON))

        await harness.transport.arrivals.wait(for: 5)
        #expect(harness.scheduler.currentBudget(of: Self.host) == 4)
        #expect(harness.transport.maxInFlight == 4)
        harness.scheduler.cancelAll()
    }

    @Test func aHostThatAnswersAtOnceKeepsTheNearCount() async {
        let (harness, _) = await Self.burst()

        harness.transport.release(with: .json(userJSON))

        await harness.transport.answered.wait(for: 1)
        await harness.transport.arrivals.wait(for: 3)
        #expect(harness.scheduler.currentBudget(of: Self.host) == 2)
        #expect(harness.transport.maxInFlight == 2)
        harness.scheduler.cancelAll()
    }

    @Test func aBudgetSetByHandHoldsAtEveryDistance() async {
        let (harness, clock) = await Self.burst { $0.hostBudget = 2 }

        clock.advance(by: 0.050)
        harness.transport.release(with: .json(userJSON))

        await harness.transport.answered.wait(for: 1)
        await harness.transport.arrivals.wait(for: 3)
        #expect(harness.scheduler.currentBudget(of: Self.host) == 2)
        #expect(harness.transport.maxInFlight == 2)
        harness.scheduler.cancelAll()
    }
}

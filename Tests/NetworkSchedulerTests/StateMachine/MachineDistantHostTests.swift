import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): a host whose answers all take
/// 5 ms or more is across a network, and its budget of connections is the distant one.
@Suite struct MachineDistantHostTests {
    private static let host = "https://api.test:443"

    /// A machine of 4 connections per host near by and 6 far away, one kept above low
    /// priority, and 20 streams on a multiplexed host, with 30 GETs of distinct paths sent.
    private static func burst() -> MachineDriver {
        var driver = MachineDriver(budget: 4, lowPriorityBudget: 3, multiplexedBudget: 20, distantBudget: 6)
        for index in 0..<30 { driver.send("c\(index)", "/items/\(index)") }
        return driver
    }

    @Test func aHostWhoseAnswersTakeTimeRunsItsDistantBudget() {
        var driver = Self.burst()
        #expect(driver.started.count == 4)

        driver.advance(seconds: 0.050)
        driver.end("task 1", over: .http1)

        #expect(driver.machine.budget(ofHost: Self.host) == 6)
        #expect(driver.started.count == 7, "the answer's slot, and the two more of the distant budget")
        #expect(driver.violations.isEmpty)
    }

    @Test func aHostThatAnswersWithinFiveMillisecondsKeepsItsBudget() {
        var driver = Self.burst()

        driver.advance(seconds: 0.004)
        driver.end("task 1", over: .http1)

        #expect(driver.machine.budget(ofHost: Self.host) == 4)
        #expect(driver.started.count == 5)
    }

    @Test func aQuickAnswerBringsItBackAndTheAttemptsAboveRunOn() {
        var driver = Self.burst()
        driver.advance(seconds: 0.050)
        driver.end("task 1", over: .http1)
        #expect(driver.started.count == 7)

        driver.end("task 5", over: .http1)

        #expect(driver.machine.budget(ofHost: Self.host) == 4, "its quickest answer took no time")
        #expect(driver.started.count == 7, "5 run, over a budget of 4: nothing starts")
        for task in ["task 2", "task 3"] { driver.end(task, over: .http1) }
        #expect(driver.started.count == 8, "3 run: the next starts")
        #expect(driver.violations.isEmpty)
    }

    @Test func theLowPriorityShareScalesWithIt() {
        var driver = MachineDriver(budget: 4, lowPriorityBudget: 3, distantBudget: 8)
        for index in 0..<30 { driver.send("c\(index)", "/items/\(index)", priority: .low) }

        driver.advance(seconds: 0.050)
        driver.end("task 1", over: .http1)
        driver.send("urgent", "/me", priority: .high)

        #expect(driver.started.count == 3 + 4 + 1, "6 low-priority calls run in 8 slots, and the urgent one starts at once")
        #expect(driver.violations.isEmpty)
    }

    @Test func aMultiplexedHostRunsItsStreamsWhateverItsDistance() {
        var driver = Self.burst()

        driver.advance(seconds: 0.050)
        driver.end("task 1", over: .multiplexed(maximumStreams: nil))

        #expect(driver.machine.budget(ofHost: Self.host) == 20)
    }

    @Test func anAnswerThatSaysNothingTellsNoDistance() {
        var driver = Self.burst()

        driver.advance(seconds: 0.050)
        driver.end("task 1")

        #expect(driver.machine.budget(ofHost: Self.host) == 4)
    }

    @Test func withoutADistantBudgetTheBudgetHoldsAtEveryDistance() {
        var driver = MachineDriver(budget: 4, lowPriorityBudget: 3)
        for index in 0..<30 { driver.send("c\(index)", "/items/\(index)") }

        driver.advance(seconds: 0.050)
        driver.end("task 1", over: .http1)

        #expect(driver.machine.budget(ofHost: Self.host) == 4)
    }
}

import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Bounded waits on the machine (see `MachineDriver`): with a maximum wait for its priority, a
/// call that waited longer is promoted one level, keeping its arrival; strict order otherwise.
@Suite struct MachineAgingTests {
    /// Behind a busy slot, a low call, then (three seconds later) a normal one.
    private static func aLowCallBeforeANormalOne(maximumWaits: [RequestPriority: TimeInterval]) -> MachineDriver {
        var driver = MachineDriver(budget: 1, maximumWaits: maximumWaits)
        driver.send("blocker", "/blocker")
        driver.send("old", "/old", priority: .low)
        driver.advance(seconds: 3)
        driver.send("new", "/new")
        return driver
    }

    @Test func withoutAMaximumWaitOrderStaysStrict() {
        var driver = Self.aLowCallBeforeANormalOne(maximumWaits: [:])
        driver.advance(seconds: 3_600)
        #expect(driver.promotions.isEmpty)
        #expect(driver.endEveryAttempt() == ["blocker", "new", "old"])
    }

    @Test func aCallThatWaitedLongerThanItsMaximumGoesAheadOfLaterCallsOfItsNewRank() {
        var driver = Self.aLowCallBeforeANormalOne(maximumWaits: [.low: 5])
        driver.advance(seconds: 1.9)
        #expect(driver.promotions.isEmpty, "4.9 s of the 5 s maximum")
        driver.advance(seconds: 0.1)
        #expect(driver.promotions.map(\.path) == ["/old"] && driver.promotions.first?.to == .normal)
        #expect(driver.endEveryAttempt() == ["blocker", "old", "new"])
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aCallKeepsRisingLevelByLevelUpToCritical() {
        var driver = MachineDriver(budget: 1, maximumWaits: [.background: 1, .low: 1, .normal: 1, .high: 1])
        driver.send("blocker", "/blocker", priority: .critical)
        driver.send("sync", "/sync", priority: .background)
        for _ in 0..<6 { driver.advance(seconds: 1) }
        #expect(driver.promotions.map(\.to) == [.low, .normal, .high, .critical])
        #expect(driver.violations.isEmpty)
    }

    @Test func aPromotedCallTakesASlotOfItsRankButItsTaskKeepsItsCallersPriority() {
        // Given a low call holding the one slot low calls may use, and another waiting
        var driver = MachineDriver(budget: 2, lowPriorityBudget: 1, maximumWaits: [.low: 1])
        driver.send("running", "/running", priority: .low)
        driver.send("waiting", "/waiting", priority: .low)
        #expect(driver.started.count == 1)

        // When the waiting one outwaits its maximum, it starts in the slot kept for urgent calls
        driver.advance(seconds: 1)
        #expect(driver.started.count == 2)
        #expect(driver.taskPriorities["task 2"] == .low)
        #expect(driver.machine.lineCounts.lowPriorityRunning == 1)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aCallThatStartsLeavesItsPromotionTimerAndWaitsAfreshWhenRetried() {
        var driver = MachineDriver(budget: 1, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0), maximumWaits: [.low: 5])
        driver.send("old", "/old", priority: .low)
        driver.end("task 1", status: 503)
        #expect(driver.started == ["task 1", "task 2"], "retried at once, into a free slot")
        driver.advance(seconds: 10)
        #expect(driver.promotions.isEmpty)
        #expect(driver.violations.isEmpty)
    }
}

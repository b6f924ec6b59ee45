import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Live priority on the machine (see `MachineDriver`): a caller that changes its priority moves
/// its call in the line, keeping its arrival; a shared call follows its callers' highest; a
/// running call's task is told; a caller waiting for dependencies attaches at its new priority.
@Suite struct MachineLivePriorityTests {
    /// Behind a busy slot, normal callers `a`, `b` and `c`, in that order.
    private static func threeWaitingBehindABlocker() -> MachineDriver {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        for name in ["a", "b", "c"] { driver.send(name, "/\(name)") }
        return driver
    }

    @Test func aWaitingCallerRaisedStartsBeforeThoseItNowOutranks() {
        var driver = Self.threeWaitingBehindABlocker()
        driver.setPriority(.high, of: "c")
        #expect(driver.endEveryAttempt() == ["blocker", "c", "a", "b"])
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aWaitingCallerLoweredStartsAfterTheOthers() {
        var driver = Self.threeWaitingBehindABlocker()
        driver.setPriority(.low, of: "a")
        #expect(driver.endEveryAttempt() == ["blocker", "b", "c", "a"])
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aCallerLoweredThenRaisedAgainKeepsItsPlaceInLine() {
        var driver = Self.threeWaitingBehindABlocker()
        driver.setPriority(.background, of: "a")
        driver.setPriority(.normal, of: "a")
        #expect(driver.endEveryAttempt() == ["blocker", "a", "b", "c"])
        #expect(driver.machine.lineEntryCount == 0)
    }

    /// Behind a busy slot, a normal call, then a call shared by two low callers.
    private static func aSharedLowCallBehindANormalOne() -> MachineDriver {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.send("normal", "/normal")
        driver.send("low 1", "/shared", priority: .low)
        driver.send("low 2", "/shared", priority: .low)
        return driver
    }

    @Test func aSharedCallRisesWithAnyOfItsCallers() {
        var driver = Self.aSharedLowCallBehindANormalOne()
        driver.setPriority(.high, of: "low 2")
        let order = driver.endEveryAttempt()
        #expect(Set(order[1...2]) == ["low 1", "low 2"] && order.last == "normal")
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aSharedCallDropsBackWhenItsMostUrgentCallerLowersItself() {
        var driver = Self.aSharedLowCallBehindANormalOne()
        driver.setPriority(.high, of: "low 2")
        driver.setPriority(.background, of: "low 1")
        driver.setPriority(.low, of: "low 2")
        let order = driver.endEveryAttempt()
        #expect(order[1] == "normal" && Set(order[2...3]) == ["low 1", "low 2"])
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aRunningCallsTaskIsToldItsCallersHighestPriority() {
        var driver = MachineDriver(budget: 2)
        driver.send("a", "/shared")
        #expect(driver.taskPriorities["task 1"] == .normal)

        driver.setPriority(.high, of: "a")
        #expect(driver.taskPriorities["task 1"] == .high)
        driver.send("joiner", "/shared", priority: .critical)
        #expect(driver.taskPriorities["task 1"] == .critical)
        driver.cancel("joiner")
        #expect(driver.taskPriorities["task 1"] == .high)
        #expect(driver.brokenContracts.isEmpty)
    }

    @Test func aLowCallRaisedTakesASlotKeptForUrgentCallsAtOnce() {
        var driver = MachineDriver(budget: 2, lowPriorityBudget: 1)
        driver.send("low 0", "/low/0", priority: .low)
        driver.send("low 1", "/low/1", priority: .low)
        #expect(driver.started.count == 1)

        driver.setPriority(.high, of: "low 1")
        #expect(driver.started.count == 2)
        #expect(driver.violations.isEmpty)
    }

    @Test func aCallerWaitingForDependenciesAttachesAtItsNewPriority() {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.sendAfter(1, "dependent", priority: .low)
        driver.send("normal", "/normal")

        driver.setPriority(.high, of: "dependent")
        driver.dependencySucceeded("dependent", then: "/dependent")
        #expect(driver.endEveryAttempt() == ["blocker", "dependent", "normal"])
    }

    @Test func changingACallerThatEndedDoesNothing() {
        var driver = MachineDriver(budget: 1)
        driver.send("a", "/a")
        driver.end("task 1")
        driver.setPriority(.critical, of: "a")
        #expect(driver.outcomeCount(of: "a") == 1)
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty)
    }
}

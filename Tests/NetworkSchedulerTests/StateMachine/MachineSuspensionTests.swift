import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Suspended callers on the machine (see `MachineDriver`): a call none of whose callers may
/// start waits out of its line, keeping its place, and takes it back when one resumes; calls
/// on the wire go on.
@Suite struct MachineSuspensionTests {
    @Test func aSuspendedCallDoesNotTakeAFreeSlotUntilItIsResumed() {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.send("paused", "/paused")
        driver.setSuspended(true, "paused")

        driver.end("task 1")
        #expect(driver.started.count == 1)
        #expect(driver.machine.lineCounts.waiting == 0)

        driver.setSuspended(false, "paused")
        #expect(driver.started.count == 2)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aResumedCallTakesBackItsPlaceInLine() {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        for name in ["a", "b", "c"] { driver.send(name, "/\(name)") }
        driver.setSuspended(true, "a")
        driver.end("task 1") // b starts
        driver.setSuspended(false, "a")
        driver.end("task 2") // a, which arrived before c
        driver.end("task 3")
        driver.end("task 4")
        #expect(driver.outcomes.map(\.caller) == ["blocker", "b", "a", "c"])
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aSharedCallRunsWhileOneOfItsCallersIsNotSuspended() {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.send("hidden", "/shared", suspended: true)
        driver.send("shown", "/shared")
        driver.end("task 1")
        #expect(driver.started.count == 2)

        // The one caller not suspended leaving holds the call again.
        var other = MachineDriver(budget: 1)
        other.send("blocker", "/blocker")
        other.send("hidden", "/shared", suspended: true)
        other.send("shown", "/shared")
        other.cancel("shown")
        other.end("task 1")
        #expect(other.started.count == 1)
        #expect(driver.violations.isEmpty && other.violations.isEmpty)
    }

    @Test func aRunningCallGoesOnWhenItsCallerIsSuspended() {
        var driver = MachineDriver(budget: 1)
        driver.send("running", "/running")
        driver.setSuspended(true, "running")
        #expect(driver.cancelledTasks.isEmpty)
        driver.end("task 1")
        #expect(driver.outcome(of: "running") == .success(200))
        #expect(driver.violations.isEmpty)
    }

    @Test func aHeldCallWhoseCallersLeaveLeavesNothing() {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.send("paused", "/paused", suspended: true)
        driver.cancel("paused")
        driver.end("task 1")
        #expect(driver.outcome(of: "paused") == .failure(.cancelled))
        #expect(driver.machine.census == (0, 0, 0) && driver.machine.lineEntryCount == 0)
        #expect(driver.violations.isEmpty)
    }

    @Test func aSuspendedDependentIsHeldWhenItsDependencySucceeds() {
        var driver = MachineDriver(budget: 2)
        driver.send("login", "/login")
        driver.sendAfter(waitingFor: ["login"], "profile")
        driver.setSuspended(true, "profile")
        driver.end("task 1")
        driver.dependencySucceeded("profile", then: "/profile")
        #expect(driver.started.count == 1)

        driver.setSuspended(false, "profile")
        #expect(driver.started.count == 2)
        #expect(driver.violations.isEmpty)
    }
}

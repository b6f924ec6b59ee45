import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Priority inheritance on the machine (see `MachineDriver`): a caller waiting for dependencies
/// lends them its priority, transitively, while it waits; they drop back when it leaves.
@Suite struct MachineInheritanceTests {
    /// Behind a busy slot, a normal call, then a low `login` call.
    private static func aLowLoginBehindANormalCall() -> MachineDriver {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.send("normal", "/normal")
        driver.send("login", "/login", priority: .low)
        return driver
    }

    /// Ends the blocker, and returns the caller whose call started next.
    private static func nextAfterTheBlocker(_ driver: inout MachineDriver) -> String? {
        driver.end("task 1")
        driver.end("task 2")
        return driver.outcomes.last?.caller
    }

    @Test func aDependencyIsLiftedToItsDependentsPriority() {
        var driver = Self.aLowLoginBehindANormalCall()
        driver.sendAfter(waitingFor: ["login"], "profile", priority: .critical)
        #expect(Self.nextAfterTheBlocker(&driver) == "login")
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func theLiftReachesWhatADependencyWaitsFor() {
        var driver = Self.aLowLoginBehindANormalCall()
        driver.sendAfter(waitingFor: ["login"], "me", priority: .low)
        driver.sendAfter(waitingFor: ["me"], "screen", priority: .critical)
        #expect(driver.machine.callers[driver.callers["me"]!.slot].effectivePriority == .critical)
        #expect(Self.nextAfterTheBlocker(&driver) == "login")
        #expect(driver.violations.isEmpty)
    }

    @Test func aDependencyDropsBackWhenItsDependentLeaves() {
        var driver = Self.aLowLoginBehindANormalCall()
        driver.sendAfter(waitingFor: ["login"], "me", priority: .low)
        driver.sendAfter(waitingFor: ["me"], "screen", priority: .critical)
        driver.cancel("screen")
        #expect(Self.nextAfterTheBlocker(&driver) == "normal")
        #expect(driver.violations.isEmpty)
    }

    @Test func aDependentRaisedWhileItWaitsLiftsWhatItWaitsFor() {
        var driver = Self.aLowLoginBehindANormalCall()
        driver.sendAfter(waitingFor: ["login"], "profile", priority: .low)
        driver.setPriority(.high, of: "profile")
        #expect(Self.nextAfterTheBlocker(&driver) == "login")
        #expect(driver.violations.isEmpty)
    }

    @Test func aDependentLessUrgentThanItsDependencyChangesNothing() {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.send("normal", "/normal")
        driver.send("login", "/login", priority: .high)
        driver.sendAfter(waitingFor: ["login"], "prefetch", priority: .background)
        #expect(Self.nextAfterTheBlocker(&driver) == "login")
        #expect(driver.violations.isEmpty)
    }

    @Test func aRunningDependencysTaskIsToldItsLiftAndItsDropBack() {
        var driver = MachineDriver(budget: 2)
        driver.send("upload", "/upload", priority: .background)
        driver.sendAfter(waitingFor: ["upload"], "post", priority: .critical)
        #expect(driver.taskPriorities["task 1"] == .critical)

        driver.dependencyFailed("post", with: .cancelled)
        #expect(driver.taskPriorities["task 1"] == .background)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aDependentWhoseDependenciesSucceededLendsNothingMore() {
        var driver = MachineDriver(budget: 1)
        driver.send("login", "/login", priority: .low)
        driver.send("other", "/other", priority: .low)
        driver.sendAfter(waitingFor: ["login", "other"], "screen", priority: .critical)
        driver.end("task 1")
        driver.dependencySucceeded("screen", then: "/screen")
        // Still waiting for `other`, which it still lifts.
        #expect(driver.taskPriorities["task 2"] == .critical)

        driver.end("task 2")
        driver.dependencySucceeded("screen", then: "/screen")
        #expect(driver.machine.callers[driver.callers["screen"]!.slot].dependencies.isEmpty)
        #expect(driver.violations.isEmpty)
    }
}

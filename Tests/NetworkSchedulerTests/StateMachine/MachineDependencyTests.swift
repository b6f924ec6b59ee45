import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): dependencies gate a caller: built only
/// once all succeed, never sent when one fails.
@Suite struct MachineDependencyTests {
    @Test func aDependentWaitsForEveryDependencyAndIsBuiltOnlyThen() {
        var driver = MachineDriver()
        driver.sendAfter(2, "profile")
        #expect(driver.started.isEmpty)

        driver.dependencySucceeded("profile")
        #expect(driver.started.isEmpty)
        driver.dependencySucceeded("profile")
        #expect(driver.started == ["task 1"])
        #expect(driver.violations.isEmpty)
    }

    @Test func aDependentWhoseDependencyFailedEndsOnceWithoutTouchingTheNetwork() {
        var driver = MachineDriver()
        driver.sendAfter(2, "profile")
        driver.dependencyFailed("profile", with: .timedOut)
        driver.dependencySucceeded("profile")
        driver.dependencyFailed("profile", with: .cancelled)

        #expect(driver.started.isEmpty)
        #expect(driver.outcomeCount(of: "profile") == 1)
        #expect(driver.machine.census == (0, 0, 0))
    }

    @Test func aDependentCancelledWhileWaitingIsNeverBuilt() {
        var driver = MachineDriver()
        driver.sendAfter(1, "profile")
        driver.cancel("profile")
        driver.dependencySucceeded("profile")
        #expect(driver.started.isEmpty)
        #expect(driver.outcomeCount(of: "profile") == 1)
    }

    // MARK: - The slot a dependency frees

    /// The path of the call that started as `task`.
    private static func path(of task: String, in driver: MachineDriver) -> String? {
        driver.starts[task]?.request.prepared.urlRequest.url?.path
    }

    @Test func aCriticalDependentTakesTheSlotItsDependencyFreedBeforeAWaitingNormalCall() {
        var driver = MachineDriver(budget: 1)
        driver.send("prefetch", "/prefetch", priority: .background)
        driver.send("normal", "/normal")
        driver.sendAfter(waitingFor: ["prefetch"], "urgent", priority: .critical)
        #expect(driver.started == ["task 1"])

        driver.end("task 1")
        #expect(driver.started == ["task 1"]) // the slot waits for the dependent's request
        driver.dependencySucceeded("urgent", then: "/urgent")
        #expect(driver.started == ["task 1", "task 2"])
        #expect(Self.path(of: "task 2", in: driver) == "/urgent")

        driver.end("task 2")
        #expect(Self.path(of: "task 3", in: driver) == "/normal")
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aDependentThatLeavesGivesTheKeptSlotToTheLine() {
        for leave in ["fails", "is cancelled"] {
            var driver = MachineDriver(budget: 1)
            driver.send("login", "/login")
            driver.send("normal", "/normal")
            driver.sendAfter(waitingFor: ["login"], "urgent", priority: .high)
            driver.end("task 1")
            #expect(driver.started == ["task 1"])

            if leave == "fails" { driver.dependencyFailed("urgent", with: .timedOut) } else { driver.cancel("urgent") }

            #expect(Self.path(of: "task 2", in: driver) == "/normal", "when the dependent \(leave)")
            #expect(driver.violations.isEmpty, "when the dependent \(leave)")
        }
    }

    @Test func noSlotIsKeptForADependentNoMoreUrgentThanTheLineOrStillWaiting() {
        // As urgent as the call waiting: that one arrived first and takes the slot.
        var equal = MachineDriver(budget: 1)
        equal.send("login", "/login")
        equal.send("normal", "/normal")
        equal.sendAfter(waitingFor: ["login"], "dependent")
        equal.end("task 1")
        #expect(Self.path(of: "task 2", in: equal) == "/normal")

        // Waiting for something else too: not released by this call.
        var twoDependencies = MachineDriver(budget: 1)
        twoDependencies.send("login", "/login")
        twoDependencies.send("normal", "/normal")
        twoDependencies.sendAfter(2, waitingFor: ["login"], "dependent", priority: .critical)
        twoDependencies.end("task 1")
        #expect(Self.path(of: "task 2", in: twoDependencies) == "/normal")

        // A failed call releases no dependent.
        var failed = MachineDriver(budget: 1)
        failed.send("login", "/login")
        failed.send("normal", "/normal")
        failed.sendAfter(waitingFor: ["login"], "dependent", priority: .critical)
        failed.end("task 1", status: 500)
        #expect(Self.path(of: "task 2", in: failed) == "/normal")
        #expect(equal.violations.isEmpty && twoDependencies.violations.isEmpty && failed.violations.isEmpty)
    }
}

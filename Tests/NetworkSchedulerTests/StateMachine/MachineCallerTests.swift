import Foundation
import Testing
@testable import NetworkScheduler

/// The machine's callers, driven synchronously: each ends exactly once, identical callers share
/// one call, cancellation is per caller, and dependencies gate the request.
@Suite struct MachineCallerTests {
    @Test func aCallerEndsOnceWithItsCallsOutcome() throws {
        var driver = MachineDriver()
        driver.send("a")
        #expect(driver.started == ["task 1"])

        driver.end("task 1", status: 200)
        driver.end("task 1", status: 500) // a late second report changes nothing

        #expect(driver.outcomes.map(\.caller) == ["a"])
        #expect(try driver.outcome(of: "a")?.get() == 200)
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty)
    }

    @Test func identicalCallersShareOneAttemptAndEachGetsTheOutcome() {
        var driver = MachineDriver()
        driver.send("a")
        let attachment = driver.send("b")
        driver.send("c", "/users/2")

        #expect({ if case .joined = attachment { true } else { false } }())
        #expect(driver.started == ["task 1", "task 2"])
        driver.end("task 1")
        #expect(Set(driver.outcomes.map(\.caller)) == ["a", "b"])
        #expect(driver.violations.isEmpty)
    }

    @Test func aCallerWhoseRequestIsNotSharedMakesItsOwnCall() {
        var driver = MachineDriver()
        driver.send("a", shared: false)
        driver.send("b", shared: false)
        #expect(driver.started == ["task 1", "task 2"])
        #expect(driver.machine.registry.isEmpty)
    }

    @Test func cancellingOneCallerOfASharedCallLeavesTheCallRunningForTheOthers() throws {
        var driver = MachineDriver()
        driver.send("a")
        driver.send("b")

        driver.cancel("a")

        #expect(driver.outcome(of: "a").map { if case .failure(.cancelled) = $0 { true } else { false } } == true)
        #expect(driver.cancelledTasks.isEmpty)
        driver.end("task 1")
        #expect(try driver.outcome(of: "b")?.get() == 200)
        #expect(driver.outcomeCount(of: "a") == 1)
        #expect(driver.violations.isEmpty)
    }

    @Test func cancellingTheLastCallerCancelsTheTaskAndKeepsItsSlotUntilTheTaskEnds() {
        var driver = MachineDriver(budget: 1)
        driver.send("a")
        driver.send("b", "/users/2")

        driver.cancel("a")

        #expect(driver.cancelledTasks == ["task 1"])
        #expect(driver.started == ["task 1"], "the slot is free only once the task has ended")
        #expect(driver.machine.census.calls == 1 && driver.machine.census.registered == 1)
        // A new identical request does not join the abandoned call.
        driver.send("c")
        #expect(driver.machine.census.calls == 2)

        driver.end("task 1", error: .cancelled)
        #expect(driver.started == ["task 1", "task 2"])
        #expect(driver.outcomeCount(of: "a") == 1)
        #expect(driver.violations.isEmpty)
    }

    @Test func cancellingAWaitingCallerTakesItsCallOutOfTheLineWithoutANetworkCall() {
        var driver = MachineDriver(budget: 1)
        driver.send("a")
        driver.send("b", "/users/2")

        driver.cancel("b")
        driver.end("task 1")

        #expect(driver.started == ["task 1"])
        #expect(driver.machine.lineEntryCount == 0)
        #expect(driver.machine.census == (0, 0, 0))
    }

    @Test func cancellingACallerTwiceOrAfterItEndedChangesNothing() {
        var driver = MachineDriver()
        driver.send("a")
        driver.end("task 1")
        driver.cancel("a")
        driver.cancel("a")
        #expect(driver.outcomeCount(of: "a") == 1)
    }

    @Test func aGroupsCallersAreCancelledInOneEventAndOnlyThey() throws {
        var driver = MachineDriver(budget: 1)
        driver.send("other")
        for index in 0..<10 { driver.send("screen \(index)", "/feed/\(index)") }
        driver.send("shared", "/feed/3")

        driver.cancel("screen 0", "screen 1", "screen 2", "screen 3", "screen 4", "screen 5", "screen 6", "screen 7",
                      "screen 8", "screen 9")

        #expect(driver.outcomes.count == 10)
        driver.end("task 1")
        #expect(driver.started == ["task 1", "task 2"], "the call the group shared with another caller still runs")
        driver.end("task 2")
        #expect(try driver.outcome(of: "shared")?.get() == 200)
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty)
    }

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
}

import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): cancellation is per caller: the call
/// goes on while others want it, and a call nobody wants leaves its line or has its task cancelled.
@Suite struct MachineCancellationTests {
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

    /// The chaos soak trapped here: a stream whose reader left kept getting bytes (the
    /// transport's answer was on its way), and the progress they made named callers that had
    /// ended, whose slots were gone.
    @Test func progressOfAnAttemptWhoseCallersLeftTellsNobody() {
        var driver = MachineDriver()
        driver.send("a")
        driver.send("b")
        driver.cancel("a")
        driver.cancel("b")
        #expect(driver.cancelledTasks == ["task 1"])

        #expect(driver.progressed("task 1") == [])
        driver.end("task 1", error: .cancelled)
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

    @Test func aLineOfCancelledCallsCompactsWhileItsHostStaysBusy() {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        for index in 0..<1_000 {
            driver.send("c\(index)", "/\(index)")
            driver.cancel("c\(index)")
        }
        #expect(driver.machine.lineEntryCount <= 64)
        #expect(driver.machine.census == (1, 1, 1))
    }
}

extension MachineCancellationTests {
    @Test func everyCallerCancelledInOnePassLeavesNothing() {
        // Given callers running, waiting, joined, and waiting for a dependency
        var driver = MachineDriver(budget: 1)
        driver.send("running", "/running")
        driver.send("waiting", "/waiting")
        driver.send("joiner", "/waiting")
        driver.sendAfter(waitingFor: ["running"], "dependent")

        // When every caller is cancelled at once, as a logout does
        driver.perform(driver.machine.cancel(driver.machine.callerIDs, now: driver.now))

        // Then each ended once, the running task is cancelled, and nothing is left
        #expect(Set(driver.outcomes.map(\.caller)) == ["running", "waiting", "joiner", "dependent"])
        #expect(driver.outcomes.allSatisfy { $0.result.failure == .cancelled })
        #expect(driver.cancelledTasks == ["task 1"])
        #expect(driver.machine.census == (0, 0, 0) && driver.machine.lineEntryCount == 0)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }
}

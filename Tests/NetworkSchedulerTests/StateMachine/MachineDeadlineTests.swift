import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): every attempt has a deadline the
/// machine owns, on one timer, which a test moves.
@Suite struct MachineDeadlineTests {
    @Test func anAttemptPastItsDeadlineEndsAsTimedOutCancelsItsTaskAndFreesItsSlot() {
        var driver = MachineDriver(budget: 1)
        driver.send("slow", "/slow", timeout: 2)
        driver.send("next", "/next")
        #expect(driver.armedFor == driver.now + 2_000_000_000)

        driver.advance(seconds: 1.9)
        #expect(driver.outcomes.isEmpty)
        driver.advance(seconds: 0.2)

        #expect(driver.outcome(of: "slow").map { if case .failure(.timedOut) = $0 { true } else { false } } == true)
        #expect(driver.cancelledTasks == ["task 1"])
        #expect(driver.started == ["task 1", "task 2"])
        // The transport reports the cancelled task later: nothing changes.
        driver.end("task 1", error: .cancelled)
        #expect(driver.outcomeCount(of: "slow") == 1)
        #expect(driver.machine.lineCounts.running == 1)
        #expect(driver.violations.isEmpty)
    }

    @Test func theTimerIsArmedForTheEarliestDeadlineOnly() {
        var driver = MachineDriver(budget: 3)
        driver.send("a", "/a", timeout: 10)
        let armedForA = driver.armedFor
        driver.send("b", "/b", timeout: 20)
        #expect(driver.armedFor == armedForA, "a later deadline does not re-arm the timer")
        driver.send("c", "/c", timeout: 5)
        #expect(driver.armedFor == driver.now + 5_000_000_000)

        driver.end("task 3")
        driver.advance(seconds: 5)
        #expect(driver.outcomes.count == 1, "the timer fired with nothing due, and re-armed for a")
        #expect(driver.armedFor == armedForA)
        #expect(driver.violations.isEmpty)
    }

    @Test func progressCountsARunningAttemptsDeadlineAgainAndNamesItsCallers() {
        var driver = MachineDriver(budget: 1)
        driver.send("upload", "/avatar", method: "POST", timeout: 2)
        driver.send("double tap", "/avatar", method: "POST", timeout: 2)
        driver.send("next", "/next")

        driver.advance(seconds: 1.5)
        #expect(driver.progressed("task 1") == ["double tap", "upload"])
        driver.advance(seconds: 1.5)
        #expect(driver.outcomes.isEmpty, "3 s after its start, but 1.5 s after its last progress")

        driver.advance(seconds: 0.6)
        #expect(driver.outcome(of: "upload").map { if case .failure(.timedOut) = $0 { true } else { false } } == true)
        #expect(driver.cancelledTasks == ["task 1"])
        #expect(driver.started == ["task 1", "task 2"], "its slot went to the next call")
        #expect(driver.progressed("task 1").isEmpty, "an attempt that ended tells no one")
        #expect(driver.violations.isEmpty)
    }

    @Test func aCallerJoiningAnUploadUnderWayIsToldItsLastStepOfThisAttemptOnly() {
        var driver = MachineDriver(budget: 1)
        driver.send("upload", "/avatar", method: "POST")
        driver.send("before any step", "/avatar", method: "POST")
        #expect(driver.toldOnJoining.isEmpty, "nothing went out yet")

        _ = driver.progressed("task 1", to: TransferProgress(bytesSent: 10, bytesExpectedToSend: 40))
        _ = driver.progressed("task 1", to: TransferProgress(bytesSent: 30, bytesExpectedToSend: 40))
        driver.send("double tap", "/avatar", method: "POST")
        #expect(driver.toldOnJoining.map(\.caller) == ["double tap"])
        #expect(driver.toldOnJoining.map(\.bytesSent) == [30])
        #expect(driver.progressed("task 1") == ["before any step", "double tap", "upload"])
        #expect(driver.violations.isEmpty)
    }
}

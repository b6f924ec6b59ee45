import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Each request's own deadline on the machine (see `MachineDriver`): it covers every wait and
/// every attempt, and ends the caller at the deadline, wherever it is.
@Suite struct MachineRequestDeadlineTests {
    @Test func aCallerWaitingInItsLineEndsAtItsDeadlineNotWhenASlotFrees() {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.send("hurried", "/hurried", deadline: 2)
        driver.advance(seconds: 1.9)
        #expect(driver.outcome(of: "hurried") == nil)
        driver.advance(seconds: 0.1)
        #expect(driver.outcome(of: "hurried") == .failure(.deadlineExceeded))
        #expect(driver.machine.lineCounts.waiting == 0)
        driver.end("task 1")
        #expect(driver.started.count == 1) // it never touches the network
        #expect(driver.violations.isEmpty && driver.machine.census == (0, 0, 0))
    }

    @Test func theDeadlineCoversEveryAttemptAndBackoff() {
        var driver = MachineDriver(budget: 1, retryPolicy: RetryPolicy(maxAttempts: 5))
        driver.send("caller", "/flaky", deadline: 2.5)
        driver.end("task 1", status: 503, headers: ["Retry-After": "1"])
        driver.advance(seconds: 1) // the backoff ends: a second attempt
        #expect(driver.started.count == 2)
        driver.advance(seconds: 1.5)
        #expect(driver.outcome(of: "caller") == .failure(ServiceError.deadlineExceeded))
        #expect(driver.cancelledTasks == ["task 2"])
        driver.end("task 2", error: ServiceError.cancelled)
        #expect(driver.violations.isEmpty && driver.machine.census == (0, 0, 0))
    }

    @Test func aJoinerPastItsDeadlineLeavesTheSharedCallRunning() {
        var driver = MachineDriver(budget: 1)
        driver.send("patient", "/shared")
        driver.send("hurried", "/shared", deadline: 1)
        driver.advance(seconds: 1)
        #expect(driver.outcome(of: "hurried") == .failure(.deadlineExceeded))
        #expect(driver.cancelledTasks.isEmpty)
        driver.end("task 1")
        #expect(driver.outcome(of: "patient") == .success(200))
        #expect(driver.violations.isEmpty)
    }

    @Test func theDeadlineCountsTheWaitForDependencies() {
        var driver = MachineDriver(budget: 1)
        driver.send("login", "/login")
        driver.sendAfter(waitingFor: ["login"], "profile", deadline: 1)
        driver.advance(seconds: 1)
        #expect(driver.outcome(of: "profile") == .failure(.deadlineExceeded))
        driver.end("task 1")
        #expect(driver.violations.isEmpty && driver.machine.census == (0, 0, 0))
    }

    @Test func aCallerThatEndsInTimeTakesItsDeadlineAway() {
        var driver = MachineDriver(budget: 1)
        driver.send("quick", "/quick", deadline: 5)
        driver.end("task 1")
        #expect(driver.machine.timers.isEmpty)
        driver.advance(seconds: 10)
        #expect(driver.outcomeCount(of: "quick") == 1)
        #expect(driver.violations.isEmpty)
    }
}

/// A failed attempt, or one the machine ends at its deadline, frees its slot at once; its call
/// then waits for the verdict on it, which the retry policy reaches beside the transport, once
/// for each attempt whose call still wants it.
@Suite struct MachineVerdictTests {
    @Test func aFailureFreesItsSlotAtOnceAndItsCallWaitsForItsVerdict() {
        var driver = MachineDriver(budget: 1, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0))
        driver.judgesAtOnce = false
        driver.send("failing", "/failing")
        driver.send("next", "/next")
        driver.end("task 1", status: 500)

        #expect(driver.started == ["task 1", "task 2"]) // the slot went to the next call
        #expect(driver.pendingVerdicts.map(\.id) == [driver.attempts["task 1"]!])
        #expect(driver.pendingVerdicts.map(\.outcome).map { $0.map(\.statusCode) } == [.success(500)])
        #expect(driver.outcome(of: "failing") == nil)

        // The verdict retries it, in its line behind the call that took the slot.
        driver.judge(driver.pendingVerdicts[0])
        driver.end("task 2")
        driver.end("task 3")
        #expect(driver.started == ["task 1", "task 2", "task 3"])
        #expect(driver.outcome(of: "failing") == .success(200))
        #expect(driver.verdictsReached == 1)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty && driver.machine.census == (0, 0, 0))
    }

    @Test func anAnswerOrACancellationIsJudgedAtOnce() {
        var driver = MachineDriver(budget: 2)
        driver.judgesAtOnce = false
        driver.send("answered", "/answered")
        driver.send("cancelled", "/cancelled")
        driver.end("task 1", status: 204)
        driver.end("task 2", error: .cancelled)

        #expect(driver.pendingVerdicts.isEmpty)
        #expect(driver.outcome(of: "answered") == .success(204))
        #expect(driver.outcome(of: "cancelled") == .failure(.cancelled))
        #expect(driver.verdictsReached == 0)
    }

    @Test func theLateFailureOfAnAttemptEndedAtItsDeadlineWantsNoSecondVerdict() {
        var driver = MachineDriver(budget: 1, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0))
        driver.judgesAtOnce = false
        driver.send("slow", "/slow", timeout: 1)
        driver.advance(seconds: 1)
        #expect(driver.pendingVerdicts.count == 1)

        driver.end("task 1", status: 503)
        driver.end("task 1", error: .noConnection(URLError(.networkConnectionLost)))

        #expect(driver.pendingVerdicts.count == 1)
        driver.judge(driver.pendingVerdicts[0])
        driver.end("task 2")
        #expect(driver.outcome(of: "slow") == .success(200))
        #expect(driver.verdictsReached == 1)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty && driver.machine.census == (0, 0, 0))
    }

    @Test func theFailureOfACallWhoseCallersAllLeftWantsNoVerdict() {
        var driver = MachineDriver(budget: 1)
        driver.judgesAtOnce = false
        driver.send("gone", "/gone")
        driver.cancel("gone")
        driver.end("task 1", status: 503)

        #expect(driver.pendingVerdicts.isEmpty)
        #expect(driver.outcomeCount(of: "gone") == 1)
        #expect(driver.violations.isEmpty && driver.machine.census == (0, 0, 0))
    }

    @Test func anExpiredAttemptFreesItsSlotAtOnceAndItsCallWaitsForTheVerdict() {
        var driver = MachineDriver(budget: 1, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0))
        driver.judgesAtOnce = false
        driver.send("slow", "/slow", timeout: 1)
        driver.send("next", "/next")
        driver.advance(seconds: 1)

        #expect(driver.cancelledTasks == ["task 1"])
        #expect(driver.started == ["task 1", "task 2"]) // the slot went to the next call
        #expect(driver.pendingVerdicts.map(\.id) == [driver.attempts["task 1"]!])
        #expect(driver.outcome(of: "slow") == nil)

        // A late report of the ended attempt changes nothing; the verdict retries it.
        driver.end("task 1", error: .cancelled)
        #expect(driver.outcome(of: "slow") == nil)
        driver.judge(driver.pendingVerdicts[0])
        driver.end("task 2")
        #expect(driver.started == ["task 1", "task 2", "task 3"])
        driver.end("task 3")
        #expect(driver.outcome(of: "slow") == .success(200))
        #expect(driver.violations.isEmpty && driver.machine.census == (0, 0, 0))
    }

    @Test func aVerdictThatGivesUpDeliversTheTimeout() {
        var driver = MachineDriver(budget: 1)
        driver.send("slow", "/slow", timeout: 1)
        driver.advance(seconds: 1)
        #expect(driver.outcome(of: "slow") == .failure(.timedOut))
        #expect(driver.violations.isEmpty && driver.machine.census == (0, 0, 0))
    }

    @Test func aCallWhoseCallersLeftWhileItsVerdictCameLeavesNothing() {
        var driver = MachineDriver(budget: 1, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0))
        driver.judgesAtOnce = false
        driver.send("slow", "/slow", timeout: 1)
        driver.advance(seconds: 1)
        driver.cancel("slow")
        #expect(driver.outcome(of: "slow") == .failure(.cancelled))

        driver.judge(driver.pendingVerdicts[0])
        #expect(driver.started == ["task 1"])
        #expect(driver.violations.isEmpty && driver.machine.census == (0, 0, 0))
        #expect(driver.machine.timers.isEmpty)
    }
}

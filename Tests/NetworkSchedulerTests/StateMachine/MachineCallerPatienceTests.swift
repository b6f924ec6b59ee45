import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Callers of other timeouts and retry policies share one call, and each is held to its own
/// (contract 17): the attempt lasts as long as its most patient caller's timeout, a less patient
/// caller ends at its own unless its own policy would try again, and after a failure each caller
/// whose policy gives up ends while the call is tried again for the others.
@Suite struct MachineCallerPatienceTests {
    /// A submission for `/users/1` that retries by `policy`: a caller's own policy.
    static func retrying(_ policy: RetryPolicy) -> Submission {
        MachineDriver.submission(MachineDriver.request("GET", "https://api.test/users/1", shared: true, timeout: 60).0,
                                 retryPolicy: policy)
    }

    @Test func aLessPatientJoinerEndsAtItsOwnTimeoutWhileTheCallRunsOnForTheOther() throws {
        var driver = MachineDriver()
        driver.send("patient", timeout: 30)
        driver.send("hasty", timeout: 1)
        #expect(driver.started.count == 1, "one call for both")

        driver.advance(seconds: 0.9)
        #expect(driver.outcomes.isEmpty)
        driver.advance(seconds: 0.1)
        #expect(driver.outcome(of: "hasty")?.failure == .timedOut)
        #expect(driver.outcome(of: "patient") == nil)
        #expect(driver.cancelledTasks.isEmpty, "the attempt runs on for the patient caller")

        driver.advance(seconds: 3)
        driver.end("task 1")
        #expect(try driver.outcome(of: "patient")?.get() == 200)
        #expect(driver.started.count == 1)
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aMorePatientJoinerKeepsTheAttemptPastTheFirstCallersTimeout() throws {
        var driver = MachineDriver()
        driver.send("hasty", timeout: 1)
        driver.advance(seconds: 0.5)
        driver.send("patient", timeout: 30)

        driver.advance(seconds: 0.5)
        #expect(driver.outcome(of: "hasty")?.failure == .timedOut, "at its own deadline, counted from the attempt's start")
        #expect(driver.cancelledTasks.isEmpty)

        driver.advance(seconds: 20)
        driver.end("task 1")
        #expect(try driver.outcome(of: "patient")?.get() == 200, "20 s in: within its own 30 s")
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func callersOfOneTimeoutJoiningOneAfterAnotherEachEndAtTheirOwn() {
        var driver = MachineDriver()
        driver.send("first", timeout: 10)
        driver.advance(seconds: 1)
        driver.send("second", timeout: 10)
        driver.advance(seconds: 1)
        driver.send("third", timeout: 10)

        driver.advance(seconds: 8)
        #expect(driver.outcome(of: "first")?.failure == .timedOut, "10 s after the attempt began")
        #expect(driver.outcome(of: "second") == nil && driver.cancelledTasks.isEmpty)
        driver.advance(seconds: 1)
        #expect(driver.outcome(of: "second")?.failure == .timedOut, "10 s after it joined")
        #expect(driver.outcome(of: "third") == nil)
        driver.advance(seconds: 1)
        #expect(driver.outcome(of: "third")?.failure == .timedOut)
        #expect(driver.cancelledTasks == ["task 1"], "the last one's deadline is the attempt's")
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func progressMovesEveryCallersPatienceLater() {
        var driver = MachineDriver()
        driver.send("patient", timeout: 30)
        driver.send("hasty", timeout: 2)
        driver.advance(seconds: 1.5)
        _ = driver.progressed("task 1")

        driver.advance(seconds: 1.9)
        #expect(driver.outcome(of: "hasty") == nil, "2 s from the last progress, not from the start")
        driver.advance(seconds: 0.1)
        #expect(driver.outcome(of: "hasty")?.failure == .timedOut)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func theAttemptEndsAtItsMostPatientCallersTimeout() {
        var driver = MachineDriver()
        driver.send("hasty", timeout: 1)
        driver.send("patient", timeout: 5)

        driver.advance(seconds: 4.9)
        #expect(driver.cancelledTasks.isEmpty)
        driver.advance(seconds: 0.1)
        #expect(driver.cancelledTasks == ["task 1"])
        #expect(driver.outcome(of: "patient")?.failure == .timedOut)
        #expect(driver.outcomeCount(of: "hasty") == 1)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aLessPatientCallerWhosePolicyRetriesWaitsOnAsOnARetryOfItsOwn() {
        var driver = MachineDriver()
        driver.send("patient", timeout: 30)
        // Three attempts of a second each, with no backoff between them: alone, it would end at 3 s.
        driver.send("hasty", submission: Self.retrying(RetryPolicy(maxAttempts: 3, baseDelay: 0)), timeout: 1)

        driver.advance(seconds: 1)
        driver.advance(seconds: 1)
        #expect(driver.outcome(of: "hasty") == nil, "its policy tries again twice")
        driver.advance(seconds: 0.9)
        #expect(driver.outcome(of: "hasty") == nil)
        driver.advance(seconds: 0.1)
        #expect(driver.outcome(of: "hasty")?.failure == .timedOut, "after its third second-long wait")
        #expect(driver.started.count == 1 && driver.cancelledTasks.isEmpty, "all on the one attempt the other waits for")

        driver.end("task 1")
        #expect(driver.outcomeCount(of: "patient") == 1)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test(arguments: [false, true])
    func eachCallerIsRetriedByItsOwnPolicy(retryingCallerFirst: Bool) throws {
        var driver = MachineDriver()
        let persistent = Self.retrying(RetryPolicy(maxAttempts: 3, baseDelay: 1))
        if retryingCallerFirst {
            driver.send("persistent", submission: persistent)
            driver.send("once")
        } else {
            driver.send("once")
            driver.send("persistent", submission: persistent)
        }

        driver.end("task 1", status: 503)
        #expect(try driver.outcome(of: "once")?.get() == 503, "its policy gives up: it ends where it would have alone")
        #expect(driver.outcome(of: "persistent") == nil)

        driver.advance(seconds: 1)
        #expect(driver.started == ["task 1", "task 2"])
        driver.end("task 2")
        #expect(try driver.outcome(of: "persistent")?.get() == 200)
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aJoinerCountsItsAttemptsFromTheFirstItWaitedOn() throws {
        var driver = MachineDriver()
        let twice = Self.retrying(RetryPolicy(maxAttempts: 2, baseDelay: 0))
        driver.send("first", submission: twice)
        driver.end("task 1", status: 503)
        #expect(driver.started == ["task 1", "task 2"], "no backoff: tried again at once")

        driver.send("joiner", submission: twice)
        driver.end("task 2", status: 503)
        #expect(try driver.outcome(of: "first")?.get() == 503, "its second attempt of two")
        #expect(driver.outcome(of: "joiner") == nil, "its first of two")

        driver.end("task 3")
        #expect(try driver.outcome(of: "joiner")?.get() == 200)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func whenEveryCallerGivesUpTheCallEndsOnce() throws {
        var driver = MachineDriver()
        driver.send("a")
        driver.send("b")
        driver.end("task 1", status: 503)
        #expect(try driver.outcome(of: "a")?.get() == 503)
        #expect(try driver.outcome(of: "b")?.get() == 503)
        #expect(driver.started.count == 1)
        #expect(driver.machine.census == (0, 0, 0))
    }

    @Test func aCallWaitsForTheLongestRetryAmongItsCallers() {
        #expect(AttemptVerdict.Retry.longest(of: [.after(1), .backoff(upTo: 4), .after(2)]) == .backoff(upTo: 4))
        #expect(AttemptVerdict.Retry.longest(of: [.backoff(upTo: 0.5), .after(2)]) == .after(2))
        #expect(AttemptVerdict.Retry.longest(of: []) == nil)
    }
}

import Foundation
import Testing
@testable import NetworkScheduler

/// Attempts, driven synchronously with a clock the test moves: deadlines, backoff, Retry-After
/// and a token refresh are timers and actions, so no test waits for real time.
@Suite struct MachineAttemptTests {
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

    @Test func aRetryableAnswerIsTriedAgainAfterItsBackoffWithoutHoldingASlot() throws {
        var driver = MachineDriver(budget: 1, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 1))
        driver.send("a", "/a")
        driver.send("b", "/b")

        driver.end("task 1", status: 503)
        #expect(driver.outcomes.isEmpty)
        #expect(driver.started == ["task 1", "task 2"], "the backing-off call gave its slot to the next")

        driver.end("task 2")
        driver.advance(seconds: 1) // base 1 s × jitter, for the first retry
        #expect(driver.started == ["task 1", "task 2", "task 3"])
        driver.end("task 3", status: 503)
        driver.advance(seconds: 2) // 2 s × jitter
        driver.end("task 4", status: 503)

        #expect(try driver.outcome(of: "a")?.get() == 503, "three attempts, then the answer")
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty)
    }

    /// Retry-After in seconds, or as an HTTP-date counted from the date the event brings (the
    /// machine reads no clock).
    @Test(arguments: [false, true])
    func retryAfterSetsTheBackoff(givenAsADate: Bool) {
        var driver = MachineDriver(retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.1))
        driver.send("a")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        let retryAfter = givenAsADate ? formatter.string(from: driver.date.addingTimeInterval(7)) : "7"

        driver.end("task 1", status: 503, headers: ["Retry-After": retryAfter])

        driver.advance(seconds: 6.9)
        #expect(driver.started.count == 1)
        driver.advance(seconds: 0.2)
        #expect(driver.started.count == 2)
    }

    @Test func aCallerCancelledDuringABackoffEndsAtOnceAndTheCallIsNotTriedAgain() {
        var driver = MachineDriver(retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 1))
        driver.send("a")
        driver.end("task 1", status: 500)
        driver.cancel("a")

        driver.advance(seconds: 10)
        #expect(driver.started.count == 1)
        #expect(driver.outcomeCount(of: "a") == 1)
        #expect(driver.machine.timers.isEmpty)
        #expect(driver.violations.isEmpty)
    }

    @Test func aPostIsNotRetriedUnlessItCarriesAnIdempotencyKey() throws {
        var driver = MachineDriver(retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 1))
        driver.send("post", "/posts", method: "POST")
        driver.end("task 1", status: 503)
        #expect(try driver.outcome(of: "post")?.get() == 503)
    }

    @Test func a401RefreshesTheTokenOnceThenReplaysTheCall() {
        var driver = MachineDriver()
        let authenticator = TokenAuthenticator(token: "old") { _ in "new" }
        let (request, _) = MachineDriver.request("GET", "https://api.test/users/1", shared: true, timeout: 60)
        let submission = MachineDriver.submission(request, authenticator: authenticator)
        driver.send("a", submission: submission)
        driver.send("b", submission: submission)

        driver.end("task 1", status: 401)
        #expect(driver.refreshes.count == 1)
        #expect(driver.outcomes.isEmpty)

        driver.tokenRefreshed(driver.refreshes[0])
        #expect(driver.started == ["task 1", "task 2"])
        driver.end("task 2", status: 401)
        #expect(driver.refreshes.isEmpty, "a call is replayed with a new token once")
        #expect(driver.outcomes.count == 2 && driver.outcomes.allSatisfy { (try? $0.result.get()) == 401 })
        #expect(driver.violations.isEmpty)
    }

    @Test func aFailedRefreshFailsTheCallsCallers() {
        var driver = MachineDriver()
        let authenticator = TokenAuthenticator(token: "old") { _ in "new" }
        let (request, _) = MachineDriver.request("GET", "https://api.test/users/1", shared: true, timeout: 60)
        driver.send("a", submission: MachineDriver.submission(request, authenticator: authenticator))
        driver.end("task 1", status: 401)

        driver.tokenRefreshed(driver.refreshes[0], failing: .authenticationFailed(cause: .timedOut))

        #expect(driver.outcome(of: "a").map { if case .failure(.authenticationFailed) = $0 { true } else { false } } == true)
        #expect(driver.machine.census == (0, 0, 0))
    }
}

import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): retries wait out their backoff without
/// holding a slot; Retry-After sets it; only requests safe to repeat are retried.
@Suite struct MachineRetryTests {
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
}

import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Each host's health on the machine (see `MachineDriver`): a 429 or 503 with `Retry-After`,
/// or failures in a row, pause the whole host, then one probe goes through before it opens.
@Suite struct MachineHostHealthTests {
    static let lost = ServiceError.connectionLost(URLError(.networkConnectionLost))

    @Test func aRetryAfterPausesTheHostForEveryWaitingCallThenOneProbeGoes() {
        var driver = MachineDriver(budget: 3, healthPolicy: .default)
        driver.send("limited", "/limited")
        driver.end("task 1", status: 429, headers: ["Retry-After": "2"])
        guard case .paused = driver.availability() else {
            Issue.record("not paused: \(String(describing: driver.availability()))")
            return
        }
        for name in ["a", "b", "c"] { driver.send(name, "/\(name)") }
        #expect(driver.started.count == 1) // none of them starts, though every slot is free
        driver.advance(seconds: 1.9)
        #expect(driver.started.count == 1)

        driver.advance(seconds: 0.1)
        #expect(driver.started.count == 2) // the probe
        #expect(driver.availability() == .probing(driver.attempts["task 2"]!.call))
        driver.end("task 2")
        #expect(driver.availability() == .available)
        #expect(driver.started.count == 4)
        #expect(driver.healthChanges.map(\.availability.name) == ["paused", "probing", "available"])
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aFailedProbePausesTheHostAgainForLonger() {
        let policy = HostHealth.Policy(failuresBeforePause: 2, pauseAfterFailures: 1)
        var driver = MachineDriver(budget: 2, healthPolicy: policy)
        driver.send("a", "/a")
        driver.send("b", "/b")
        driver.end("task 1", error: Self.lost)
        #expect(driver.availability() == .available)
        driver.end("task 2", error: Self.lost)
        #expect(driver.availability() == .paused(until: driver.uptime(after: 1), reason: .unreachable))

        driver.send("c", "/c")
        driver.send("d", "/d")
        driver.advance(seconds: 1)
        #expect(driver.started.count == 3) // one probe
        driver.end("task 3", error: Self.lost)
        #expect(driver.availability() == .paused(until: driver.uptime(after: 2), reason: .unreachable))
        driver.advance(seconds: 2)
        driver.end("task 4")
        #expect(driver.availability() == .available)
        #expect(driver.started.count == 4) // d, the last one waiting
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aStreakOfServerErrorsPausesTheHostThenOneGoodProbeClosesTheCircuit() {
        var driver = MachineDriver(budget: 3, healthPolicy: HostHealth.Policy(failuresBeforePause: 3, pauseAfterFailures: 1))
        for name in ["a", "b", "c"] { driver.send(name, "/\(name)") }
        driver.end("task 1", status: 500)
        driver.end("task 2", status: 502)
        #expect(driver.availability() == .available)
        driver.end("task 3", status: 503) // without Retry-After: a failure, not a request to wait
        #expect(driver.availability() == .paused(until: driver.uptime(after: 1), reason: .serverErrors))

        for name in ["d", "e", "f"] { driver.send(name, "/\(name)") }
        #expect(driver.started.count == 3) // none of them starts, though every slot is free
        driver.advance(seconds: 1)
        #expect(driver.started.count == 4) // the probe, alone
        #expect(driver.availability() == .probing(driver.attempts["task 4"]!.call))
        driver.end("task 4")
        #expect(driver.availability() == .available)
        #expect(driver.started.count == 6)
        #expect(driver.healthChanges.map(\.availability.name) == ["paused", "probing", "available"])
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aProbeThatGetsAServerErrorReopensTheCircuitForTwiceAsLong() {
        var driver = MachineDriver(budget: 1, healthPolicy: HostHealth.Policy(failuresBeforePause: 1, pauseAfterFailures: 1))
        driver.send("a", "/a")
        driver.end("task 1", status: 504)
        #expect(driver.availability() == .paused(until: driver.uptime(after: 1), reason: .serverErrors))
        driver.send("b", "/b")
        driver.advance(seconds: 1)
        driver.end("task 2", status: 500)
        #expect(driver.availability() == .paused(until: driver.uptime(after: 2), reason: .serverErrors))
        driver.advance(seconds: 2)
        #expect(driver.started.count == 2) // b failed as the probe; nothing else waits
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func onlyTheStatusesThePolicyCountsPauseAHost() {
        let policy = HostHealth.Policy(failuresBeforePause: 2, failureStatuses: [503])
        var driver = MachineDriver(budget: 1, healthPolicy: policy)
        for (index, status) in [500, 500, 500, 404, 503, 200, 503].enumerated() {
            driver.send("c\(index)", "/\(index)")
            driver.end("task \(index + 1)", status: status)
        }
        #expect(driver.availability() == .available) // never two counted failures in a row
        driver.send("last", "/last")
        driver.end("task 8", status: 503)
        #expect(driver.availability() == .paused(until: driver.uptime(after: 1), reason: .serverErrors))
        #expect(driver.violations.isEmpty)
    }

    @Test func aServerErrorWithRetryAfterIsARequestToWaitAndNotAFailure() {
        var driver = MachineDriver(budget: 1, healthPolicy: HostHealth.Policy(failuresBeforePause: 1))
        driver.send("a", "/a")
        driver.end("task 1", status: 503, headers: ["Retry-After": "5"])
        #expect(driver.availability() == .paused(until: driver.uptime(after: 5), reason: .askedToWait))
        #expect(driver.violations.isEmpty)
    }

    @Test func anAnswerResetsTheFailuresInARow() {
        var driver = MachineDriver(budget: 1, healthPolicy: HostHealth.Policy(failuresBeforePause: 2))
        for (index, outcome) in [Self.lost, nil, Self.lost].enumerated() {
            driver.send("c\(index)", "/\(index)")
            driver.end("task \(index + 1)", error: outcome)
        }
        #expect(driver.availability() == .available)
        #expect(driver.violations.isEmpty)
    }

    @Test func aRetryAfterOnOneHostDoesNotPauseAnother() {
        var driver = MachineDriver(budget: 1, healthPolicy: .default)
        driver.send("one", "/a", host: "https://one.test")
        driver.end("task 1", status: 503, headers: ["Retry-After": "5"])
        driver.send("two", "/a", host: "https://two.test")
        #expect(driver.started.count == 2)
        #expect(driver.availability(of: "https://two.test:443") == .available)
        #expect(driver.violations.isEmpty)
    }

    @Test func anAdaptiveBudgetHalvesOnStrainAndGrowsBackWithAnswers() {
        var driver = MachineDriver(budget: 4, healthPolicy: HostHealth.Policy(pausesOnRetryAfter: false, adaptsBudget: true))
        for index in 0..<8 { driver.send("c\(index)", "/\(index)") }
        #expect(driver.started.count == 4)
        driver.end("task 1", status: 503)
        #expect(driver.machine.budgets(ofHost: 0).all == 2)
        driver.end("task 2", error: .timedOut)
        #expect(driver.machine.budgets(ofHost: 0).all == 1)
        // Two still run, over the lowered budget: nothing starts until an answer comes.
        #expect(driver.started.count == 4)
        driver.end("task 3") // 1 + 1/1: two slots, one of them free
        #expect(driver.started.count == 5)
        driver.end("task 4") // 2 + 1/2
        #expect(driver.started.count == 6)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
        for task in 5...8 { driver.end("task \(task)") }
        #expect(driver.machine.budgets(ofHost: 0).all == 3) // 2.5, 2.9, 3.24, 3.55, 3.83
        #expect(driver.violations.isEmpty)
    }

    @Test func aRateLimitLetsABurstThroughThenOnePerInterval() {
        var driver = MachineDriver(budget: 6, rateLimits: ["api.test": HostHealth.RateLimit(requestsPerSecond: 2, burst: 3)])
        for index in 0..<6 { driver.send("c\(index)", "/\(index)") }
        #expect(driver.started.count == 3)
        driver.advance(seconds: 0.49)
        #expect(driver.started.count == 3)
        driver.advance(seconds: 0.01)
        #expect(driver.started.count == 4)
        driver.advance(seconds: 0.5)
        #expect(driver.started.count == 5)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
        // Other hosts are not limited.
        driver.send("elsewhere", "/x", host: "https://other.test")
        #expect(driver.started.count == 6)
    }

    @Test func aRateLimitedHostStartsTheMostUrgentWaitingCallFirst() {
        var driver = MachineDriver(budget: 4, rateLimits: ["api.test": HostHealth.RateLimit(requestsPerSecond: 1)])
        driver.send("first", "/first")
        driver.send("low", "/low", priority: .low)
        driver.send("high", "/high", priority: .high)
        driver.advance(seconds: 1)
        #expect(driver.started.count == 2)
        #expect(driver.machine.calls[driver.attempts["task 2"]!.call.slot].request.prepared.urlRequest.url?.path == "/high")
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }
}

extension SchedulerMachine.Availability {
    /// Its case, without its values.
    var name: String {
        switch self {
        case .available: "available"
        case .paused: "paused"
        case .probing: "probing"
        }
    }
}

/// The head of a probe's answer: the host opens on it, before the probe's body ends.
@Suite struct MachineProbeHeadTests {
    /// A host paused by a `Retry-After` of 2 s, with `a` gone as its probe and `b` waiting.
    static func probing() -> MachineDriver {
        var driver = MachineDriver(budget: 3, healthPolicy: .default)
        driver.send("limited", "/limited")
        driver.end("task 1", status: 503, headers: ["Retry-After": "2"])
        driver.send("a", "/a")
        driver.send("b", "/b")
        driver.advance(seconds: 2)
        return driver
    }

    @Test func aProbesHealthyHeadOpensItsHostAndTheWaitingCallsStart() {
        var driver = Self.probing()
        #expect(driver.starts["task 2"]?.isProbe == true)
        #expect(driver.started.count == 2)

        driver.answerHead("task 2")
        #expect(driver.availability() == .available)
        #expect(driver.started.count == 3) // b, while a's body is still coming
        #expect(driver.starts["task 3"]?.isProbe == false)
        driver.end("task 2")
        driver.end("task 3")
        #expect(driver.availability() == .available)
        #expect(driver.healthChanges.map(\.availability.name) == ["paused", "probing", "available"])
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }

    @Test func aProbesHeadThatFailsOrAsksToWaitLeavesItsEndToDecide() {
        for (status, headers) in [(503, [:]), (500, [:]), (429, ["Retry-After": "3"] as HeaderFields)] {
            var driver = Self.probing()
            driver.answerHead("task 2", status: status, headers: headers)
            #expect(driver.availability() == .probing(driver.attempts["task 2"]!.call))
            #expect(driver.started.count == 2, "status \(status)")
            #expect(driver.healthChanges.map(\.availability.name) == ["paused", "probing"])
        }
    }

    @Test func theHeadOfAnAttemptThatIsNotTheProbeChangesNothing() {
        var driver = MachineDriver(budget: 1, healthPolicy: HostHealth.Policy(failuresBeforePause: 1, pauseAfterFailures: 1))
        driver.send("a", "/a")
        driver.send("b", "/b")
        driver.answerHead("task 1")
        #expect(driver.availability() == .available)
        #expect(driver.started.count == 1) // b waits for a's slot, whatever a's head says
        #expect(driver.healthChanges.isEmpty)
    }

    @Test func aHeadThatCameAfterItsAttemptEndedChangesNothing() {
        var driver = Self.probing()
        driver.end("task 2", error: MachineHostHealthTests.lost)
        let afterEnd = driver.availability()
        driver.answerHead("task 2")
        #expect(driver.availability() == afterEnd)
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
    }
}

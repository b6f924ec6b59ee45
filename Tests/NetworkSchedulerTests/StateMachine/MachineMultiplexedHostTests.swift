import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): a host's budget follows what its
/// answers come over. Connections until it is heard from, streams once it answers over HTTP/2
/// or HTTP/3, connections again if it answers over HTTP/1.1.
@Suite struct MachineMultiplexedHostTests {
    /// A machine of 4 connections per host, one kept above low priority, and 20 streams on a
    /// multiplexed host, with `count` GETs of distinct paths sent at `priority`.
    private static func burst(_ count: Int, priority: RequestPriority = .normal) -> MachineDriver {
        var driver = MachineDriver(budget: 4, lowPriorityBudget: 3, multiplexedBudget: 20)
        for index in 0..<count { driver.send("c\(index)", "/items/\(index)", priority: priority) }
        return driver
    }

    @Test func aHostNotHeardFromRunsItsBudgetOfConnections() {
        let driver = Self.burst(30)

        #expect(driver.started.count == 4)
        #expect(driver.machine.budget(ofHost: "https://api.test:443") == 4)
        #expect(driver.violations.isEmpty)
    }

    @Test func anAnswerOverHTTP2OpensTheHostToItsBudgetOfStreams() {
        var driver = Self.burst(30)

        driver.end("task 1", over: .multiplexed(maximumStreams: nil))

        #expect(driver.started.count == 21, "the first answer's slot, then 20 streams")
        #expect(driver.machine.budget(ofHost: "https://api.test:443") == 20)
        #expect(driver.violations.isEmpty)
    }

    @Test func theServersOwnLimitOfStreamsIsTheBudget() {
        var driver = Self.burst(30)

        driver.end("task 1", over: .multiplexed(maximumStreams: 8))

        #expect(driver.started.count == 9)
        #expect(driver.machine.budget(ofHost: "https://api.test:443") == 8)
    }

    @Test func aServerClaimingEndlessStreamsGetsTheCeiling() {
        var driver = Self.burst(1)

        driver.end("task 1", over: .multiplexed(maximumStreams: .max))

        #expect(driver.machine.budget(ofHost: "https://api.test:443") == HostProtocol.streamCeiling)
    }

    @Test func anAnswerOverHTTP1AgainNarrowsItBackAndTheRunningOnesEndFirst() {
        var driver = Self.burst(30)
        driver.end("task 1", over: .multiplexed(maximumStreams: nil))
        #expect(driver.started.count == 21)

        driver.end("task 2", over: .http1)
        #expect(driver.machine.budget(ofHost: "https://api.test:443") == 4)
        #expect(driver.started.count == 21, "19 still run, over a budget of 4: nothing starts")
        for task in 3...17 { driver.end("task \(task)") }
        #expect(driver.started.count == 21, "4 still run")
        driver.end("task 18")

        #expect(driver.started.count == 22, "3 run: the next starts, up to the budget of connections")
        #expect(driver.violations.isEmpty)
    }

    @Test func anAnswerThatSaysNothingChangesNothing() {
        var driver = Self.burst(30)
        driver.end("task 1", over: .multiplexed(maximumStreams: nil))

        driver.end("task 2")

        #expect(driver.machine.budget(ofHost: "https://api.test:443") == 20)
        #expect(driver.started.count == 22)
    }

    @Test func theHostIsRememberedForTheNextScreen() {
        var driver = Self.burst(1)
        driver.end("task 1", over: .multiplexed(maximumStreams: nil))

        for index in 0..<30 { driver.send("next\(index)", "/next/\(index)") }

        #expect(driver.started.count == 21, "the second screen starts wide at once")
    }

    @Test func lowPriorityCallsLeaveTheSameShareOfStreamsFreeForAnUrgentOne() {
        var driver = Self.burst(40, priority: .low)
        driver.end("task 1", over: .multiplexed(maximumStreams: nil))
        // 20 × 3 ÷ 4: 15 streams for low-priority calls, 5 kept above them.
        #expect(driver.started.count == 16)

        driver.send("urgent", "/urgent", priority: .high)

        #expect(driver.started.count == 17)
        #expect(driver.taskPriorities[driver.started.last!] == .high)
        #expect(driver.violations.isEmpty)
    }

    @Test func theStreamsLineKeepsItsOwnBudget() {
        var driver = MachineDriver(budget: 1, streamBudget: 1, multiplexedBudget: 20)
        let feed = Submission(.urlRequest(URLRequest(url: URL(string: "https://api.test/feed")!)), deduplication: .disabled,
                              stream: StreamChannel(decoder: ChunkDecoder(), limit: 1, reconnection: nil))
        driver.send("feed", "/feed", shared: false, submission: feed)
        driver.send("me", "/me")
        #expect(driver.started == ["task 1", "task 2"])

        driver.end("task 1", over: .multiplexed(maximumStreams: nil))

        #expect(driver.machine.budget(ofHost: "https://api.test:443 streams") == 1)
        #expect(driver.machine.budget(ofHost: "https://api.test:443") == 1, "a stream's answer tells the host nothing")
    }

    @Test func anAdaptiveBudgetKeepsItsShareAcrossTheChange() {
        var driver = MachineDriver(budget: 4, lowPriorityBudget: 3,
                                   healthPolicy: HostHealth.Policy(adaptsBudget: true), multiplexedBudget: 20)
        for index in 0..<30 { driver.send("c\(index)", "/items/\(index)") }
        driver.end("task 1", status: 503)
        #expect(driver.machine.budget(ofHost: "https://api.test:443") == 2)

        driver.end("task 2", over: .multiplexed(maximumStreams: nil))

        #expect(driver.machine.budget(ofHost: "https://api.test:443") == 10)
        #expect(driver.violations.isEmpty)
    }
}

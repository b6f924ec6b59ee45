import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Serial lanes on the machine (see `MachineDriver`): calls of one lane go one at a time, in
/// the order they were made, whatever their priorities and the free slots.
@Suite struct MachineLaneTests {
    static let profile = Lane("profile")

    @Test func callsOfOneLaneRunOneAtATimeInSubmissionOrder() {
        var driver = MachineDriver(budget: 4)
        driver.send("first", "/me", method: "PATCH", priority: .low, lane: Self.profile)
        driver.send("second", "/me?2", method: "PATCH", priority: .critical, lane: Self.profile)
        driver.send("third", "/me?3", method: "PATCH", lane: Self.profile)
        driver.send("other", "/feed")
        // Free slots, and a critical call: only the lane's first and the call outside it run.
        #expect(driver.started.count == 2)

        driver.end("task 1")
        #expect(driver.started.count == 3) // second, only now
        driver.end("task 3")
        driver.end("task 4")
        #expect(driver.outcomes.map(\.caller) == ["first", "second", "third"])
        driver.end("task 2")
        #expect(driver.violations.isEmpty && driver.brokenContracts.isEmpty)
        #expect(driver.machine.lanes.isEmpty)
    }

    @Test func aFailureRunsTheRestUnlessTheLaneCancelsThem() {
        var driver = MachineDriver(budget: 2)
        driver.send("a", "/a", method: "PATCH", lane: Self.profile)
        driver.send("b", "/b", method: "PATCH", lane: Self.profile)
        driver.end("task 1", status: 500)
        #expect(driver.started.count == 2)
        driver.end("task 2")
        #expect(driver.outcome(of: "b") == .success(200))

        let replay = Lane("replay", onFailure: .cancelTheRest)
        var stopping = MachineDriver(budget: 2)
        stopping.send("a", "/a", method: "POST", lane: replay)
        stopping.send("b", "/b", method: "POST", lane: replay)
        stopping.send("c", "/c", method: "POST", lane: replay)
        stopping.end("task 1", error: .connectionLost(URLError(.networkConnectionLost)))
        #expect(stopping.started.count == 1)
        #expect(stopping.outcome(of: "b") == .failure(.cancelled))
        #expect(stopping.outcome(of: "c") == .failure(.cancelled))
        #expect(stopping.machine.census == (0, 0, 0) && stopping.machine.lanes.isEmpty)
        #expect(driver.violations.isEmpty && stopping.violations.isEmpty)
    }

    @Test func aCancelledHeadStillEndsOnTheWireBeforeTheNextStarts() {
        var driver = MachineDriver(budget: 2)
        driver.send("a", "/a", method: "PATCH", lane: Self.profile)
        driver.send("b", "/b", method: "PATCH", lane: Self.profile)
        driver.cancel("a")
        #expect(driver.cancelledTasks == ["task 1"])
        // The PATCH may still reach the server: b waits until it has really ended.
        #expect(driver.started.count == 1)
        driver.end("task 1", error: .cancelled)
        #expect(driver.started.count == 2)
        #expect(driver.violations.isEmpty)
    }

    @Test func aCallerLeavingTheLaneGivesUpItsPlace() {
        var driver = MachineDriver(budget: 2)
        driver.send("a", "/a", method: "PATCH", lane: Self.profile)
        driver.send("b", "/b", method: "PATCH", lane: Self.profile)
        driver.send("c", "/c", method: "PATCH", lane: Self.profile)
        driver.cancel("b")
        driver.end("task 1")
        #expect(driver.started.count == 2)
        #expect(driver.machine.calls[driver.attempts["task 2"]!.call.slot].request.prepared.urlRequest.url?.path == "/c")
        #expect(driver.violations.isEmpty)
    }

    @Test func identicalRequestsShareACallOnlyWithinOneLane() {
        var driver = MachineDriver(budget: 4)
        driver.send("in lane", "/me", method: "PATCH", lane: Self.profile)
        let twin = driver.send("twin in lane", "/me", method: "PATCH", lane: Self.profile)
        let outside = driver.send("outside", "/me", method: "PATCH")
        let otherLane = driver.send("other lane", "/me", method: "PATCH", lane: Lane("settings"))
        guard case .joined = twin, case .created = outside, case .created = otherLane else {
            Issue.record("\(twin), \(outside), \(otherLane)")
            return
        }
        #expect(driver.violations.isEmpty)
    }
}

import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Keyed calls whose callers all left on the machine (see `MachineDriver`): one on the wire
/// runs to its end, and its outcome is kept under its key for identical requests.
@Suite struct MachineKeptOutcomeTests {
    @Test func aKeyedPostOnTheWireRunsOnAndAnIdenticalSubmitGetsItsOutcome() {
        var driver = MachineDriver(budget: 2)
        driver.send("tap", "/posts", method: "POST", idempotencyKey: "k1")
        driver.cancel("tap")
        #expect(driver.outcome(of: "tap") == .failure(.cancelled))
        #expect(driver.cancelledTasks.isEmpty) // not cut off halfway
        #expect(driver.machine.census == (0, 0, 1))

        driver.end("task 1", status: 201)
        #expect(driver.kept == ["/posts"])
        guard case .joined = driver.send("tap again", "/posts", method: "POST", idempotencyKey: "k1") else {
            Issue.record("the second tap did not get the kept outcome")
            return
        }
        #expect(driver.outcome(of: "tap again") == .success(201))
        #expect(driver.started.count == 1)
        #expect(driver.violations.isEmpty)
    }

    @Test func aKeptOutcomeIsForgottenAfterItsWindow() {
        var driver = MachineDriver(budget: 2)
        driver.send("tap", "/posts", method: "POST", idempotencyKey: "k1")
        driver.cancel("tap")
        driver.end("task 1", status: 201)
        driver.advance(seconds: 10)
        #expect(driver.machine.census == (0, 0, 0) && driver.machine.timers.isEmpty)
        guard case .created = driver.send("later", "/posts", method: "POST", idempotencyKey: "k1") else {
            Issue.record("a request after the window joined the old call")
            return
        }
        #expect(driver.started.count == 2)
        #expect(driver.violations.isEmpty)
    }

    @Test func anIdenticalSubmitWhileItStillRunsJoinsIt() {
        var driver = MachineDriver(budget: 2)
        driver.send("tap", "/posts", method: "POST", priority: .low, idempotencyKey: "k1")
        driver.cancel("tap")
        driver.send("again", "/posts", method: "POST", priority: .high, idempotencyKey: "k1")
        #expect(driver.started.count == 1)
        #expect(driver.taskPriorities["task 1"] == .high)
        driver.end("task 1", status: 201)
        #expect(driver.outcome(of: "again") == .success(201))
        #expect(driver.kept.isEmpty)
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty)
    }

    @Test func unkeyedOrUnsentCallsAreCancelledAsBefore() {
        var driver = MachineDriver(budget: 1)
        driver.send("plain", "/posts", method: "POST")
        driver.send("keyed waiting", "/other", method: "POST", idempotencyKey: "k2")
        driver.cancel("plain", "keyed waiting")
        #expect(driver.cancelledTasks == ["task 1"])
        driver.end("task 1", error: .cancelled)
        #expect(driver.started.count == 1) // the keyed one never touched the network
        #expect(driver.kept.isEmpty && driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty)
    }

    @Test func aKeptCallLetsItsLaneGoOn() {
        var driver = MachineDriver(budget: 2)
        driver.send("first", "/a", method: "POST", lane: Lane("l"), idempotencyKey: "k1")
        driver.send("second", "/b", method: "POST", lane: Lane("l"), idempotencyKey: "k2")
        driver.cancel("first")
        #expect(driver.started.count == 1)
        driver.end("task 1", status: 201)
        #expect(driver.started.count == 2)
        #expect(driver.violations.isEmpty)
    }
}

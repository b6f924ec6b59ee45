import Foundation
import Testing
@testable import NetworkScheduler

/// Each host's line and budget, driven synchronously: no more than the budget runs, waiting
/// calls start by priority then first in first out, a shared call runs at its callers' highest
/// priority, low priorities leave slots for urgent calls, and nothing starts offline.
@Suite struct MachineLineTests {
    @Test func noMoreAttemptsRunOnAHostThanItsBudget() {
        var driver = MachineDriver(budget: 2)
        for index in 0..<5 { driver.send("c\(index)", "/users/\(index)") }
        #expect(driver.started == ["task 1", "task 2"])
        #expect(driver.machine.lineCounts.waiting == 3)

        driver.end("task 1")
        #expect(driver.started.count == 3)
        #expect(driver.violations.isEmpty)
    }

    @Test func eachHostHasABudgetOfItsOwn() {
        var driver = MachineDriver(budget: 1)
        driver.send("a", host: "https://a.test")
        driver.send("b", host: "https://b.test")
        #expect(driver.started == ["task 1", "task 2"])
    }

    @Test(arguments: [
        // (priorities in the order sent behind a busy slot, the order they start)
        ([RequestPriority.low, .high, .normal, .high, .critical], ["critical", "high 1", "high 3", "normal 2", "low 0"]),
        ([.normal, .normal, .normal], ["normal 0", "normal 1", "normal 2"]),
    ])
    func waitingCallsStartByPriorityThenFirstInFirstOut(sent: [RequestPriority], expected: [String]) {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker", priority: .critical)
        for (index, priority) in sent.enumerated() {
            let name = priority == .critical ? "critical" : "\(priority) \(index)"
            driver.send(name, "/\(index)", priority: priority)
        }
        var order: [String] = []
        for step in 0..<sent.count {
            driver.end("task \(step + 1)")
            order.append(driver.outcomes.last!.caller)
        }
        driver.end("task \(sent.count + 1)")
        order.append(driver.outcomes.last!.caller)
        #expect(Array(order.dropFirst()) == expected)
    }

    @Test func aSharedCallRunsAtItsHighestCallersPriorityAndDropsBackWhenThatCallerLeaves() {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.send("first normal", "/first")
        driver.send("low", "/shared", priority: .low)
        driver.send("high", "/shared", priority: .high)

        driver.end("task 1")
        #expect(driver.started.count == 2)
        driver.end("task 2")
        #expect(Set(driver.outcomes.suffix(2).map(\.caller)) == ["low", "high"], "the shared call went first, at high")

        var dropped = MachineDriver(budget: 1)
        dropped.send("blocker", "/blocker")
        dropped.send("first normal", "/first")
        dropped.send("low", "/shared", priority: .low)
        dropped.send("high", "/shared", priority: .high)
        dropped.cancel("high")
        dropped.end("task 1")
        dropped.end("task 2")
        #expect(dropped.outcomes.last?.caller == "first normal", "back at low, the shared call waits its turn")
        #expect(dropped.violations.isEmpty)
    }

    @Test func lowPrioritiesLeaveTheReservedSlotsForUrgentCalls() {
        var driver = MachineDriver(budget: 3, lowPriorityBudget: 2)
        for index in 0..<4 { driver.send("low \(index)", "/low/\(index)", priority: .low) }
        #expect(driver.started.count == 2)

        driver.send("normal", "/normal")
        #expect(driver.started.count == 3)
        #expect(driver.machine.lineCounts.lowPriorityRunning == 2)
        #expect(driver.violations.isEmpty)
    }

    @Test func aLowCallRaisedByAJoinerTakesAReservedSlotAtOnce() {
        var driver = MachineDriver(budget: 2, lowPriorityBudget: 1)
        driver.send("low 0", "/low/0", priority: .low)
        driver.send("low 1", "/low/1", priority: .low)
        #expect(driver.started.count == 1)

        driver.send("joiner", "/low/1", priority: .high)
        #expect(driver.started.count == 2)
        #expect(driver.violations.isEmpty)
    }

    @Test func nothingStartsOfflineAndWhatFitsStartsWhenTheNetworkReturns() {
        var driver = MachineDriver(budget: 2)
        driver.setConnected(false)
        for index in 0..<3 { driver.send("c\(index)", "/\(index)") }
        #expect(driver.started.isEmpty)
        #expect(driver.violations.isEmpty)

        driver.setConnected(true)
        #expect(driver.started.count == 2)
        #expect(driver.violations.isEmpty)
    }

    @Test func aConnectivityFailureWhileOfflineWaitsInTheLineInsteadOfFailing() {
        var driver = MachineDriver(budget: 1)
        driver.send("a")
        driver.setConnected(false)
        driver.end("task 1", error: .noConnection(URLError(.notConnectedToInternet)))

        #expect(driver.outcomes.isEmpty)
        #expect(driver.machine.lineCounts.waiting == 1)
        driver.setConnected(true)
        #expect(driver.started == ["task 1", "task 2"])
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

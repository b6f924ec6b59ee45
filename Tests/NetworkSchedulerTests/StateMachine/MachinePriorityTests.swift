import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): waiting calls start by priority, then
/// first in first out; a shared call runs at its callers' highest priority; low priorities leave
/// slots for urgent calls.
@Suite struct MachinePriorityTests {
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

    /// Behind a busy slot: a normal call, then a shared one that a low caller made and a high
    /// caller joined; `highLeaves` cancels the high caller before the slot frees.
    private static func sharedCallAfterANormalOne(highLeaves: Bool) -> MachineDriver {
        var driver = MachineDriver(budget: 1)
        driver.send("blocker", "/blocker")
        driver.send("normal", "/first")
        driver.send("low", "/shared", priority: .low)
        driver.send("high", "/shared", priority: .high)
        if highLeaves { driver.cancel("high") }
        driver.end("task 1")
        driver.end("task 2")
        return driver
    }

    @Test func aSharedCallRunsAtItsHighestCallersPriority() {
        let driver = Self.sharedCallAfterANormalOne(highLeaves: false)
        #expect(Set(driver.outcomes.suffix(2).map(\.caller)) == ["low", "high"], "the shared call went first, at high")
        #expect(driver.violations.isEmpty)
    }

    @Test func aSharedCallDropsBackWhenItsMostUrgentCallerLeaves() {
        let driver = Self.sharedCallAfterANormalOne(highLeaves: true)
        #expect(driver.outcomes.last?.caller == "normal", "back at low, the shared call waits its turn")
        #expect(driver.violations.isEmpty)
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
}

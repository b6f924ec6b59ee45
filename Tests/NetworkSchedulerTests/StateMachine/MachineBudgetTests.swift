import Foundation
import Testing
@testable import NetworkScheduler

/// The machine, driven synchronously (see `MachineDriver`): no host runs more attempts at once than
/// its budget.
@Suite struct MachineBudgetTests {
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
}

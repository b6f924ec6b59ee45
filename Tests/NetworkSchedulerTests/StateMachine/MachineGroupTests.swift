import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): a group cancels exactly its own
/// callers, in one event.
@Suite struct MachineGroupTests {
    @Test func aGroupsCallersAreCancelledInOneEventAndOnlyThey() throws {
        var driver = MachineDriver(budget: 1)
        driver.send("other")
        for index in 0..<10 { driver.send("screen \(index)", "/feed/\(index)") }
        driver.send("shared", "/feed/3")

        driver.cancel("screen 0", "screen 1", "screen 2", "screen 3", "screen 4", "screen 5", "screen 6", "screen 7",
                      "screen 8", "screen 9")

        #expect(driver.outcomes.count == 10)
        driver.end("task 1")
        #expect(driver.started == ["task 1", "task 2"], "the call the group shared with another caller still runs")
        driver.end("task 2")
        #expect(try driver.outcome(of: "shared")?.get() == 200)
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty)
    }
}

import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): every caller ends exactly once,
/// whatever comes late or twice.
@Suite struct MachineExactlyOnceTests {
    @Test func aCallerEndsOnceWithItsCallsOutcome() throws {
        var driver = MachineDriver()
        driver.send("a")
        #expect(driver.started == ["task 1"])

        driver.end("task 1", status: 200)
        driver.end("task 1", status: 500) // a late second report changes nothing

        #expect(driver.outcomes.map(\.caller) == ["a"])
        #expect(try driver.outcome(of: "a")?.get() == 200)
        #expect(driver.machine.census == (0, 0, 0))
        #expect(driver.violations.isEmpty)
    }

    @Test func cancellingACallerTwiceOrAfterItEndedChangesNothing() {
        var driver = MachineDriver()
        driver.send("a")
        driver.end("task 1")
        driver.cancel("a")
        driver.cancel("a")
        #expect(driver.outcomeCount(of: "a") == 1)
    }
}

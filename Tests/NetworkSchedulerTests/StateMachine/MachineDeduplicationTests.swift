import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): identical callers share one call; a
/// caller whose request is not shared makes its own.
@Suite struct MachineDeduplicationTests {
    @Test func identicalCallersShareOneAttemptAndEachGetsTheOutcome() {
        var driver = MachineDriver()
        driver.send("a")
        let attachment = driver.send("b")
        driver.send("c", "/users/2")

        #expect({ if case .joined = attachment { true } else { false } }())
        #expect(driver.started == ["task 1", "task 2"])
        driver.end("task 1")
        #expect(Set(driver.outcomes.map(\.caller)) == ["a", "b"])
        #expect(driver.violations.isEmpty)
    }

    @Test func aCallerWhoseRequestIsNotSharedMakesItsOwnCall() {
        var driver = MachineDriver()
        driver.send("a", shared: false)
        driver.send("b", shared: false)
        #expect(driver.started == ["task 1", "task 2"])
        #expect(driver.machine.registry.isEmpty)
    }
}

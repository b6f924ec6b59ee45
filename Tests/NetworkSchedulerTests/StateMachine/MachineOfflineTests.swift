import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): nothing starts offline; a connectivity
/// failure while offline waits instead of failing.
@Suite struct MachineOfflineTests {
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
}

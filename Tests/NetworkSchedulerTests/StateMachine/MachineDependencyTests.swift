import Foundation
import Testing
@testable import NetworkScheduler

/// The machine, driven synchronously (see `MachineDriver`): dependencies gate a caller: built only
/// once all succeed, never sent when one fails.
@Suite struct MachineDependencyTests {
    @Test func aDependentWaitsForEveryDependencyAndIsBuiltOnlyThen() {
        var driver = MachineDriver()
        driver.sendAfter(2, "profile")
        #expect(driver.started.isEmpty)

        driver.dependencySucceeded("profile")
        #expect(driver.started.isEmpty)
        driver.dependencySucceeded("profile")
        #expect(driver.started == ["task 1"])
        #expect(driver.violations.isEmpty)
    }

    @Test func aDependentWhoseDependencyFailedEndsOnceWithoutTouchingTheNetwork() {
        var driver = MachineDriver()
        driver.sendAfter(2, "profile")
        driver.dependencyFailed("profile", with: .timedOut)
        driver.dependencySucceeded("profile")
        driver.dependencyFailed("profile", with: .cancelled)

        #expect(driver.started.isEmpty)
        #expect(driver.outcomeCount(of: "profile") == 1)
        #expect(driver.machine.census == (0, 0, 0))
    }

    @Test func aDependentCancelledWhileWaitingIsNeverBuilt() {
        var driver = MachineDriver()
        driver.sendAfter(1, "profile")
        driver.cancel("profile")
        driver.dependencySucceeded("profile")
        #expect(driver.started.isEmpty)
        #expect(driver.outcomeCount(of: "profile") == 1)
    }
}

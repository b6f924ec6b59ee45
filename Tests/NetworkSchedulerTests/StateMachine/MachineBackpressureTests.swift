import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// A bounded line on the machine (see `MachineDriver`): when it is full, the newest call of
/// the lowest rank waiting is shed with a typed error, never a more urgent one for a less
/// urgent one.
@Suite struct MachineBackpressureTests {
    static let shed = ServiceError.lineFull(host: "https://api.test:443")

    @Test func aFullLineShedsTheNewestOfTheLeastUrgent() {
        var driver = MachineDriver(budget: 1, lineLimit: 3)
        driver.send("running", "/running")
        driver.send("low 1", "/low1", priority: .low)
        driver.send("low 2", "/low2", priority: .low)
        driver.send("normal", "/normal")
        driver.send("high", "/high", priority: .high)
        #expect(driver.outcome(of: "low 2") == .failure(Self.shed))
        #expect(driver.outcome(of: "low 1") == nil)
        #expect(driver.machine.lineCounts.waiting == 3)
        #expect(driver.violations.isEmpty)
    }

    @Test func anArrivalNoMoreUrgentThanAnyWaitingCallIsShedItself() {
        var driver = MachineDriver(budget: 1, lineLimit: 2)
        driver.send("running", "/running")
        driver.send("normal 1", "/n1")
        driver.send("high", "/high", priority: .high)
        driver.send("normal 2", "/n2")
        driver.send("background", "/bg", priority: .background)
        #expect(driver.outcome(of: "normal 2") == .failure(Self.shed))
        #expect(driver.outcome(of: "background") == .failure(Self.shed))
        #expect(driver.outcome(of: "normal 1") == nil && driver.outcome(of: "high") == nil)
        // Neither touched the network.
        _ = driver.endEveryAttempt()
        #expect(driver.started.count == 3)
        #expect(driver.violations.isEmpty && driver.machine.census == (0, 0, 0))
    }

    @Test func joinersAndCallsOutOfTheLineDoNotCount() {
        var driver = MachineDriver(budget: 1, lineLimit: 1)
        driver.send("running", "/running")
        driver.send("in lane", "/lane", lane: Lane("l"))
        driver.send("joiner", "/lane", lane: Lane("l"))
        driver.send("behind in lane", "/lane2", lane: Lane("l"))
        driver.send("suspended", "/suspended", suspended: true)
        #expect(driver.outcomes.isEmpty)
        #expect(driver.machine.lineCounts.waiting == 1)
        #expect(driver.violations.isEmpty)
    }

    @Test func eachHostHasItsOwnLine() {
        var driver = MachineDriver(budget: 1, lineLimit: 1)
        driver.send("one running", "/r", host: "https://one.test")
        driver.send("one waiting", "/w", host: "https://one.test")
        driver.send("two running", "/r", host: "https://two.test")
        driver.send("two waiting", "/w", host: "https://two.test")
        #expect(driver.outcomes.isEmpty)
        #expect(driver.violations.isEmpty)
    }
}

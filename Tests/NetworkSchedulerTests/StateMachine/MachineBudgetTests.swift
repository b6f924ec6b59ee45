import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

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

    @Test func streamsWaitInALineOfTheirOwnBesideTheirHostsWithABudgetOfItsOwn() {
        var driver = MachineDriver(budget: 1, streamBudget: 1)
        func stream(_ path: String) -> Submission {
            Submission(.urlRequest(URLRequest(url: URL(string: "https://api.test\(path)")!)), deduplication: .disabled,
                       stream: StreamChannel(decoder: ChunkDecoder(), limit: 1, reconnection: nil))
        }
        driver.send("feed", "/feed", shared: false, submission: stream("/feed"))
        driver.send("log", "/log", shared: false, submission: stream("/log"))
        driver.send("me", "/me")
        // The request takes its host's slot beside the open stream; the second stream waits.
        #expect(driver.started == ["task 1", "task 2"])
        #expect(driver.machine.hostIndices.keys.sorted() == ["https://api.test:443", "https://api.test:443 streams"])

        driver.end("task 2")
        #expect(driver.started == ["task 1", "task 2"])
        driver.end("task 1")
        #expect(driver.started == ["task 1", "task 2", "task 3"])
        #expect(driver.violations.isEmpty)
    }

    /// A screen's requests cancelled one after another: the slot the first frees must not go
    /// to a waiting request of the same screen whose cancellation comes next.
    @Test func aSlotWhoseCallersLeftStaysTakenThroughTheGraceAfterItsTaskEnds() {
        // Given a budget of one, taken by a, with b and c waiting.
        var driver = MachineDriver(budget: 1, cancellationGrace: 0.02)
        for name in ["a", "b", "c"] { driver.send(name, "/\(name)") }
        #expect(driver.started == ["task 1"])

        // When a is cancelled and its task ends at once, then nothing starts within the grace,
        // and b's cancellation meanwhile leaves the slot to c when the grace ends.
        driver.cancel("a")
        driver.end("task 1", error: .cancelled)
        driver.advance(seconds: 0.01)
        #expect(driver.started == ["task 1"])
        driver.cancel("b")
        driver.advance(seconds: 0.01)
        #expect(driver.started == ["task 1", "task 2"])
        #expect(driver.machine.invariantViolations().isEmpty)

        // And a slot freed by an answer is taken again at once.
        driver.send("d", "/d")
        driver.end("task 2")
        #expect(driver.started == ["task 1", "task 2", "task 3"])
    }

    @Test func eachHostHasABudgetOfItsOwn() {
        var driver = MachineDriver(budget: 1)
        driver.send("a", host: "https://a.test")
        driver.send("b", host: "https://b.test")
        #expect(driver.started == ["task 1", "task 2"])
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine
import NetworkSchedulerTesting

/// The scheduler keeps each running attempt's operation, made in the event that started it:
/// what the machine decides for that attempt later reaches the operation, and nothing stays
/// once it ended.
@Suite struct AttemptOperationsTests {
    private static let attempt = AttemptID(call: CallID(slot: SlotID(index: 0, generation: 0), number: 1), serial: 1)

    private static func operation() -> DataTaskOperation {
        DataTaskOperation(request: URLRequest(url: URL(string: "https://api.test/a")!), transport: StubTransport()) { _ in }
    }

    @Test func anAttemptPastItsDeadlineIsForgottenEvenIfItNeverReports() {
        var operations = AttemptOperations()
        let operation = Self.operation()
        operations.store(operation, for: Self.attempt)
        #expect(operations.cancel(Self.attempt, isOver: true) === operation)
        #expect(operations.count == 0)
    }

    @Test func aMadeOperationIsReturnedToCancelAndForgottenOnceItEnded() {
        var operations = AttemptOperations()
        let operation = Self.operation()
        operations.store(operation, for: Self.attempt)
        #expect(operations.cancel(Self.attempt) === operation)
        #expect(operations.reprioritize(Self.attempt) === operation)
        #expect(operations.count == 1, "a cancelled attempt is kept until its operation reports")

        operations.ended(Self.attempt)
        // A cancellation decided before the end, told after it, finds nothing and keeps nothing.
        #expect(operations.cancel(Self.attempt) == nil)
        #expect(operations.count == 0 && operations.made.isEmpty)
    }
}

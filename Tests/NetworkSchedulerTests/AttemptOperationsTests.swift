import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// The scheduler makes an attempt's operation outside its lock: what the machine decides for
/// that attempt meanwhile must reach the operation, and nothing must stay once it ended.
@Suite struct AttemptOperationsTests {
    private static let attempt = AttemptID(call: CallID(slot: SlotID(index: 0, generation: 0), number: 1), serial: 1)

    private static func operation() -> DataTaskOperation {
        DataTaskOperation(request: URLRequest(url: URL(string: "https://api.test/a")!), transport: StubTransport()) { _ in }
    }

    @Test func aCancellationWhileTheOperationIsMadeMakesItRunCancelled() {
        var operations = AttemptOperations()
        operations.started(Self.attempt)
        #expect(operations.cancel(Self.attempt) == nil)
        let fate = operations.store(Self.operation(), for: Self.attempt)
        #expect(fate.isCancelled && fate.newPriority == nil)
    }

    @Test func anAttemptPastItsDeadlineIsForgottenEvenIfItNeverReports() {
        var operations = AttemptOperations()
        let operation = Self.operation()
        operations.started(Self.attempt)
        _ = operations.store(operation, for: Self.attempt)
        #expect(operations.cancel(Self.attempt, isOver: true) === operation)
        #expect(operations.count == 0)

        // Past it while its operation was being made: it runs cancelled, and is not kept.
        operations.started(Self.attempt)
        #expect(operations.cancel(Self.attempt, isOver: true) == nil)
        #expect(operations.store(Self.operation(), for: Self.attempt).isCancelled)
        #expect(operations.count == 0)
    }

    @Test func aPriorityGivenWhileTheOperationIsMadeIsHandedToIt() {
        var operations = AttemptOperations()
        operations.started(Self.attempt)
        #expect(operations.reprioritize(Self.attempt, to: .high) == nil)
        let fate = operations.store(Self.operation(), for: Self.attempt)
        #expect(!fate.isCancelled && fate.newPriority == .high)
    }

    @Test func aMadeOperationIsReturnedToCancelAndForgottenOnceItEnded() {
        var operations = AttemptOperations()
        let operation = Self.operation()
        operations.started(Self.attempt)
        _ = operations.store(operation, for: Self.attempt)
        #expect(operations.cancel(Self.attempt) === operation)
        #expect(operations.reprioritize(Self.attempt, to: .low) === operation)

        operations.ended(Self.attempt)
        // A cancellation decided before the end, told after it, finds nothing and keeps nothing.
        #expect(operations.cancel(Self.attempt) == nil)
        #expect(operations.count == 0 && operations.made.isEmpty)
    }
}

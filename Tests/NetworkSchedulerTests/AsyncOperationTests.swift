import Foundation
import Testing
@testable import NetworkScheduler

/// An operation that notes what each KVO notification saw of its state.
private final class NotingOperation: AsyncOperation, @unchecked Sendable {
    // Safety: `notes` is locked.
    let notes = Locked<[String]>([])

    override func notify(_ side: ChangeSide, _ key: String) {
        let seen = "\(side) \(key): executing \(isExecuting), finished \(isFinished)"
        notes.withLock { $0.append(seen) }
        super.notify(side, key)
    }
}

/// The async operation's state machine and its KVO, which Apple's queue reads as the protocol
/// says: the old value in `willChangeValue`, the new one in `didChangeValue`.
@Suite struct AsyncOperationTests {
    @Test func eachNotificationSeesTheStateBeforeOrAfterItsChangeAsKVOWants() {
        let operation = NotingOperation()
        operation.start()

        #expect(operation.notes.withLock { $0 } == [
            "will isExecuting: executing false, finished false",
            "did isExecuting: executing true, finished false",
            "will isExecuting: executing true, finished false",
            "will isFinished: executing true, finished false",
            "did isExecuting: executing false, finished true",
            "did isFinished: executing false, finished true",
        ])
    }

    @Test func anOperationCancelledBeforeItStartsFinishesWithoutExecutingAndOnlyOnce() {
        let operation = NotingOperation()
        operation.cancel()
        operation.start()
        operation.start()

        #expect(operation.isFinished && !operation.isExecuting)
        #expect(operation.notes.withLock { $0 }.filter { $0.hasPrefix("did isFinished") }.count == 1)
    }
}

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

/// An operation whose work goes on until it is finished from outside.
private final class OpenEndedOperation: AsyncOperation, @unchecked Sendable {
    // Safety: `executed` is locked.
    let executed = Locked(false)

    override func execute() {
        executed.withLock { $0 = true }
    }
}

/// An operation that finishes itself from inside the notification that it started, on the
/// thread that posts it, as a KVO observer may: the transition that notifies still holds its
/// lock then.
private final class FinishingInItsStartNotification: AsyncOperation, @unchecked Sendable {
    override func execute() {}

    override func notify(_ side: ChangeSide, _ key: String) {
        super.notify(side, key)
        if side == .did, key == "isExecuting", isExecuting { finish() }
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

    @Test func finishedBeforeItStartsItStaysPendingThenFinishesWhenStartedWithoutExecuting() {
        let operation = OpenEndedOperation()
        operation.finish()

        #expect(operation.state == .pending, "a queue lets go of an operation that finished before it started")

        operation.start()

        #expect(operation.isFinished && !operation.isExecuting)
        #expect(operation.executed.withLock { $0 } == false)
    }

    @Test func anObserverMayFinishTheOperationFromInsideItsStartNotification() {
        let operation = FinishingInItsStartNotification()
        let started = DispatchSemaphore(value: 0)
        // On a thread of its own: a lock that is not recursive would hold it for good.
        Thread {
            operation.start()
            started.signal()
        }.start()

        #expect(started.wait(timeout: .now() + 10) == .success, "start() did not return: the transition's lock deadlocked")
        #expect(operation.isFinished && !operation.isExecuting)
    }
}

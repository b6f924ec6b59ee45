import Foundation

/// The baseline: the least an asynchronous `Operation` can be. Its work calls `finish` when
/// done; KVO is posted outside the lock, as corelibs Foundation needs.
final class PlainAsyncOperation: Operation, @unchecked Sendable {
    // Safety: the flags are read and written under `lock`.
    private let work: @Sendable (_ finish: @escaping @Sendable () -> Void) -> Void
    private let lock = NSLock()
    private var executing = false
    private var finished = false

    init(_ work: @escaping @Sendable (_ finish: @escaping @Sendable () -> Void) -> Void) {
        self.work = work
    }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { lock.withLock { executing } }
    override var isFinished: Bool { lock.withLock { finished } }

    override func start() {
        if isCancelled {
            markFinished(wasExecuting: false)
            return
        }
        willChangeValue(forKey: "isExecuting")
        lock.withLock { executing = true }
        didChangeValue(forKey: "isExecuting")
        work { [self] in markFinished(wasExecuting: true) }
    }

    private func markFinished(wasExecuting: Bool) {
        if wasExecuting { willChangeValue(forKey: "isExecuting") }
        willChangeValue(forKey: "isFinished")
        lock.withLock {
            executing = false
            finished = true
        }
        if wasExecuting { didChangeValue(forKey: "isExecuting") }
        didChangeValue(forKey: "isFinished")
    }
}

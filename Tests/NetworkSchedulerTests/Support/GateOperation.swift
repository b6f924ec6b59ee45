import Foundation

/// An app's operation that runs until the test opens it: a stand-in for an import, a
/// migration, a login of the app's own.
final class GateOperation: Operation, @unchecked Sendable {
    // Safety: `phase` is behind `lock`.
    private enum Phase { case pending, executing, finished }
    private let lock = NSLock()
    private var phase = Phase.pending
    private var isOpen = false

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { lock.withLock { phase == .executing } }
    override var isFinished: Bool { lock.withLock { phase == .finished } }

    override func start() {
        let finishAtOnce = lock.withLock {
            phase = .executing
            return isOpen || isCancelled
        }
        willChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isExecuting")
        if finishAtOnce { finish() }
    }

    /// Lets it finish: at once if it runs, or as soon as it starts.
    func open() {
        let isRunning = lock.withLock {
            isOpen = true
            return phase == .executing
        }
        if isRunning { finish() }
    }

    private func finish() {
        let wasRunning = lock.withLock {
            defer { phase = .finished }
            return phase == .executing
        }
        guard wasRunning else { return }
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
    }
}

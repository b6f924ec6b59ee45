import Foundation

/// An `Operation` whose work finishes later, on another thread, with an explicit state machine.
///
/// Subclasses override ``execute()`` and call ``finish()`` exactly when their work is done;
/// a second `finish()` is harmless. The KVO notifications the queue relies on are posted after
/// the state lock is released, on the thread that changed the state: on Linux the queue reads
/// `isFinished` from inside `didChangeValue` and would deadlock otherwise.
class AsyncOperation: Operation, @unchecked Sendable {
    // Safety: all mutable state is in `locks`, each part under the mutex that guards it.

    /// Where an operation is in its life. It only ever moves forward.
    enum State: Sendable, Equatable {
        /// Created, possibly in a queue, not started.
        case pending
        /// Started and doing its work.
        case executing
        /// Done, by finishing its work or by being cancelled before it started.
        case finished
    }

    /// The state's lock, and the transitions' lock, held through a whole transition,
    /// `willChangeValue` to `didChangeValue`, so that KVO sees the old state before the change
    /// and the new one after, on Apple platforms as the protocol wants. The transitions' lock
    /// also guards `finishesWhenStarted`: `finish()` was called before the operation started,
    /// so it finishes when it starts.
    private let locks = OperationLocks.make()

    /// The current state.
    var state: State { locks.withState { $0 } }

    /// Always true: the operation goes on after `start()` returns, until it calls `finish()`.
    override var isAsynchronous: Bool { true }
    /// Whether it has started and not finished.
    override var isExecuting: Bool { state == .executing }
    /// Whether it has finished; its queue then lets it go and its dependents run.
    override var isFinished: Bool { state == .finished }

    /// A cancelled operation reports its outcome (``skipExecution()``) before it is marked
    /// finished: an operation that depends on it must not run before that outcome is known.
    override final func start() {
        locks.lockTransitions()
        let isStarting = transition(to: .executing) == .pending
        let finishesAtOnce = locks.finishesWhenStarted
        locks.unlockTransitions()
        guard isStarting else { return }
        if finishesAtOnce {
            finish()
        } else if isCancelled {
            skipExecution()
        } else {
            execute()
        }
    }

    /// Runs `body` under the lock that guards the state, for a subclass's own state: one lock
    /// per operation instead of two. `body` must not call back into the operation.
    final func withStateLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try locks.withState { _ in try body() }
    }

    /// The work. Call `finish()` when it is done.
    func execute() {
        finish()
    }

    /// Called instead of ``execute()`` when the operation was cancelled before it started. Call
    /// `finish()` once its outcome is reported; by default, at once.
    func skipExecution() {
        finish()
    }

    /// Marks the operation finished; the queue then starts the next one. Harmless if repeated.
    /// Called before the operation started, it takes effect when it starts: a queue lets go of
    /// an operation that says it finished before the queue started it, while the operations
    /// it depends on may still point to it (corelibs Foundation then crashes when they finish).
    final func finish() {
        locks.lockTransitions()
        defer { locks.unlockTransitions() }
        guard state != .pending else {
            locks.finishesWhenStarted = true
            return
        }
        _ = transition(to: .finished)
    }

    /// Moves forward to `next` and posts KVO for what changed: `willChangeValue` before the
    /// state changes, `didChangeValue` after, neither under the state's lock. Returns the state
    /// it left, or nil when the move was not forward (a repeated finish, a start after finishing).
    private func transition(to next: State) -> State? {
        locks.lockTransitions()
        defer { locks.unlockTransitions() }
        let previous = state
        switch (previous, next) {
        case (.pending, .executing), (.executing, .finished): break
        default: return nil
        }
        let executingChanged = previous == .executing || next == .executing
        if executingChanged { notify(.will, "isExecuting") }
        if next == .finished { notify(.will, "isFinished") }
        locks.withState { $0 = next }
        if executingChanged { notify(.did, "isExecuting") }
        if next == .finished { notify(.did, "isFinished") }
        return previous
    }

    /// Which side of a change a KVO notification is on.
    enum ChangeSide { case will, did }

    /// Posts KVO's `willChangeValue` or `didChangeValue` for `key`. Overridable, since on Linux
    /// those two are not: a test sees the state each notification sees.
    func notify(_ side: ChangeSide, _ key: String) {
        switch side {
        case .will: willChangeValue(forKey: key)
        case .did: didChangeValue(forKey: key)
        }
    }
}

import Foundation

/// A request as an `Operation` of the app's (see
/// ``APIClient/operation(for:priority:group:after:completion:)``): it sends its request when it
/// starts, and finishes once its caller's completion has run, whatever the outcome.
///
/// It is one caller like any other (its ``handle``), so its `cancel()` ends that caller only,
/// and its `queuePriority` and the request's priority are one: setting either sets both.
final class RequestOperation: AsyncOperation, @unchecked Sendable {
    // Safety: `outcomeValue` is behind the state lock; the rest is immutable (the dependencies,
    // which may not be Sendable, are read once, when the operation starts).

    /// Its caller, made at once (with its group, held weakly as every caller's) and sent when
    /// the operation starts.
    let handle: RequestHandle
    private let prerequisites: [any RequestDependency]
    private var outcomeValue: RequestHandle.Outcome?
    /// Cancelled while an operation it depends on (by `addDependency`) had not finished.
    private var isCancelledWhileWaiting = false

    init(handle: RequestHandle, after dependencies: [any RequestDependency]) {
        self.handle = handle
        self.prerequisites = dependencies
        super.init()
        super.queuePriority = handle.priority.queuePriority
        handle.operation = self
        handle.whenFinished { [weak self] outcome in self?.ended(with: outcome) }
        // Listed at once, so that cancelling its group before it starts cancels it too.
        _ = handle.group?.insert(handle)
    }

    /// Released without ever starting: its caller ends with `.cancelled`, unsent, so that its
    /// completion runs once and its group lets it go.
    deinit {
        if state == .pending { handle.complete(with: .failure(.cancelled)) }
    }

    /// How its caller ended, once its completion has run.
    var outcome: RequestHandle.Outcome? {
        withStateLock { outcomeValue }
    }

    override func execute() {
        handle.scheduler.admit(handle, after: prerequisites)
        // Cancelled while it was being sent: `cancel()` may have found it not yet in its machine.
        if isCancelled { handle.cancel() }
    }

    /// Cancelled before it started: its caller ends with `.cancelled`, without touching the
    /// network, and the operation finishes once that completion has run.
    override func skipExecution() {
        handle.complete(with: .failure(.cancelled))
    }

    /// Ends its caller with `.cancelled`; a call it shares with other callers goes on for them.
    ///
    /// While an operation it depends on has not finished, the caller ends at once but the
    /// operation stays in its queue until that dependency finishes, then finishes unsent:
    /// corelibs Foundation lets go of an operation cancelled before its dependencies finished
    /// while they still point to it, and the process crashes when one of them finishes.
    override func cancel() {
        guard dependencies.contains(where: { !$0.isFinished }) else {
            super.cancel()
            if state == .executing { handle.cancel() }
            return
        }
        withStateLock { isCancelledWhileWaiting = true }
        if state == .pending {
            handle.complete(with: .failure(.cancelled))
        } else {
            handle.cancel()
        }
    }

    override var isCancelled: Bool {
        super.isCancelled || withStateLock { isCancelledWhileWaiting }
    }

    /// Its caller was cancelled (by its group) before it entered its scheduler: cancels the
    /// operation, unless it is already.
    func cancelBeforeSending() {
        if !isCancelled { cancel() }
    }

    /// The request's priority, as an operation's: setting it re-ranks the request at once.
    override var queuePriority: Operation.QueuePriority {
        get { super.queuePriority }
        set {
            super.queuePriority = newValue
            handle.priority = RequestPriority(newValue)
        }
    }

    /// The priority its caller was given (through its handle or this operation).
    func priorityChanged(to priority: RequestPriority) {
        if RequestPriority(super.queuePriority) != priority { super.queuePriority = priority.queuePriority }
    }

    private func ended(with outcome: RequestHandle.Outcome) {
        withStateLock { outcomeValue = outcome }
        finish()
    }
}

/// Connects an awaiting Swift task to its caller's handle, which may not exist yet: the task's
/// cancellation and its priority escalation can come before, during or after the request is
/// sent.
final class AwaitingTaskLink: Sendable {
    private enum State {
        /// Not sent yet; the priority the task was escalated to meanwhile, if it was.
        case empty(escalatedTo: RequestPriority?)
        case attached(RequestHandle)
        case cancelled
    }

    private let state = Locked(State.empty(escalatedTo: nil))

    /// Whether the task was cancelled (the handle, if attached, is then cancelled too).
    var isCancelled: Bool {
        state.withLock { state in
            if case .cancelled = state { return true }
            return false
        }
    }

    /// Links the caller's handle: cancelled at once if the task was, raised at once if it
    /// was escalated meanwhile.
    func attach(_ handle: RequestHandle) {
        let (cancelledAlready, escalated) = state.withLock { state -> (Bool, RequestPriority?) in
            switch state {
            case .cancelled:
                return (true, nil)
            case .empty(let escalated):
                state = .attached(handle)
                return (false, escalated)
            case .attached:
                preconditionFailure("a task awaits one caller")
            }
        }
        if cancelledAlready { handle.cancel() }
        if let escalated { Self.raise(handle, to: escalated) }
    }

    func cancel() {
        let handle: RequestHandle? = state.withLock { state in
            defer { state = .cancelled }
            if case .attached(let handle) = state { return handle }
            return nil
        }
        handle?.cancel()
    }

    /// The task now runs at `priority` (a task of higher priority awaits it, or the app
    /// raised it): its caller rises in its host's line to the request priority it maps to,
    /// never falls. The caller's own priority, set later, replaces it.
    func escalate(to priority: TaskPriority) {
        let raised = RequestPriority(escalatedTo: priority)
        let handle: RequestHandle? = state.withLock { state in
            switch state {
            case .empty(let earlier):
                state = .empty(escalatedTo: max(earlier ?? raised, raised))
                return nil
            case .attached(let handle):
                return handle
            case .cancelled:
                return nil
            }
        }
        if let handle { Self.raise(handle, to: raised) }
    }

    private static func raise(_ handle: RequestHandle, to priority: RequestPriority) {
        if priority > handle.priority { handle.priority = priority }
    }
}

extension RequestPriority {
    /// The priority of a request whose awaiting task was escalated to `taskPriority`:
    /// `.high` for `.high` (and `.userInitiated`) or above, `.normal` for `.medium`, `.low` for
    /// `.low` (and `.utility`), `.background` below. Never `.critical`, which only the app gives.
    init(escalatedTo taskPriority: TaskPriority) {
        switch taskPriority.rawValue {
        case TaskPriority.high.rawValue...: self = .high
        case TaskPriority.medium.rawValue...: self = .normal
        case TaskPriority.low.rawValue...: self = .low
        default: self = .background
        }
    }
}

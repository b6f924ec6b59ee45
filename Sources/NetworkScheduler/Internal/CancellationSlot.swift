/// Connects a Swift task's cancellation to a handle that may not exist yet: the cancellation
/// handler can run before, during or after the request is sent.
final class CancellationSlot: Sendable {
    private enum State {
        case empty
        case attached(RequestHandle)
        case cancelled
    }

    private let state = Locked(State.empty)

    /// Whether the task was cancelled (the handle, if attached, is then cancelled too).
    var isCancelled: Bool {
        state.withLock { state in
            if case .cancelled = state { return true }
            return false
        }
    }

    func attach(_ handle: RequestHandle) {
        let cancelledAlready = state.withLock { state -> Bool in
            if case .cancelled = state { return true }
            state = .attached(handle)
            return false
        }
        if cancelledAlready { handle.cancel() }
    }

    func cancel() {
        let handle: RequestHandle? = state.withLock { state in
            defer { state = .cancelled }
            if case .attached(let handle) = state { return handle }
            return nil
        }
        handle?.cancel()
    }
}


/// Counts a screen's requests in flight so that callers can wait until it has settled.
final class ScreenActivity: Sendable {
    private struct State {
        var pending = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Protected(State())

    func begin() {
        state.withLock { $0.pending += 1 }
    }

    func end() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.pending -= 1
            guard state.pending == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func settled() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                if state.pending == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}

@testable import NetworkScheduler

/// A connectivity monitor the test switches by hand.
final class StubConnectivity: ConnectivityMonitor {
    private let state: Locked<(connected: Bool, onChange: (@Sendable (Bool) -> Void)?)>

    init(connected: Bool) {
        state = Locked((connected, nil))
    }

    var isConnected: Bool { state.withLock { $0.connected } }

    func start(onChange: @escaping @Sendable (Bool) -> Void) {
        state.withLock { $0.onChange = onChange }
    }

    func set(connected: Bool) {
        let onChange = state.withLock { state in
            state.connected = connected
            return state.onChange
        }
        onChange?(connected)
    }
}

/// Counts how often something happened, for stubs whose answer depends on it.
final class Counter: Sendable {
    private let value = Locked(0)

    /// Adds one and returns the new count.
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
    var count: Int { value.withLock { $0 } }
}

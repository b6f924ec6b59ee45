import NetworkScheduler
import Synchronization

/// A connectivity monitor the demo switches by hand, as the system would when the device goes
/// offline and comes back.
final class SwitchableConnectivity: ConnectivityMonitor {
    private struct State {
        var isConnected = true
        var onChange: (@Sendable (Bool) -> Void)?
    }

    private let state = Mutex(State())

    var isConnected: Bool { state.withLock { $0.isConnected } }

    func start(onChange: @escaping @Sendable (Bool) -> Void) {
        state.withLock { $0.onChange = onChange }
    }

    /// Tells the scheduler the network went away, or came back.
    func set(connected: Bool) {
        let onChange = state.withLock { state in
            state.isConnected = connected
            return state.onChange
        }
        onChange?(connected)
    }
}

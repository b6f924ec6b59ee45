import NetworkScheduler

/// A connectivity monitor switched by hand: give it to a scheduler
/// (`RequestScheduler.Configuration.connectivityMonitor`) and take the device offline and back.
///
/// ```swift
/// let connectivity = StubConnectivity(connected: false)
/// let scheduler = RequestScheduler { $0.transport = transport; $0.connectivityMonitor = connectivity }
/// … requests wait, unsent …
/// connectivity.set(connected: true) // they go
/// ```
public final class StubConnectivity: ConnectivityMonitor {
    private struct State {
        var isConnected: Bool
        var onChange: (@Sendable (Bool) -> Void)?
    }

    private let state: Locked<State>

    /// A monitor that reports `connected` until told otherwise.
    ///
    /// - Parameter connected: whether the network is reachable at first.
    public init(connected: Bool = true) {
        state = Locked(State(isConnected: connected))
    }

    /// Whether it reports the network reachable now.
    public var isConnected: Bool { state.withLock { $0.isConnected } }

    /// Remembers whom to tell of changes: the scheduler that was given this monitor.
    ///
    /// - Parameter onChange: called with each new state, on the thread that sets it.
    public func start(onChange: @escaping @Sendable (Bool) -> Void) {
        state.withLock { $0.onChange = onChange }
    }

    /// Reports the network reachable, or not, to the scheduler.
    ///
    /// - Parameter connected: whether it is reachable now.
    public func set(connected: Bool) {
        let onChange = state.withLock { state in
            state.isConnected = connected
            return state.onChange
        }
        onChange?(connected)
    }
}

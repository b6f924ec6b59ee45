/// Tells the scheduler whether the device can reach the network.
///
/// With a monitor, requests wait while the device is offline instead of failing: the queues
/// stop starting calls, and a call that fails for lack of a connection waits to be sent again.
/// Apple platforms can use `PathConnectivityMonitor`; tests and servers plug in their own.
public protocol ConnectivityMonitor: Sendable {
    /// Whether the network is reachable now.
    var isConnected: Bool { get }
    /// Starts reporting changes; `onChange` is called with each new state.
    ///
    /// - Parameter onChange: to call with each new state, on any thread.
    func start(onChange: @escaping @Sendable (_ isConnected: Bool) -> Void)
}

#if canImport(Network)
import Network

/// A ``ConnectivityMonitor`` backed by `NWPathMonitor`.
public final class PathConnectivityMonitor: ConnectivityMonitor {
    private let monitor = NWPathMonitor()
    private let connected = Locked(true)
    private let queue = DispatchQueue(label: "NetworkScheduler.connectivity")

    /// A monitor of every network interface; it reports once ``start(onChange:)`` is called.
    public init() {}

    deinit {
        monitor.cancel()
    }

    /// Whether the current path is satisfied.
    public var isConnected: Bool { connected.withLock { $0 } }

    /// Starts the path monitor on a queue of its own.
    public func start(onChange: @escaping @Sendable (_ isConnected: Bool) -> Void) {
        monitor.pathUpdateHandler = { [connected] path in
            let isConnected = path.status == .satisfied
            connected.withLock { $0 = isConnected }
            onChange(isConnected)
        }
        monitor.start(queue: queue)
    }
}
#endif

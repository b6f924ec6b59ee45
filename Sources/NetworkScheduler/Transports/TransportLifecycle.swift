/// Whether a transport is open, and who to tell when it closes: the schedulers that use it end
/// every caller they hold (``ServiceError/cancelled``), and a request that reaches the
/// transport afterwards ends with ``ServiceError/transportClosed``.
///
/// A transport makes its tasks inside ``ifOpen(_:)``, so that none is made once
/// ``close()`` returned: URLSession traps on a task asked of an invalidated session.
///
/// ```swift
/// public final class MyTransport: HTTPTransport {
///     public let lifecycle = TransportLifecycle()
///     public func shutdown() { if lifecycle.close() { client.close() } }
/// }
/// ```
public final class TransportLifecycle: Sendable {
    private struct State {
        var isClosed = false
        var observers: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    /// An open lifecycle.
    public init() {}

    /// Whether ``close()`` was called.
    public var isClosed: Bool { state.withLock(\.isClosed) }

    /// Runs `body` while the transport is open, and keeps it open until `body` returns; nil,
    /// without running it, once it is closed. `body` must not call ``close()``.
    ///
    /// - Parameter body: makes a task; runs under the lifecycle's lock, so keep it short.
    public func ifOpen<T>(_ body: () throws -> T) rethrows -> T? {
        try state.withLock { state in state.isClosed ? nil : try body() }
    }

    /// Closes it: from now on ``ifOpen(_:)`` runs nothing, and each observer is told, once,
    /// after the lock is released. Returns false if it was closed already.
    @discardableResult
    public func close() -> Bool {
        let observers = state.withLock { state -> [@Sendable () -> Void]? in
            guard !state.isClosed else { return nil }
            state.isClosed = true
            defer { state.observers = [] }
            return state.observers
        }
        guard let observers else { return false }
        for observer in observers { observer() }
        return true
    }

    /// Calls `observer` once when it closes, or at once if it is closed already. A scheduler
    /// observes its transport's, weakly.
    func whenClosed(_ observer: @escaping @Sendable () -> Void) {
        let isClosed = state.withLock { state in
            if !state.isClosed { state.observers.append(observer) }
            return state.isClosed
        }
        if isClosed { observer() }
    }
}

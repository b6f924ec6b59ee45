@testable import NetworkScheduler

/// Counts how often something happened, for stubs whose answer depends on it.
final class Counter: Sendable {
    private let value = Locked(0)

    /// Adds one and returns the new count.
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
    var count: Int { value.withLock { $0 } }
}

import Foundation

/// A value guarded by one `NSLock`: the only way the library shares mutable state.
///
/// Decisions happen inside `withLock`; callbacks, continuation resumes and KVO notifications
/// happen after it returns, so no foreign code ever runs while the lock is held.
final class Locked<Value>: @unchecked Sendable {
    // Safety: `value` is only read or written inside `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

import Foundation

/// A value behind a lock: the kit's only shared mutable state.
final class Protected<Value>: @unchecked Sendable {
    // Safety: `value` is read and written only while `lock` is held.
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

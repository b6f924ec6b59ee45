import Foundation

/// A value behind an `NSLock`. Not `Synchronization.Mutex`: on Linux it locks with futexes the
/// thread sanitizer cannot see, and the sanitizer then reports races that are not there.
final class Protected<Value>: @unchecked Sendable {
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

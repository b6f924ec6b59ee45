import Foundation
import NetworkSchedulerTesting

/// The testing kit's `SeededGenerator` behind a lock: one seeded stream of choices that any thread may draw from. The
/// run's threads interleave as they please, so a seed fixes the mix of what happens, not its
/// order.
final class SeededRandom: Sendable {
    private let generator: Mutex<SeededGenerator>

    init(seed: UInt64) {
        generator = Mutex(SeededGenerator(seed: seed))
    }

    /// The next 64 random bits.
    func next() -> UInt64 {
        generator.withLock { $0.next() }
    }

    /// A number in `0..<bound`.
    func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }

    /// True `percent` times in a hundred.
    func chance(_ percent: Int) -> Bool { below(100) < percent }

    /// One of `elements`.
    func pick<Element>(_ elements: [Element]) -> Element { elements[below(elements.count)] }
}

/// A value behind an `NSLock`: the soak's own, since the library's lock is internal to it.
final class Mutex<Value>: @unchecked Sendable {
    // Safety: `value` is only touched under `lock`.
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

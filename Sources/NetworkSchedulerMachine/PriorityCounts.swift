/// How many live callers of one call ask for each priority, so the call's effective priority
/// (the highest) is known in constant time as callers join and leave. Kept inline: no
/// allocation per call.
@usableFromInline struct PriorityCounts: Sendable, Equatable {
    @usableFromInline var counts = SIMD8<Int32>()

    @inlinable var highest: RequestPriority? {
        RequestPriority.allCases.last { counts[$0.rawValue] > 0 }
    }

    @inlinable mutating func add(_ priority: RequestPriority) {
        counts[priority.rawValue] += 1
    }

    @inlinable mutating func remove(_ priority: RequestPriority) {
        precondition(counts[priority.rawValue] > 0, "removing a priority that was never added")
        counts[priority.rawValue] -= 1
    }

    @inlinable init() {}
}

/// How urgent a request is. Under saturation a waiting request never starts before a waiting
/// request of higher priority; equal priorities start first-in first-out.
public enum RequestPriority: Int, Comparable, CaseIterable, Sendable, CustomStringConvertible {
    /// Prefetching nobody is waiting for.
    case background
    /// Data the user may need soon.
    case low
    /// The default.
    case normal
    /// What is on screen now.
    case high
    /// What the user is blocked on: a login, a submit.
    case critical

    /// Whether `lhs` is less urgent than `rhs`.
    @inlinable public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The priority's name.
    @inlinable public var description: String {
        switch self {
        case .background: "background"
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        case .critical: "critical"
        }
    }
}

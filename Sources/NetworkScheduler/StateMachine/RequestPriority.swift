import Foundation

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
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The priority's name.
    public var description: String {
        switch self {
        case .background: "background"
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        case .critical: "critical"
        }
    }
}

extension RequestPriority {
    /// The priority of a request whose operation has `queuePriority`: one level each, from
    /// `.veryLow` (background) to `.veryHigh` (critical); a value between two takes the lower.
    init(_ queuePriority: Operation.QueuePriority) {
        self = switch queuePriority.rawValue {
        case ..<Operation.QueuePriority.low.rawValue: .background
        case ..<Operation.QueuePriority.normal.rawValue: .low
        case ..<Operation.QueuePriority.high.rawValue: .normal
        case ..<Operation.QueuePriority.veryHigh.rawValue: .high
        default: .critical
        }
    }

    /// The `queuePriority` of a request's operation at this priority.
    var queuePriority: Operation.QueuePriority {
        switch self {
        case .background: .veryLow
        case .low: .low
        case .normal: .normal
        case .high: .high
        case .critical: .veryHigh
        }
    }
}

import Foundation

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

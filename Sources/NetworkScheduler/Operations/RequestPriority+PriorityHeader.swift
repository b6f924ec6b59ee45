extension RequestPriority {
    /// The urgency RFC 9218 gives a request at this priority, from 0 (the most urgent) to 7:
    /// `.critical` 0, `.high` 1, `.normal` 3 (what a server assumes of a request that says
    /// nothing), `.low` 5, `.background` 7 (the RFC's level for work nobody waits on).
    var urgency: Int {
        switch self {
        case .critical: 0
        case .high: 1
        case .normal: 3
        case .low: 5
        case .background: 7
        }
    }

    /// The `Priority` header (RFC 9218) of a request at this priority: its urgency, and `i` if
    /// its answer is of use as it arrives (a stream's, a download's). Nil when it would only
    /// say what a server assumes without one (`u=3`, not incremental), so that a request at
    /// the default sends no byte more.
    ///
    /// - Parameter isIncremental: whether the answer is read as it arrives.
    func priorityHeader(isIncremental: Bool) -> String? {
        switch (urgency, isIncremental) {
        case (3, false): nil
        case (3, true): "i"
        case (let urgency, false): "u=\(urgency)"
        case (let urgency, true): "u=\(urgency), i"
        }
    }
}

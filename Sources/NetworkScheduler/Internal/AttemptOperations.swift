/// The operations of the attempts the machine started, by attempt: what only the scheduler
/// holds, since the machine names attempts and never their tasks. It lives under the
/// scheduler's lock with the machine, so that a cancellation or a new priority decided while an
/// attempt's operation is being made, outside the lock, reaches that operation.
struct AttemptOperations {
    enum Entry {
        /// Started: its operation is being made. A priority given meanwhile is kept for it.
        case making(newPriority: RequestPriority?)
        /// Cancelled while its operation was being made: the operation runs cancelled, and
        /// so reports at once without touching the network. `isOver` if the machine is done
        /// with the attempt: the operation is then not kept.
        case cancelledWhileMaking(isOver: Bool)
        case made(DataTaskOperation)
    }

    private(set) var entries: [AttemptID: Entry] = [:]

    /// How many attempts have an operation made or being made.
    var count: Int { entries.count }

    /// The machine started `attempt`; its operation is made after the lock is released.
    mutating func started(_ attempt: AttemptID) {
        entries[attempt] = .making(newPriority: nil)
    }

    /// Stores the operation made for `attempt`. Returns whether it is to run cancelled, and
    /// the priority it was given while it was made, if any.
    mutating func store(_ operation: DataTaskOperation, for attempt: AttemptID)
        -> (isCancelled: Bool, newPriority: RequestPriority?) {
        switch entries[attempt] {
        case .making(let newPriority):
            entries[attempt] = .made(operation)
            return (false, newPriority)
        case .cancelledWhileMaking(let isOver):
            entries[attempt] = isOver ? nil : .made(operation)
            return (true, nil)
        case .made, nil:
            preconditionFailure("\(attempt) has one operation, made once")
        }
    }

    /// The machine cancelled `attempt`: returns its operation, to cancel once the lock is
    /// released, if it is made. `isOver` if the machine is done with the attempt (it passed
    /// its deadline): its operation is forgotten at once, since it may never report.
    mutating func cancel(_ attempt: AttemptID, isOver: Bool = false) -> DataTaskOperation? {
        switch entries[attempt] {
        case .made(let operation):
            if isOver { entries[attempt] = nil }
            return operation
        case .making:
            entries[attempt] = .cancelledWhileMaking(isOver: isOver)
        case .cancelledWhileMaking:
            if isOver { entries[attempt] = .cancelledWhileMaking(isOver: true) }
        case nil:
            break
        }
        return nil
    }

    /// The machine gave `attempt` a new priority: returns its operation, to tell once the lock
    /// is released, if it is made.
    mutating func reprioritize(_ attempt: AttemptID, to priority: RequestPriority) -> DataTaskOperation? {
        switch entries[attempt] {
        case .made(let operation): return operation
        case .making: entries[attempt] = .making(newPriority: priority)
        case .cancelledWhileMaking, nil: break
        }
        return nil
    }

    /// `attempt`'s operation reported its end: the scheduler forgets it.
    mutating func ended(_ attempt: AttemptID) {
        entries[attempt] = nil
    }
}

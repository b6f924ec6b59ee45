/// The operations of the attempts the machine started, by attempt: what only the scheduler
/// holds, since the machine names attempts and never their tasks. It lives under the
/// scheduler's lock with the machine, and an attempt's operation is made and stored there in
/// the event that started it, so that whatever the machine decides for that attempt later
/// finds it.
struct AttemptOperations {
    private(set) var operations: [AttemptID: DataTaskOperation] = [:]

    /// How many attempts have an operation that has not reported its end.
    var count: Int { operations.count }

    /// Keeps the operation made for `attempt`, as the machine starts it.
    mutating func store(_ operation: DataTaskOperation, for attempt: AttemptID) {
        precondition(operations.updateValue(operation, forKey: attempt) == nil, "\(attempt) has one operation, made once")
    }

    /// The machine cancelled `attempt`: returns its operation, to cancel once the lock is
    /// released. `isOver` if the machine is done with the attempt (it passed its deadline):
    /// its operation is forgotten at once, since it may never report.
    mutating func cancel(_ attempt: AttemptID, isOver: Bool = false) -> DataTaskOperation? {
        isOver ? operations.removeValue(forKey: attempt) : operations[attempt]
    }

    /// The machine gave `attempt` a new priority: returns its operation, to tell once the lock
    /// is released.
    func reprioritize(_ attempt: AttemptID) -> DataTaskOperation? {
        operations[attempt]
    }

    /// `attempt`'s operation reported its end: the scheduler forgets it.
    mutating func ended(_ attempt: AttemptID) {
        operations[attempt] = nil
    }
}

import Foundation

extension SchedulerState {
    /// Where a call's current attempt is.
    enum Attempt {
        /// In its host's waiting line since this uptime; `ticket` marks its live entry there,
        /// and `arrival` its place within a priority, kept when it moves to another.
        case waiting(ticket: Int, arrival: Int, since: UInt64)
        /// Its operation holds one of its host's budget slots.
        case running(DataTaskOperation)
        /// Between attempts: waiting to retry, or for a new token.
        case paused
    }

    /// One network call, from its first attempt until its outcome is delivered or its last
    /// caller leaves.
    ///
    /// A class, reached by reference from its callers' handles, its waiting-line entries and
    /// its operation, so that no request is looked up in a table of calls.
    final class Call: @unchecked Sendable {
        // Safety: every property is read and written only under the scheduler's lock; other
        // threads only carry the reference back there (an operation's completion, a retry timer).
        let key: RequestKey?
        /// The `Idempotency-Key` it carries (made for it, or set by its resource), the same for
        /// every attempt; it gives 409 and 422 their meaning.
        let idempotencyKey: String?
        /// The first caller's request: how to build it again after a token refresh.
        let submission: Submission
        /// The request as sent, with its idempotency key, reused by every attempt.
        var request: PreparedRequest
        /// Its host's budget and waiting line.
        let lane: Lane
        var attempt = Attempt.paused
        var attemptNumber = 1
        var replayedWithNewToken = false
        var wasShared = false
        /// False once its outcome is delivered or its last caller left: what still refers to
        /// it (a stale line entry, a finishing operation, a retry timer) then does nothing.
        var isLive = true
        var subscribers: Subscribers
        /// The next call registered under the same hash as this one's key (see ``CallRegistry``).
        var nextWithSameHash: Call?
        var priorities = PriorityCounts()

        init(key: RequestKey?, submission: Submission, request: PreparedRequest, lane: Lane, firstCaller: RequestHandle) {
            self.key = key
            self.submission = submission
            self.request = request
            idempotencyKey = request.header("idempotency-key")
            self.lane = lane
            subscribers = Subscribers(firstCaller)
            priorities.add(firstCaller.priority)
        }

        /// Moves a waiting call to running, with the operation `make` builds from its request
        /// and the uptime since which it waited.
        func begin(_ make: (PreparedRequest, _ waitingSince: UInt64) -> DataTaskOperation) -> DataTaskOperation {
            guard case .waiting(_, _, let since) = attempt, let priority = priorities.highest else {
                preconditionFailure("only a waiting call, which has callers, can begin an attempt")
            }
            let operation = make(request, since)
            operation.queuePriority = priority.queuePriority
            attempt = .running(operation)
            return operation
        }
    }

    /// One host's network calls: how many hold a budget slot, and which wait for one. A class,
    /// so that a call reaches its lane without hashing its host on every step.
    final class Lane {
        let queue: OperationQueue
        var running = 0
        /// How many of `running` are `.low` or `.background` calls.
        var lowPriorityRunning = 0
        var waiting = WaitingLine()
        /// Live entries in `waiting`.
        var waitingCount = 0

        init(queue: OperationQueue) {
            self.queue = queue
        }
    }
}

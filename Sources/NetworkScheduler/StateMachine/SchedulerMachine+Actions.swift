import Foundation

extension SchedulerMachine {
    /// An attempt the scheduler must start: make its operation, and run it. The machine names
    /// it by its ID from then on (to cancel it, or give it a new priority), and never holds it.
    struct AttemptStart {
        let id: AttemptID
        let request: PreparedRequest
        let submission: Submission
        /// The uptime since which its call waited in its line.
        let waitingSince: UInt64
        /// The call's priority as it starts, for its task.
        let priority: RequestPriority
        /// The rank it started at: its priority, raised by any promotions while it waited.
        let rank: RequestPriority
        /// Its number for the retry policy: 1 for the first try (a replay with a new token
        /// keeps its number).
        let attemptNumber: Int
    }

    /// An attempt the machine ended at its deadline: its call waits for the verdict on that
    /// timeout, read as any attempt's result is, then reported with
    /// ``SchedulerMachine/expiryJudged(_:_:now:)``.
    struct Expiry {
        let id: AttemptID
        let request: PreparedRequest
        let submission: Submission
        let attemptNumber: Int
    }

    /// A token refresh the scheduler must run, then report with
    /// ``SchedulerMachine/tokenRefreshed(_:rebuilt:now:)``.
    struct TokenRefresh {
        let call: CallID
        /// The call's, whose authenticator gets the token and which builds its request again.
        let submission: Submission
        /// The token the server rejected.
        let rejected: String?
        /// The `Idempotency-Key` the call carries, which its rebuilt request carries again.
        let idempotencyKey: String?
    }

    /// A call that will be tried again, for the event monitors.
    struct Retry {
        let call: CallID
        let request: PreparedRequest
        let attempt: Int
        let delay: TimeInterval
        /// What the attempt before it ended with.
        let outcome: Result<TransportResponse, ServiceError>
    }

    /// What the scheduler must do after an event, once it has released its lock.
    struct Actions {
        /// Attempts that got a budget slot.
        var starts = SmallBatch<AttemptStart>()
        /// Attempts whose callers all left: cancel their tasks, which still report their end.
        var cancels = SmallBatch<AttemptID>()
        /// Attempts ended at their deadline: cancel their tasks. The machine is done with them,
        /// whether or not they ever report.
        var deadlinePassed = SmallBatch<AttemptID>()
        /// Running attempts whose call's priority changed, with the new one, for their tasks.
        var reprioritized = SmallBatch<(AttemptID, RequestPriority)>()
        /// Callers whose outcome is decided, with what each gets.
        var deliveries = SmallBatch<(CallerHandle, CallResult)>()
        /// Callers that were cancelled: each gets `.cancelled`.
        var cancelled: [CallerHandle] = []
        /// Arm the timer for this uptime, then report ``SchedulerMachine/timerFired(now:date:)``.
        var armTimer: UInt64?
        var refreshes = SmallBatch<TokenRefresh>()
        /// Calls promoted after waiting too long, for the monitors: the call, its request, and
        /// the rank it rose from and to.
        var promotions = SmallBatch<(CallID, PreparedRequest, from: RequestPriority, to: RequestPriority)>()
        var retries = SmallBatch<Retry>()
        /// Keyed calls that ran on after their callers left, with their outcome, which is kept
        /// for identical requests.
        var kept = SmallBatch<(PreparedRequest, Result<TransportResponse, ServiceError>)>()
        /// Hosts paused, probing or available again.
        var healthChanges = SmallBatch<HealthChange>()
        /// Attempts ended at their deadline, whose calls wait for the verdict on it.
        var expiries = SmallBatch<Expiry>()
    }
}


extension SchedulerMachine {
    /// An attempt the scheduler must start: make its operation, and run it. The machine names
    /// it by its ID from then on (to cancel it, or give it a new priority), and never holds it.
    struct AttemptStart {
        let id: AttemptID
        let request: Request
        /// The uptime since which its call waited in its line.
        let waitingSince: UInt64
        /// The call's priority as it starts, for its task.
        let priority: RequestPriority
        /// The rank it started at: its priority, raised by any promotions while it waited.
        let rank: RequestPriority
        /// Its number for the retry policy: 1 for the first try (a replay with a new token
        /// keeps its number).
        let attemptNumber: Int
        /// Its call's callers (in no set order), when the machine names them; else none.
        var callers: [CallerHandle] = []
    }

    /// An attempt that failed, or that the machine ended at its deadline, whose call waits for
    /// the verdict on it: the scheduler reads `outcome` by the call's retry policy (outside
    /// the lock: its decider may be the app's) and reports it with
    /// ``SchedulerMachine/verdictReached(_:_:answer:now:)``.
    struct VerdictWanted {
        let id: AttemptID
        let request: Request
        let attemptNumber: Int
        /// What the attempt ended with: ``CallOutcome/attemptTimedOut`` for one the machine
        /// ended.
        let outcome: Outcome
    }

    /// A token refresh the scheduler must run, then report with
    /// ``SchedulerMachine/tokenRefreshed(_:rebuilt:now:)``.
    struct TokenRefresh {
        let call: CallID
        /// The token the server rejected.
        let rejected: String?
        /// The request it was sent with, from which the shell builds it again with the new
        /// token.
        let request: Request
        /// The most seconds the call waits for the new token: its request's timeout.
        let patience: Seconds
    }

    /// A call that will be tried again, for the event monitors.
    struct Retry {
        let call: CallID
        let request: Request
        let attempt: Int
        let delay: Seconds
        /// What the attempt before it ended with.
        let outcome: Outcome
        /// Its call's callers, when the machine names them; else none.
        var callers: [CallerHandle] = []
    }

    /// A running attempt whose call's priority changed, with the new one, for its task.
    struct Reprioritization: Equatable {
        let attempt: AttemptID
        let priority: RequestPriority
    }

    /// A caller whose outcome is decided, with what it gets.
    struct Delivery {
        let caller: CallerHandle
        let outcome: Outcome
        /// Its waits and sharing, on the machine's clock.
        var measured = Measured()
        /// The call it was served by, whose callers are delivered one after another; nil for an
        /// outcome that came from elsewhere (the cache, an error before any call).
        var servedBy: ServingCall?
    }

    /// A call that served a caller, and its request.
    struct ServingCall {
        let id: CallID
        let request: Request
    }

    /// What the machine measured of a caller's wait, in seconds.
    struct Measured: Equatable, Sendable {
        /// Whether other callers shared its call.
        var wasShared = false
        /// From joining until the last attempt of its call got a budget slot (zero for a
        /// caller that joined a call already on the wire).
        var queued: Seconds = 0
        /// From that slot to the outcome.
        var onTheWire: Seconds = 0
    }

    /// A step of a call's upload, for a caller that joined it after the step was told.
    struct ProgressStep {
        let caller: CallerHandle
        let progress: TransferProgress
    }

    /// A call promoted after waiting too long, for the monitors: its request, and the rank it
    /// rose from and to.
    struct Promotion {
        let call: CallID
        let request: Request
        let from: RequestPriority
        let to: RequestPriority
        /// Its call's callers, when the machine names them; else none.
        var callers: [CallerHandle] = []
    }

    /// A keyed call that ran on after its callers left, with its outcome, which is kept for
    /// identical requests.
    struct KeptOutcome {
        let call: CallID
        let request: Request
        let outcome: Outcome
    }

    /// What the scheduler must do after an event: each event returns one.
    struct Actions {
        /// What the scheduler does before it releases its lock, so that the next event finds
        /// it done: its store of attempts' operations and its timer then follow the machine's
        /// order, whichever thread feeds the next event.
        struct Locked {
            /// Attempts that got a budget slot: noted under the lock (a cancellation decided
            /// before its operation exists waits there for it); their operations are made and
            /// run after it.
            var starts = SmallBatch<AttemptStart>()
            /// Attempts whose callers all left: their operations, found under the lock, are
            /// cancelled after it, and still report their end.
            var cancels = SmallBatch<AttemptID>()
            /// Attempts ended at their deadline: forgotten under the lock, their operations
            /// cancelled after it. The machine is done with them, whether or not they report.
            var deadlinePassed = SmallBatch<AttemptID>()
            /// Running attempts whose call's priority changed, for their tasks.
            var reprioritized = SmallBatch<Reprioritization>()
            /// Arm the timer for this uptime, then report ``SchedulerMachine/timerFired(now:)``.
            var armTimer: UInt64?
        }

        /// What the scheduler does after releasing its lock: the monitors hear of retries,
        /// promotions and host changes before the attempts of ``Locked/starts`` begin, so that a
        /// call's events come in the order they happened; the callers are told after them.
        struct Unlocked {
            /// Callers that were cancelled: each gets `.cancelled`.
            var cancelled: [CallerHandle] = []
            /// Callers that joined an upload under way: each is told its last step.
            var progress = SmallBatch<ProgressStep>()
            /// Callers whose outcome is decided, with what each gets.
            var deliveries = SmallBatch<Delivery>()
            /// Calls to be tried again, for the event monitors.
            var retries = SmallBatch<Retry>()
            /// Token refreshes to run, each reported with
            /// ``SchedulerMachine/tokenRefreshed(_:rebuilt:now:)``.
            var refreshes = SmallBatch<TokenRefresh>()
            /// Attempts that failed or passed their deadline, whose calls wait for the verdict.
            var verdictsWanted = SmallBatch<VerdictWanted>()
            /// For the event monitors: calls promoted, outcomes kept, hosts paused, probing or
            /// available again.
            var promotions = SmallBatch<Promotion>()
            var kept = SmallBatch<KeptOutcome>()
            var healthChanges = SmallBatch<HealthChange>()
            /// Callers whose dependencies have all succeeded: each has its request built, outside
            /// the lock (with the token its dependencies may have stored), and attached.
            var ready = SmallBatch<CallerHandle>()
        }

        var locked = Locked()
        var unlocked = Unlocked()
    }
}

extension SchedulerMachine {
    /// The ID of the call kept at `slot`.
    func id(ofCallAt slot: SlotID) -> CallID {
        CallID(slot: slot, number: calls[slot].number)
    }

    /// The callers of `call`, for an action that names them, when the machine names them.
    func namedCallers(of call: CallID) -> [CallerHandle] {
        guard namesCallers else { return [] }
        return calls[call.slot].callers.map { callers[$0.slot].handle }
    }

}

extension SchedulerMachine.AttemptStart: Equatable where CallerHandle: Equatable, Request: Equatable {}
extension SchedulerMachine.Retry: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.Promotion: Equatable where CallerHandle: Equatable, Request: Equatable {}
extension SchedulerMachine.VerdictWanted: Equatable where Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.TokenRefresh: Equatable where Request: Equatable {}
extension SchedulerMachine.KeptOutcome: Equatable where Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.Delivery: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.ServingCall: Equatable where Request: Equatable {}
extension SchedulerMachine.ProgressStep: Equatable where CallerHandle: Equatable {}
extension SchedulerMachine.Actions.Locked: Equatable where CallerHandle: Equatable, Request: Equatable {}
extension SchedulerMachine.Actions.Unlocked: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.Actions: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.Actions.Locked: Sendable where CallerHandle: Sendable, Request: Sendable {}
extension SchedulerMachine.Actions.Unlocked: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Actions: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Delivery: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.ServingCall: Sendable where Request: Sendable {}
extension SchedulerMachine.AttemptStart: Sendable where CallerHandle: Sendable, Request: Sendable {}
extension SchedulerMachine.Retry: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Promotion: Sendable where CallerHandle: Sendable, Request: Sendable {}
extension SchedulerMachine.ProgressStep: Sendable where CallerHandle: Sendable {}
extension SchedulerMachine.VerdictWanted: Sendable where Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.TokenRefresh: Sendable where Request: Sendable {}
extension SchedulerMachine.KeptOutcome: Sendable where Request: Sendable, Outcome: Sendable {}

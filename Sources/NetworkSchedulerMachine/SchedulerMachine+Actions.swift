
extension SchedulerMachine {
    /// An attempt the scheduler must start: make its operation, and run it. The machine names
    /// it by its ID from then on (to cancel it, or give it a new priority), and never holds it.
    @usableFromInline package struct AttemptStart {
        @usableFromInline package let id: AttemptID
        @usableFromInline package let request: Request
        /// The uptime since which its call waited in its line.
        @usableFromInline package let waitingSince: UInt64
        /// The call's priority as it starts, for its task.
        @usableFromInline package let priority: RequestPriority
        /// The rank it started at: its priority, raised by any promotions while it waited.
        @usableFromInline package let rank: RequestPriority
        /// Its number for the retry policy: 1 for the first try (a replay with a new token
        /// keeps its number).
        @usableFromInline package let attemptNumber: Int
        /// Its call's callers (in no set order), when the machine names them; else none.
        @usableFromInline package var callers: [CallerHandle] = []

        @inlinable package init(
            id: AttemptID,
            request: Request,
            waitingSince: UInt64,
            priority: RequestPriority,
            rank: RequestPriority,
            attemptNumber: Int,
            callers: [CallerHandle] = []
        ) {
            self.id = id
            self.request = request
            self.waitingSince = waitingSince
            self.priority = priority
            self.rank = rank
            self.attemptNumber = attemptNumber
            self.callers = callers
        }
    }

    /// An attempt that failed, or that the machine ended at its deadline, whose call waits for
    /// the verdict on it: the scheduler reads `outcome` by the call's retry policy (outside
    /// the lock: its decider may be the app's) and reports it with
    /// ``SchedulerMachine/verdictReached(_:_:answer:now:)``.
    @usableFromInline package struct VerdictWanted {
        @usableFromInline package let id: AttemptID
        @usableFromInline package let request: Request
        @usableFromInline package let attemptNumber: Int
        /// What the attempt ended with: ``CallOutcome/attemptTimedOut`` for one the machine
        /// ended.
        @usableFromInline package let outcome: Outcome

        @inlinable package init(id: AttemptID, request: Request, attemptNumber: Int, outcome: Outcome) {
            self.id = id
            self.request = request
            self.attemptNumber = attemptNumber
            self.outcome = outcome
        }
    }

    /// A token refresh the scheduler must run, then report with
    /// ``SchedulerMachine/tokenRefreshed(_:rebuilt:now:)``.
    @usableFromInline package struct TokenRefresh {
        @usableFromInline package let call: CallID
        /// The token the server rejected.
        @usableFromInline package let rejected: String?
        /// The request it was sent with, from which the shell builds it again with the new
        /// token.
        @usableFromInline package let request: Request
        /// The most seconds the call waits for the new token: its request's timeout.
        @usableFromInline package let patience: Seconds

        @inlinable package init(call: CallID, rejected: String? = nil, request: Request, patience: Seconds) {
            self.call = call
            self.rejected = rejected
            self.request = request
            self.patience = patience
        }
    }

    /// A call that will be tried again, for the event monitors.
    @usableFromInline package struct Retry {
        @usableFromInline package let call: CallID
        @usableFromInline package let request: Request
        @usableFromInline package let attempt: Int
        @usableFromInline package let delay: Seconds
        /// What the attempt before it ended with.
        @usableFromInline package let outcome: Outcome
        /// Its call's callers, when the machine names them; else none.
        @usableFromInline package var callers: [CallerHandle] = []

        @inlinable package init(
            call: CallID,
            request: Request,
            attempt: Int,
            delay: Seconds,
            outcome: Outcome,
            callers: [CallerHandle] = []
        ) {
            self.call = call
            self.request = request
            self.attempt = attempt
            self.delay = delay
            self.outcome = outcome
            self.callers = callers
        }
    }

    /// A running attempt whose call's priority changed, with the new one, for its task.
    @usableFromInline package struct Reprioritization: Equatable, Sendable {
        @usableFromInline package let attempt: AttemptID
        @usableFromInline package let priority: RequestPriority

        @inlinable package init(attempt: AttemptID, priority: RequestPriority) {
            self.attempt = attempt
            self.priority = priority
        }
    }

    /// A caller whose outcome is decided, with what it gets.
    @usableFromInline package struct Delivery {
        @usableFromInline package let caller: CallerHandle
        @usableFromInline package let outcome: Outcome
        /// Its waits and sharing, on the machine's clock.
        @usableFromInline package var measured = Measured()
        /// The call it was served by, whose callers are delivered one after another; nil for an
        /// outcome that came from elsewhere (the cache, an error before any call).
        @usableFromInline package var servedBy: ServingCall?

        @inlinable package init(
            caller: CallerHandle,
            outcome: Outcome,
            measured: Measured = Measured(),
            servedBy: ServingCall? = nil
        ) {
            self.caller = caller
            self.outcome = outcome
            self.measured = measured
            self.servedBy = servedBy
        }
    }

    /// A call that served a caller, and its request.
    @usableFromInline package struct ServingCall {
        @usableFromInline package let id: CallID
        @usableFromInline package let request: Request

        @inlinable package init(id: CallID, request: Request) {
            self.id = id
            self.request = request
        }
    }

    /// What the machine measured of a caller's wait, in seconds.
    @usableFromInline package struct Measured: Equatable, Sendable {
        /// Whether other callers shared its call.
        @usableFromInline package var wasShared = false
        /// From joining until the last attempt of its call got a budget slot (zero for a
        /// caller that joined a call already on the wire).
        @usableFromInline package var queued: Seconds = 0
        /// From that slot to the outcome.
        @usableFromInline package var onTheWire: Seconds = 0

        @inlinable package init(wasShared: Bool = false, queued: Seconds = 0, onTheWire: Seconds = 0) {
            self.wasShared = wasShared
            self.queued = queued
            self.onTheWire = onTheWire
        }
    }

    /// A step of a call's upload, for a caller that joined it after the step was told.
    @usableFromInline package struct ProgressStep {
        @usableFromInline package let caller: CallerHandle
        @usableFromInline package let progress: TransferProgress

        @inlinable package init(caller: CallerHandle, progress: TransferProgress) {
            self.caller = caller
            self.progress = progress
        }
    }

    /// A call promoted after waiting too long, for the monitors: its request, and the rank it
    /// rose from and to.
    @usableFromInline package struct Promotion {
        @usableFromInline package let call: CallID
        @usableFromInline package let request: Request
        @usableFromInline package let from: RequestPriority
        @usableFromInline package let to: RequestPriority
        /// Its call's callers, when the machine names them; else none.
        @usableFromInline package var callers: [CallerHandle] = []

        @inlinable package init(
            call: CallID,
            request: Request,
            from: RequestPriority,
            to: RequestPriority,
            callers: [CallerHandle] = []
        ) {
            self.call = call
            self.request = request
            self.from = from
            self.to = to
            self.callers = callers
        }
    }

    /// A keyed call that ran on after its callers left, with its outcome, which is kept for
    /// identical requests.
    @usableFromInline package struct KeptOutcome {
        @usableFromInline package let call: CallID
        @usableFromInline package let request: Request
        @usableFromInline package let outcome: Outcome

        @inlinable package init(call: CallID, request: Request, outcome: Outcome) {
            self.call = call
            self.request = request
            self.outcome = outcome
        }
    }

    /// What the scheduler must do after an event: each event returns one.
    @usableFromInline package struct Actions {
        /// What the scheduler does before it releases its lock, so that the next event finds
        /// it done: its store of attempts' operations and its timer then follow the machine's
        /// order, whichever thread feeds the next event.
        @usableFromInline package struct Locked {
            /// Attempts that got a budget slot: noted under the lock (a cancellation decided
            /// before its operation exists waits there for it); their operations are made and
            /// run after it.
            @usableFromInline package var starts = SmallBatch<AttemptStart>()
            /// Attempts whose callers all left: their operations, found under the lock, are
            /// cancelled after it, and still report their end.
            @usableFromInline package var cancels = SmallBatch<AttemptID>()
            /// Attempts ended at their deadline: forgotten under the lock, their operations
            /// cancelled after it. The machine is done with them, whether or not they report.
            @usableFromInline package var deadlinePassed = SmallBatch<AttemptID>()
            /// Running attempts whose call's priority changed, for their tasks.
            @usableFromInline package var reprioritized = SmallBatch<Reprioritization>()
            /// Arm the timer for this uptime, then report ``SchedulerMachine/timerFired(now:)``.
            @usableFromInline package var armTimer: UInt64?

            @inlinable package init() {}
        }

        /// What the scheduler does after releasing its lock: the monitors hear of retries,
        /// promotions and host changes before the attempts of ``Locked/starts`` begin, so that a
        /// call's events come in the order they happened; the callers are told after them.
        @usableFromInline package struct Unlocked {
            /// Callers that were cancelled: each gets `.cancelled`.
            @usableFromInline package var cancelled: [CallerHandle] = []
            /// Callers that joined an upload under way: each is told its last step.
            @usableFromInline package var progress = SmallBatch<ProgressStep>()
            /// Callers whose outcome is decided, with what each gets.
            @usableFromInline package var deliveries = SmallBatch<Delivery>()
            /// Calls to be tried again, for the event monitors.
            @usableFromInline package var retries = SmallBatch<Retry>()
            /// Token refreshes to run, each reported with
            /// ``SchedulerMachine/tokenRefreshed(_:rebuilt:now:)``.
            @usableFromInline package var refreshes = SmallBatch<TokenRefresh>()
            /// Attempts that failed or passed their deadline, whose calls wait for the verdict.
            @usableFromInline package var verdictsWanted = SmallBatch<VerdictWanted>()
            /// For the event monitors: calls promoted, outcomes kept, hosts paused, probing or
            /// available again.
            @usableFromInline package var promotions = SmallBatch<Promotion>()
            @usableFromInline package var kept = SmallBatch<KeptOutcome>()
            @usableFromInline package var healthChanges = SmallBatch<HealthChange>()
            /// Callers whose dependencies have all succeeded: each has its request built, outside
            /// the lock (with the token its dependencies may have stored), and attached.
            @usableFromInline package var ready = SmallBatch<CallerHandle>()

            @inlinable package init() {}
        }

        @usableFromInline package var locked = Locked()
        @usableFromInline package var unlocked = Unlocked()

        /// Nothing to do, until an event adds to it.
        @inlinable package init() {}
    }
}

extension SchedulerMachine {
    /// The ID of the call kept at `slot`.
    @inlinable func id(ofCallAt slot: SlotID) -> CallID {
        CallID(slot: slot, number: calls[slot].number)
    }

    /// The callers of `call`, for an action that names them, when the machine names them.
    @inlinable func namedCallers(of call: CallID) -> [CallerHandle] {
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


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
        /// Whether it goes alone as its host's probe after a pause: the scheduler then reports
        /// its answer's head as it arrives (``SchedulerMachine/probeAnswered(_:_:now:)``).
        @usableFromInline package let isProbe: Bool

        @inlinable package init(
            id: AttemptID,
            request: Request,
            waitingSince: UInt64,
            priority: RequestPriority,
            rank: RequestPriority,
            attemptNumber: Int,
            callers: [CallerHandle] = [],
            isProbe: Bool = false
        ) {
            self.id = id
            self.request = request
            self.waitingSince = waitingSince
            self.priority = priority
            self.rank = rank
            self.attemptNumber = attemptNumber
            self.callers = callers
            self.isProbe = isProbe
        }
    }

    /// A caller whose own retry policy is asked for its verdict on an attempt it waited on.
    @usableFromInline package struct AskedCaller {
        @usableFromInline package let id: CallerID
        @usableFromInline package let handle: CallerHandle
        /// Its own number for that attempt: 1 for the first it waited on (a caller that joined a
        /// call tried twice already starts its own count there).
        @usableFromInline package let attemptNumber: Int

        @inlinable package init(id: CallerID, handle: CallerHandle, attemptNumber: Int) {
            self.id = id
            self.handle = handle
            self.attemptNumber = attemptNumber
        }
    }

    /// An attempt that failed, or that the machine ended at its deadline, on which its callers
    /// want a verdict: the scheduler asks each asked caller's own retry policy (outside the
    /// lock: a decider may be the app's) and reports with
    /// ``SchedulerMachine/verdictReached(_:_:answer:endingWith:now:)``, or, for an attempt that
    /// runs on, ``SchedulerMachine/patienceJudged(_:asked:_:answer:now:)``.
    @usableFromInline package struct VerdictWanted {
        @usableFromInline package let id: AttemptID
        @usableFromInline package let request: Request
        /// Whose policies are asked: every caller of the call when its attempt ended; when it
        /// runs on, those whose own patience with it ran out.
        @usableFromInline package let callers: [AskedCaller]
        /// Whether the attempt runs on for more patient callers: only `callers` are judged,
        /// not the call.
        @usableFromInline package let attemptRunsOn: Bool
        /// What the attempt ended with: ``CallOutcome/attemptTimedOut`` for one the machine
        /// ended, or whose callers' patience ran out.
        @usableFromInline package let outcome: Outcome
        /// What that was, as it was read when the attempt ended: the verdict adds the retry.
        @usableFromInline package let kind: AttemptVerdict.Kind

        @inlinable package init(id: AttemptID, request: Request, callers: [AskedCaller], attemptRunsOn: Bool = false,
                                outcome: Outcome, kind: AttemptVerdict.Kind) {
            self.id = id
            self.request = request
            self.callers = callers
            self.attemptRunsOn = attemptRunsOn
            self.outcome = outcome
            self.kind = kind
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

    /// What any event that changes the schedule may set off: each such event returns one,
    /// beside its own result when it has one (a caller's ID, what became of an attempt's call,
    /// what the timer found). What only some events do is in their own results, so that an
    /// event's signature says what it may do.
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
            /// Running attempts whose call's priority changed, for their tasks.
            @usableFromInline package var reprioritized = SmallBatch<Reprioritization>()
            /// Arm the timer for this uptime, then report ``SchedulerMachine/timerFired(now:)``.
            @usableFromInline package var armTimer: UInt64?

            @inlinable package init() {}
        }

        /// What the scheduler does after releasing its lock, once the attempts of
        /// ``Locked/starts`` have begun: it tells the callers.
        @usableFromInline package struct Unlocked {
            /// Callers that were cancelled: each gets `.cancelled`.
            @usableFromInline package var cancelled: [CallerHandle] = []
            /// Callers whose outcome is decided, with what each gets.
            @usableFromInline package var deliveries = SmallBatch<Delivery>()

            @inlinable package init() {}
        }

        @usableFromInline package var locked = Locked()
        @usableFromInline package var unlocked = Unlocked()

        /// Nothing to do, until an event adds to it.
        @inlinable package init() {}
    }

    /// What follows for a call once one of its attempts has ended, or once the verdict on it
    /// is in, beyond the ``Actions`` of the event.
    @usableFromInline package enum FollowUp {
        /// Nothing more: its callers' outcomes are among the event's deliveries, or it had no
        /// callers left and is gone.
        case none
        /// Its callers all left and it is keyed: its outcome is kept for identical requests,
        /// which the event monitors hear.
        case kept(KeptOutcome)
        /// It failed: the scheduler reads it by the call's retry policy (outside the lock, as
        /// its decider may be the app's) and reports the verdict with
        /// ``SchedulerMachine/verdictReached(_:_:answer:now:)``.
        case verdictWanted(VerdictWanted)
        /// It is tried again (the event monitors hear it before any attempt the event starts),
        /// after its token is refreshed if `refresh` says so.
        case retry(Retry, refresh: TokenRefresh?)
    }

    /// What ``SchedulerMachine/attemptEnded(_:with:_:now:)`` did beyond its ``Actions``.
    @usableFromInline package struct AttemptEnd {
        /// What the attempt's result did to its host's health, if anything.
        @usableFromInline package var healthChange: HealthChange?
        @usableFromInline package var followUp: FollowUp = .none

        @inlinable package init(healthChange: HealthChange? = nil, followUp: FollowUp = .none) {
            self.healthChange = healthChange
            self.followUp = followUp
        }
    }

    /// What ``SchedulerMachine/timerFired(now:)`` found beyond its ``Actions``: attempts past
    /// their deadline, calls promoted, hosts whose pause is over. The event monitors hear of
    /// promotions and host changes before the attempts the event starts.
    @usableFromInline package struct TimerFired {
        /// Attempts past their deadline: the machine is done with them, whether or not they
        /// report. Their operations are forgotten under the lock and cancelled after it; what
        /// follows for each one's call is its ``Expiry/followUp``.
        @usableFromInline package var expired = SmallBatch<Expiry>()
        @usableFromInline package var promotions = SmallBatch<Promotion>()
        @usableFromInline package var healthChanges = SmallBatch<HealthChange>()
        /// Attempts that run on past some of their callers' own patience: each of those callers'
        /// policies is asked whether it waits on or ends.
        @usableFromInline package var outwaited = SmallBatch<VerdictWanted>()

        @inlinable package init() {}
    }

    /// An attempt the machine ended at its deadline, and what follows for its call (never a
    /// retry at once: a call with callers wants the verdict on it first).
    @usableFromInline package struct Expiry {
        @usableFromInline package let attempt: AttemptID
        @usableFromInline package let followUp: FollowUp

        @inlinable package init(attempt: AttemptID, followUp: FollowUp) {
            self.attempt = attempt
            self.followUp = followUp
        }
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
extension SchedulerMachine.VerdictWanted: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.AskedCaller: Equatable where CallerHandle: Equatable {}
extension SchedulerMachine.TokenRefresh: Equatable where Request: Equatable {}
extension SchedulerMachine.KeptOutcome: Equatable where Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.Delivery: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.ServingCall: Equatable where Request: Equatable {}
extension SchedulerMachine.Actions.Locked: Equatable where CallerHandle: Equatable, Request: Equatable {}
extension SchedulerMachine.Actions.Unlocked: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.FollowUp: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.AttemptEnd: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.Expiry: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.TimerFired: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.Actions: Equatable where CallerHandle: Equatable, Request: Equatable, Outcome: Equatable {}
extension SchedulerMachine.Actions.Locked: Sendable where CallerHandle: Sendable, Request: Sendable {}
extension SchedulerMachine.Actions.Unlocked: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Actions: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.FollowUp: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.AttemptEnd: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Expiry: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.TimerFired: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Delivery: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.ServingCall: Sendable where Request: Sendable {}
extension SchedulerMachine.AttemptStart: Sendable where CallerHandle: Sendable, Request: Sendable {}
extension SchedulerMachine.Retry: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Promotion: Sendable where CallerHandle: Sendable, Request: Sendable {}
extension SchedulerMachine.VerdictWanted: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.AskedCaller: Sendable where CallerHandle: Sendable {}
extension SchedulerMachine.TokenRefresh: Sendable where Request: Sendable {}
extension SchedulerMachine.KeptOutcome: Sendable where Request: Sendable, Outcome: Sendable {}

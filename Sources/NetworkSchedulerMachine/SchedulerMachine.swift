
/// One caller: one `send`, until its outcome is decided. Where the machine keeps it, and the
/// number its shell gave it, which names it for its life and to the app (`RequestHandle.ID`):
/// its slot is used again once it ends; its number never is.
@usableFromInline package struct CallerID: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline let slot: SlotID
    @usableFromInline let number: UInt64
    @inlinable package var description: String { "#\(number)" }

    @inlinable init(slot: SlotID, number: UInt64) {
        self.slot = slot
        self.number = number
    }
}

/// Which machine a caller is in: a ``CallerID`` names a place in one machine's storage, and
/// means nothing, or another caller, in any other.
@usableFromInline package struct MachineID: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline let value: UInt64
    @inlinable package init(value: UInt64) { self.value = value }
    @inlinable package var description: String { "machine \(value)" }
}

/// A caller another caller waits for, named with the machine that holds it: a dependency may
/// be a request of another scheduler.
@usableFromInline package struct DependencyID: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline let machine: MachineID
    @usableFromInline let caller: CallerID
    @inlinable package init(machine: MachineID, caller: CallerID) {
        self.machine = machine
        self.caller = caller
    }
    @inlinable package var description: String { "\(caller) of \(machine)" }
}

/// One network call, shared by identical callers, until its outcome is decided: where the
/// machine keeps it, and its number, which names it in events for its life (its slot is used
/// again once it ends; its number never is).
@usableFromInline package struct CallID: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline let slot: SlotID
    /// 1 for the machine's first call.
    @usableFromInline package let number: Int
    @inlinable package var description: String { "call \(number)" }

    @inlinable init(slot: SlotID, number: Int) {
        self.slot = slot
        self.number = number
    }
}

/// One try of a call on the wire: its call, and which of its tries.
@usableFromInline package struct AttemptID: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline package let call: CallID
    @usableFromInline let serial: Int
    @inlinable package var description: String { "\(call) attempt \(serial)" }

    @inlinable init(call: CallID, serial: Int) {
        self.call = call
        self.serial = serial
    }
}

/// What a timer of the machine is for.
@usableFromInline enum TimerKey: Hashable, Sendable {
    /// A call's: its attempt's deadline, the end of its backoff, or its promotion.
    case call(CallID)
    /// A caller's own deadline.
    case caller(CallerID)
    /// The end of a caller's own patience with the attempt it waits on, which a more patient
    /// caller of its call lets run longer (see ``SchedulerMachine/Caller/patience``).
    case patience(CallerID)
    /// A host's: the end of its pause, or its next rate-limit token.
    case host(Int)
    /// A host's: the end of the grace of a slot its callers left (see
    /// ``SchedulerMachine/cancellationGrace``).
    case cooling(Int)

    /// An order for timers due at once, so that they fire in the same order every run: calls'
    /// first, so that every promotion due is made before a caller that leaves frees a place.
    @inlinable static func firesBefore(_ first: Self, _ second: Self) -> Bool {
        first.order < second.order
    }

    @inlinable var order: (Int, Int32) {
        switch self {
        case .host(let index): (0, Int32(index))
        case .call(let id): (1, id.slot.index)
        case .caller(let id): (2, id.slot.index)
        case .patience(let id): (3, id.slot.index)
        case .cooling(let index): (4, Int32(index))
        }
    }
}

/// The scheduler's decisions, as a state machine: events in, ``Actions`` out.
///
/// It owns the callers, the network calls they share, and each host's waiting line and budget.
/// It decides priority, budget, offline, deadlines, retries and token refreshes, and does
/// nothing itself: no clock, no identifiers made at random, no queue, no lock, no callback,
/// no HTTP. Time (uptime nanoseconds) comes in with the events, an attempt's result already
/// read (``AttemptVerdict``), and backoff jitter from a generator seeded once, at its making;
/// what must happen (start an attempt, cancel one, deliver, arm the timer, refresh a token)
/// goes out as ``Actions``: its ``Actions/Locked`` part, which ``RequestScheduler`` applies to
/// its operations and timer before releasing its lock, and its ``Actions/Unlocked`` part,
/// performed after. Each event returns its own value, which tests compare.
///
/// It is generic over what it only hands back: `CallerHandle` is what the scheduler attaches to
/// a caller (a ``RequestHandle``); `Request`, a call's request, of which it reads only its
/// ``SchedulingTerms``; `Outcome`, what a call ends with, of which it makes only the outcomes
/// it decides itself (``CallOutcome``). Attempts are named by their ``AttemptID``; their
/// operations are the scheduler's. Tests drive it with plain values, synchronously.
///
/// It is a value: it holds no object, so a copy of it is a machine of its own, which a test
/// may drive on without changing the original. The scheduler keeps its one machine in its
/// lock and mutates it in place. Between events it keeps nothing but its state (`hostsToFill`
/// is empty then, which the invariants check).
@usableFromInline package struct SchedulerMachine<CallerHandle, Request: SchedulingTerms, Outcome: CallOutcome> {
    /// This machine, among the others of the process: only its own callers inherit priority
    /// from its dependents.
    @usableFromInline let id: MachineID
    /// The most attempts running at once per host.
    @usableFromInline let budget: Int
    /// The most of them that `.low` and `.background` calls may hold, so that a more urgent
    /// call finds a slot free.
    @usableFromInline let lowPriorityBudget: Int
    /// The most streams open at once per host, in a line of their own beside the host's
    /// (``lineName(of:opensStream:)``), so that open streams never hold its budget.
    @usableFromInline let streamBudget: Int
    /// The budget of a host that answered over HTTP/2 or HTTP/3 and did not say how many
    /// streams it takes: `budget` counts connections, one answer at a time each.
    @usableFromInline let multiplexedBudget: Int
    /// The budget of connections of a distant host (``Host/isDistant``), at least `budget`:
    /// where answers take that long, the connections a transport may drop and open again
    /// between bursts (libcurl's cache does, see ``RequestScheduler``) cost little beside
    /// what more of them carry at once.
    @usableFromInline let distantBudget: Int
    /// Per priority (by raw value), the longest a call waits at it before it is promoted one
    /// level, in nanoseconds; nil never promotes (strict order).
    @usableFromInline let maximumWaits: [UInt64?]
    /// The most calls each host's line holds; nil holds any number.
    @usableFromInline let lineLimit: Int?
    /// How long the outcome of a keyed call whose callers all left is kept, in nanoseconds.
    @usableFromInline let keptOutcomeWindow: UInt64
    /// When a host is paused.
    @usableFromInline let healthPolicy: HostHealthPolicy
    /// Whether the actions that start, retry or promote a call name its callers, for the
    /// monitors of their events: off, no list is made for each of them.
    @usableFromInline let namesCallers: Bool
    /// Rate limits by host name (`api.example.com`), lowercased.
    @usableFromInline let rateLimits: [String: HostRateLimit]
    /// How long the slot of an attempt whose callers all left stays taken after its task ended,
    /// in nanoseconds: a burst of cancellations (a screen's tasks cancelled one after another)
    /// lands within it, so that no waiting call of that burst takes the slot, and reaches the
    /// server, before its own cancellation arrives. Zero frees it as the task ends.
    @usableFromInline let cancellationGrace: UInt64

    @usableFromInline var callers = Slots<Caller>()
    @usableFromInline var calls = Slots<Call>()
    /// The call in flight for each key, which identical requests join: by the key's hash
    /// (computed once, when the key is made), calls with the same hash chained through
    /// `nextWithSameHash`, so that no key is hashed again.
    @usableFromInline var registry: [Int: CallID] = [:]
    /// Keys in the registry.
    @usableFromInline var registeredCount = 0
    @usableFromInline var hosts: [Host] = []
    @usableFromInline var hostIndices: [String: Int] = [:]
    /// When each timer is due: a running attempt's deadline, the end of a backoff, a waiting
    /// call's promotion, a caller's deadline.
    @usableFromInline var timers: [TimerKey: UInt64] = [:]
    /// The serial lanes with a call in them, by name.
    @usableFromInline var lanes: [String: LaneQueue] = [:]
    /// Hosts where a call entered the line during the event being handled, which may start
    /// once the whole event is: so that a call entering it later in the same event (a backoff
    /// that ended at the same instant) competes for the slot too. Empty between events.
    @usableFromInline var hostsToFill: Set<Int> = []
    /// The uptime the scheduler's timer is armed for, if it is.
    @usableFromInline var armedFor: UInt64?
    @usableFromInline var nextTicket = 0
    /// Calls made so far, which numbers each one.
    @usableFromInline var callsMade = 0
    @usableFromInline var isOffline = false
    /// Where backoff jitter comes from, drawn only when a backoff is decided.
    @usableFromInline var jitter: SplitMix64

    @inlinable package init(
        id: MachineID,
        budget: Int,
        lowPriorityBudget: Int,
        streamBudget: Int = 2,
        multiplexedBudget: Int = 100,
        distantBudget: Int? = nil,
        maximumWaits: [RequestPriority: Seconds] = [:],
        lineLimit: Int? = nil,
        keptOutcomeWindow: Seconds = 10,
        healthPolicy: HostHealthPolicy = .never,
        rateLimits: [String: HostRateLimit] = [:],
        cancellationGrace: Seconds = 0,
        namesCallers: Bool = false,
        jitterSeed: UInt64
    ) {
        precondition(lineLimit.map { $0 > 0 } ?? true, "a line must hold at least one call")
        precondition(budget > 0 && lowPriorityBudget > 0 && lowPriorityBudget <= budget && streamBudget > 0
                     && multiplexedBudget > 0)
        self.id = id
        self.budget = budget
        self.lowPriorityBudget = lowPriorityBudget
        self.streamBudget = streamBudget
        self.multiplexedBudget = min(multiplexedBudget, HostProtocol.streamCeiling)
        self.distantBudget = max(budget, distantBudget ?? budget)
        self.maximumWaits = RequestPriority.allCases.map { priority in
            maximumWaits[priority].map { UInt64(max(0, $0) * 1_000_000_000) }
        }
        self.lineLimit = lineLimit
        self.keptOutcomeWindow = UInt64(max(0, keptOutcomeWindow) * 1_000_000_000)
        self.healthPolicy = healthPolicy
        self.rateLimits = Dictionary(rateLimits.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        jitter = SplitMix64(seed: jitterSeed)
        self.cancellationGrace = UInt64(max(0, cancellationGrace) * 1_000_000_000)
        self.namesCallers = namesCallers
    }

    // MARK: - What it holds

    /// Where a caller is.
    @usableFromInline enum Stage {
        /// Waiting for this many dependencies to succeed.
        case waiting(dependencies: Int)
        /// Ready: its request is being built, outside the machine.
        case building
        /// One of a call's callers since this uptime.
        case attached(CallID, since: UInt64)
    }

    @usableFromInline struct Caller {
        @usableFromInline let handle: CallerHandle
        /// The number its shell gave it (see ``CallerID``).
        @usableFromInline let number: UInt64
        /// Its own priority now: callers may change it while they wait or run.
        @usableFromInline var priority: RequestPriority
        @usableFromInline var stage: Stage
        /// What it waits for and what is lent to it, once it is in a dependency: out of line,
        /// so that the callers in none (most) carry one word for it.
        @usableFromInline var lendingStorage: OutOfLine<Lending>? = nil
        /// Whether its group is suspended: its call does not start while every caller of it is.
        @usableFromInline var isSuspended = false
        /// Whether it has a deadline of its own (a timer).
        @usableFromInline var hasDeadline = false
        /// What watches its own patience with the attempt it waits on, which a more patient
        /// caller of its call lets run longer.
        @usableFromInline var patienceWatch = PatienceWatch.none
        /// Its own attempt timeout (its request's ``SchedulingTerms/attemptTimeout``), once it
        /// is attached: its call's attempts last as long as its most patient caller's.
        @usableFromInline var patience: Seconds = 0
        /// Its call's attempt number less its own (1 for the first it waits on), for its own
        /// retry policy.
        @usableFromInline var attemptOffset: Int32 = 0

        /// While it waits: the callers it waits for, which inherit its priority.
        @inlinable var dependencies: [CallerID] { lending?.dependencies ?? [] }

        /// The priority it counts with: its own, or a more urgent one a caller waiting for it
        /// lends it.
        @inlinable var effectivePriority: RequestPriority {
            guard let inherited = lending?.inherited.highest else { return priority }
            return max(priority, inherited)
        }

        /// What it waits for and what is lent to it, once it is in a dependency.
        @inlinable var lending: Lending? {
            get { lendingStorage?.value }
            set { lendingStorage = if let newValue { OutOfLine(newValue) } else { nil } }
        }

        /// Changes its lending, made on first use. Its lists are changed in place: the box is
        /// let go of first, so that they are not shared (and copied) while they change.
        @inlinable mutating func changeLending<Result>(_ change: (inout Lending) -> Result) -> Result {
            var lending = lendingStorage.take()?.value ?? Lending()
            defer { lendingStorage = OutOfLine(lending) }
            return change(&lending)
        }

        @inlinable init(
            handle: CallerHandle,
            number: UInt64,
            priority: RequestPriority,
            stage: Stage,
            lendingStorage: OutOfLine<Lending>? = nil,
            isSuspended: Bool = false,
            hasDeadline: Bool = false
        ) {
            self.handle = handle
            self.number = number
            self.priority = priority
            self.stage = stage
            self.lendingStorage = lendingStorage
            self.isSuspended = isSuspended
            self.hasDeadline = hasDeadline
        }
    }

    /// What watches a caller's own patience with its call's running attempt.
    @usableFromInline enum PatienceWatch: UInt8, Sendable {
        /// Nothing: the attempt ends no later than its patience does, or none runs.
        case none
        /// A timer (``TimerKey/patience(_:)``), at the end of its patience: the attempt's
        /// deadline is a more patient caller's.
        case timer
        /// Its patience ran out: its retry policy is being asked whether it waits on.
        case verdictWanted
    }

    /// A caller's part in dependencies: kept out of line, and made only for the callers that
    /// wait or are waited for, so that the others (most) do not carry its 40 bytes.
    @usableFromInline struct Lending {
        /// While its caller waits: the callers it waits for that inherit its priority, those of
        /// this machine that were here when it started waiting.
        @usableFromInline var dependencies: [CallerID] = []
        /// The effective priorities of the callers waiting for its caller.
        @usableFromInline var inherited = PriorityCounts()
        /// The callers that started waiting for its caller, for the slot its call frees. Never
        /// pruned: one that stopped waiting is told apart when the list is read (its own
        /// `dependencies` no longer name this caller).
        @usableFromInline var dependents: [CallerID] = []
        /// While its caller waits: the host its request will go to (as ``Host/name``), if known.
        @usableFromInline var host: String?
        /// The host whose slot is kept for its caller, released when it attaches or leaves.
        @usableFromInline var reservedSlot: Int?

        @inlinable init(dependencies: [CallerID] = [], host: String? = nil) {
            self.dependencies = dependencies
            self.host = host
        }
    }

    /// Where a call's current attempt is.
    @usableFromInline enum AttemptState {
        /// In its host's line since this uptime; `ticket` marks its live entry there, and
        /// `arrival` its place within a priority, kept when it moves to another.
        case waiting(ticket: Int, arrival: Int, since: UInt64)
        /// On the wire since `started`, holding a budget slot; `task` once the scheduler made it.
        case running(Running)
        /// Waiting for a backoff to end (its timer), or for a new token.
        case between
        /// Its attempt that got its slot at `started` failed, or passed its deadline: it waits
        /// for the verdict on that (``SchedulerMachine/verdictReached(_:_:answer:now:)``).
        case awaitingVerdict(started: UInt64)
        /// Its callers all left while it ran: it keeps its slot until its task ends.
        case abandoned(Running)
        /// Out of its line because every caller of it is suspended; `arrival` and `since` are
        /// its place and wait there, which it takes back when one of them resumes.
        case held(arrival: Int, since: UInt64)
        /// Behind an earlier call of its serial lane: it enters its line once that one ended.
        case inLane
        /// A keyed call that ran on after its callers left: its outcome, kept under its key
        /// until this uptime for an identical request, which gets it instead of sending again.
        /// Boxed (`indirect`): an outcome is larger than any other state, and a call is made per
        /// request.
        indirect case kept(Outcome, until: UInt64)
    }

    @usableFromInline struct Running {
        @usableFromInline let serial: Int
        @usableFromInline let holdsLowPrioritySlot: Bool
        @usableFromInline let started: UInt64

        @inlinable init(serial: Int, holdsLowPrioritySlot: Bool, started: UInt64) {
            self.serial = serial
            self.holdsLowPrioritySlot = holdsLowPrioritySlot
            self.started = started
        }
    }

    /// One network call. The machine reads and changes it in place, where ``Slots`` keeps it
    /// (`calls[id.slot].attempt = …`). Reading one field of it copies it whole, so it holds its
    /// request and key out of line, in one box: a copy then retains that box, not each
    /// reference of a request (three for the scheduler's).
    @usableFromInline struct Call {
        /// The number in its ID (see ``CallID``), so that its place in storage names it.
        @usableFromInline let number: Int
        /// Its key and its request.
        @usableFromInline var sent: OutOfLine<Sent>
        @usableFromInline let host: Int
        @usableFromInline var attempt = AttemptState.between
        /// The last step its running attempt's body went out by, which a caller that joins
        /// then is told at once.
        @usableFromInline var progress: TransferProgress?
        /// The retry policy's count: the next attempt's number.
        @usableFromInline var attemptNumber = 1
        /// Attempts started so far, which names each one.
        @usableFromInline var attemptsStarted = 0
        @usableFromInline var replayedWithNewToken = false
        @usableFromInline var wasShared = false
        /// Levels it was promoted by while it waited too long (see ``rank``). Small fields
        /// together, in the padding after the flags: a call is allocated per request.
        @usableFromInline var promotions: UInt8 = 0
        /// How many of `callers` are suspended.
        @usableFromInline var suspendedCallers: Int32 = 0
        @usableFromInline var callers: CallerSet
        @usableFromInline var priorities = PriorityCounts()
        /// When it entered its line, or was last promoted: where its wait at its rank began.
        @usableFromInline var rankSince: UInt64 = 0
        /// The next call registered under the same hash of its key (see `registry`).
        @usableFromInline var nextWithSameHash: CallID?
        /// While an attempt runs: the callers whose own patience ends at its deadline, which
        /// watch it by no timer of their own until a more patient joiner moves it later.
        @usableFromInline var deadlineHolders: [CallerID] = []

        @inlinable init(
            number: Int,
            key: Request.Key?,
            request: Request,
            host: Int,
            firstCaller: CallerID,
            priority: RequestPriority
        ) {
            self.number = number
            sent = OutOfLine(Sent(key: key, request: request))
            self.host = host
            callers = CallerSet(firstCaller)
            priorities.add(priority)
        }
    }

    /// What a call sends, and the key identical requests join it by.
    @usableFromInline struct Sent {
        @usableFromInline let key: Request.Key?
        /// The same for every attempt until a token refresh rebuilds it: the machine reads
        /// only its ``SchedulingTerms``.
        @usableFromInline let request: Request

        @inlinable init(key: Request.Key?, request: Request) {
            self.key = key
            self.request = request
        }
    }

    /// One host's budget, line, health and rate limit.
    @usableFromInline struct Host: Sendable {
        @usableFromInline let name: String
        /// The most attempts it runs at once, and the most of them low-priority calls hold:
        /// connections, until it answers over a multiplexed protocol (``speaks``).
        @usableFromInline var budget: Int
        @usableFromInline var lowPriorityBudget: Int
        /// What its answers came over, as the last one that told said or showed; nil until
        /// one did.
        @usableFromInline var speaks: HostProtocol?
        /// How long its quickest answer took, from its slot to its end, in nanoseconds; nil
        /// until one came.
        @usableFromInline var quickestAnswer: UInt64?
        /// Whether its answers come from across a network: even its quickest took
        /// ``distantAnswer`` or longer (loopback and a LAN answer sooner).
        @inlinable var isDistant: Bool { (quickestAnswer ?? 0) >= Self.distantAnswer }
        /// 5 ms, in nanoseconds.
        @inlinable static var distantAnswer: UInt64 { 5_000_000 }
        /// Whether its budget ever narrowed (an HTTP/2 host answering over HTTP/1.1): the
        /// attempts started under the wider one run on, over the narrower one, until they end.
        @usableFromInline var hasNarrowed = false
        @usableFromInline var availability = Availability.available
        /// Attempts in a row that failed to connect.
        @usableFromInline var consecutiveFailures = 0
        /// Pauses in a row for failures, which double the next one.
        @usableFromInline var failurePauses = 0
        @usableFromInline let rateLimit: HostRateLimit?
        /// Its adaptive budget, fractional so that it grows by a slot per budget's worth of
        /// answers (see ``HostHealthPolicy/adaptsBudget``).
        @usableFromInline var window: Double
        /// Rate-limit tokens left as of `refilledAt` (nil: the bucket is full).
        @usableFromInline var tokens = 0.0
        @usableFromInline var refilledAt: UInt64?
        @usableFromInline var running = 0
        /// Slots kept free for dependents released by a call that ended here (see
        /// ``SchedulerMachine/keepSlot(forDependentsOf:)``), counted as running.
        @usableFromInline var reserved = 0
        /// How many of `running` are `.low` or `.background` calls.
        @usableFromInline var lowPriorityRunning = 0
        /// Slots of attempts whose callers left, counted in `running` until their grace ends
        /// (``SchedulerMachine/cancellationGrace``), earliest first, with whether each is a
        /// low-priority one.
        @usableFromInline var cooling: [(until: UInt64, isLowPriority: Bool)] = []
        @usableFromInline var line = WaitingLine()
        /// Live entries in `line`.
        @usableFromInline var waiting = 0

        @inlinable init(
            name: String,
            budget: Int,
            lowPriorityBudget: Int,
            availability: Availability = .available,
            consecutiveFailures: Int = 0,
            failurePauses: Int = 0,
            rateLimit: HostRateLimit? = nil,
            window: Double,
            tokens: Double = 0.0,
            refilledAt: UInt64? = nil,
            running: Int = 0,
            reserved: Int = 0,
            lowPriorityRunning: Int = 0,
            line: WaitingLine = WaitingLine(),
            waiting: Int = 0
        ) {
            self.name = name
            self.budget = budget
            self.lowPriorityBudget = lowPriorityBudget
            self.availability = availability
            self.consecutiveFailures = consecutiveFailures
            self.failurePauses = failurePauses
            self.rateLimit = rateLimit
            self.window = window
            self.tokens = tokens
            self.refilledAt = refilledAt
            self.running = running
            self.reserved = reserved
            self.lowPriorityRunning = lowPriorityRunning
            self.line = line
            self.waiting = waiting
        }
    }

    // MARK: - Queries

    /// Every caller still here.
    @inlinable package var callerIDs: [CallerID] {
        callers.all.map { CallerID(slot: $0.id, number: $0.element.number) }
    }

    /// What the scheduler attached to every caller still here.
    @inlinable package var callerHandles: [CallerHandle] {
        callers.all.map(\.element.handle)
    }

    /// Whether the host named `name` (its line's name) takes new attempts; available if it
    /// has none.
    @inlinable package func availability(ofHost name: String) -> Availability {
        hostIndices[name].map { hosts[$0].availability } ?? .available
    }

    /// How many attempts the host named `name` may run at once now (see
    /// ``budgets(ofHost:)``); nil if it has none.
    @inlinable package func budget(ofHost name: String) -> Int? {
        hostIndices[name].map { budgets(ofHost: $0).all }
    }

    /// Live callers, calls with callers, and registered keys: all zero once everything ended
    /// (and the outcomes kept for keyed calls whose callers left have expired).
    @inlinable package var census: (callers: Int, calls: Int, registered: Int) {
        (callers.count, calls.all.count { !$0.element.isAbandoned && $0.element.callers.count > 0 }, registeredCount)
    }
}

extension SchedulerMachine: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Caller: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Stage: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Call: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Sent: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Lending: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.AttemptState: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}
extension SchedulerMachine.Running: Sendable where CallerHandle: Sendable, Request: Sendable, Outcome: Sendable {}

extension SchedulerMachine.Call {
    @inlinable var key: Request.Key? { sent.value.key }

    /// Its request: a new one (a token refresh's) takes a new box.
    @inlinable var request: Request {
        get { sent.value.request }
        set { sent = OutOfLine(SchedulerMachine.Sent(key: key, request: newValue)) }
    }

    @inlinable var running: SchedulerMachine.Running? {
        switch attempt {
        case .running(let running), .abandoned(let running): running
        case .waiting, .between, .awaitingVerdict, .held, .inLane, .kept: nil
        }
    }

    /// The priority it waits at: its highest caller's, raised one level per promotion (a call
    /// that waited longer than its priority's maximum wait), up to critical.
    @inlinable var rank: RequestPriority? {
        guard let highest = priorities.highest else { return nil }
        return RequestPriority(rawValue: min(highest.rawValue + Int(promotions), RequestPriority.critical.rawValue))
    }

    /// Whether every caller of it is suspended, so that it may not start.
    @inlinable var isHeld: Bool {
        suspendedCallers > 0 && Int(suspendedCallers) == callers.count
    }

    @inlinable var isAbandoned: Bool {
        if case .abandoned = attempt { return true }
        return false
    }

    /// Whether it goes on when its last caller leaves: a call with an `Idempotency-Key` on the
    /// wire, which the server may be processing.
    @inlinable var runsOnWithoutCallers: Bool {
        guard request.runsOnWithoutCallers, case .running = attempt else { return false }
        return true
    }

    /// Whether it is only an outcome kept for identical requests.
    @inlinable var isKept: Bool {
        if case .kept = attempt { return true }
        return false
    }

    /// Whether it waits behind an earlier call of its lane.
    @inlinable var isInLane: Bool {
        if case .inLane = attempt { return true }
        return false
    }
}

/// A duration the machine is given or reports, in seconds: Foundation's `TimeInterval`,
/// named here so that the machine imports nothing.
@usableFromInline package typealias Seconds = Double

/// The seconds between two readings of the scheduler's clock, in nanoseconds; none if `end`
/// is not after `start`.
@inlinable package func seconds(from start: UInt64, to end: UInt64) -> Seconds {
    end > start ? Seconds(end - start) / 1_000_000_000 : 0
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// Drives a ``SchedulerMachine`` synchronously, as the scheduler does, with names for callers
/// and tasks, a clock the test moves, and every action kept for the test to read: no threads,
/// no sockets, no time passing.
struct MachineDriver {
    typealias Machine = SchedulerMachine<String, ScheduledRequest, Result<TransportResponse, ServiceError>>
    /// The driven machine's ID; a dependency named with another is another machine's caller.
    static let machineID = MachineID(value: 1)

    var machine: Machine
    /// The uptime, in nanoseconds, that events carry.
    var now: UInt64 = 1_000_000_000
    /// The wall clock that events carry, moving with `now`.
    var date: Date { Date(timeIntervalSince1970: 1_700_000_000 + Double(now) / 1_000_000_000) }
    /// Callers by name.
    var callers: [String: CallerID] = [:]
    /// The number the last caller was given, as a scheduler gives its handles theirs.
    private var lastNumber: UInt64 = 0
    /// Every attempt started, by its task's name ("task 1", "task 2"…, in start order).
    var attempts: [String: AttemptID] { starts.mapValues(\.id) }
    /// What the machine said of each attempt as it started, by its task's name.
    private(set) var starts: [String: Machine.AttemptStart] = [:]
    /// Each attempt's task name.
    private var tasks: [AttemptID: String] = [:]
    /// The policy of callers whose submission has none, as the scheduler's configuration's.
    let retryPolicy: RetryPolicy
    /// Each caller's own retry policy, by name, if its submission has one.
    private var policies: [String: RetryPolicy] = [:]
    /// Whether a failed attempt (one the machine ends at its deadline included) is judged
    /// within the same event, as the scheduler does at once after it; if not, it waits in
    /// ``pendingVerdicts`` until ``judge(_:)``.
    var judgesAtOnce = true
    /// Failed attempts whose verdict the machine wants and has not been reported yet.
    var pendingVerdicts: [Machine.VerdictWanted] = []
    /// How many verdicts were reached by the retry policy: once for each failed attempt whose
    /// call wanted one.
    private(set) var verdictsReached = 0
    /// Every attempt whose verdict the machine wanted: never one twice.
    private var verdictsWanted: Set<AttemptID> = []
    /// Task names in the order their attempts started.
    var started: [String] = []
    /// What each caller got, in order.
    var outcomes: [(caller: String, result: Result<Int, ServiceError>)] = []
    /// Tasks the machine asked to cancel.
    var cancelledTasks: [String] = []
    /// The priority each running task was last given: at its start, then by the machine's
    /// `reprioritized` actions.
    var taskPriorities: [String: RequestPriority] = [:]
    /// Refreshes asked for and not yet reported.
    var refreshes: [Machine.TokenRefresh] = []
    var armedFor: UInt64?
    /// Contracts broken by an action, as the fuzz checks them: a second outcome for a caller,
    /// a call started while one of higher priority, or one of its own priority that entered the
    /// line before it, waited on its host.
    var brokenContracts: [String] = []
    private var ended: Set<String> = []
    /// Each waiting call's place within its rank after the last event.
    private var lineArrivals: [CallID: Int] = [:]

    init(budget: Int = 2, lowPriorityBudget: Int? = nil, streamBudget: Int = 2, retryPolicy: RetryPolicy = .never,
         maximumWaits: [RequestPriority: TimeInterval] = [:], lineLimit: Int? = nil,
         healthPolicy: HostHealth.Policy = .never, rateLimits: [String: HostHealth.RateLimit] = [:],
         cancellationGrace: TimeInterval = 0, multiplexedBudget: Int = 100, distantBudget: Int? = nil) {
        self.retryPolicy = retryPolicy
        machine = Machine(id: Self.machineID, budget: budget, lowPriorityBudget: lowPriorityBudget ?? budget,
                          streamBudget: streamBudget, multiplexedBudget: multiplexedBudget, distantBudget: distantBudget, maximumWaits: maximumWaits, lineLimit: lineLimit, healthPolicy: healthPolicy,
                          rateLimits: rateLimits, cancellationGrace: cancellationGrace, jitterSeed: 1)
    }

    /// The paths of keyed calls whose outcome was kept after their callers left.
    var kept: [String] = []

    /// Callers told of an upload's last step as they joined it: the caller, and the bytes sent.
    var toldOnJoining: [(caller: String, bytesSent: Int64)] = []

    /// Each host's health as it changed: the host, and what it became.
    var healthChanges: [(host: String, availability: Machine.Availability)] = []

    /// The health of `host` (`https://api.test:443` unless said otherwise) now.
    func availability(of host: String = "https://api.test:443") -> Machine.Availability? {
        machine.hostIndices[host].map { machine.hosts[$0].availability }
    }

    /// The calls promoted so far: the path, and the rank each rose to.
    var promotions: [(path: String, to: RequestPriority)] = []

    // MARK: - Events

    /// A caller sending `method path` (to `https://api.test` unless `host` says otherwise).
    @discardableResult
    mutating func send(
        _ name: String,
        _ path: String = "/users/1",
        method: String = "GET",
        priority: RequestPriority = .normal,
        host: String = "https://api.test",
        shared: Bool = true,
        suspended: Bool = false,
        submission: Submission? = nil,
        lane: Lane? = nil,
        deadline: TimeInterval? = nil,
        idempotencyKey: String? = nil,
        timeout: TimeInterval = 60
    ) -> Machine.Attachment {
        let (request, key) = Self.request(method, host + path, shared: shared, timeout: timeout, idempotencyKey: idempotencyKey)
        let (id, attachment, actions) = machine.submit(name, number: nextNumber(), priority: priority, isSuspended: suspended,
                                                       request: ScheduledRequest(request, of: submission ?? Self.submission(request, lane: lane)),
                                                       key: key, within: deadline, now: now)
        callers[name] = id
        policies[name] = submission?.retryPolicy
        if case .joined(_, let lastStep?) = attachment { toldOnJoining.append((name, lastStep.bytesSent)) }
        perform(actions)
        return attachment
    }

    private mutating func nextNumber() -> UInt64 {
        lastNumber += 1
        return lastNumber
    }

    /// A caller that waits for `dependencies` before it sends `path`: as many as there are
    /// names in `waitingFor`, which inherit its priority, or `count`.
    /// `name` waits for `count` dependencies (as many as `names` unless said), among them
    /// the callers `names` of this machine and the callers `others` names, which may be
    /// another machine's, or gone.
    mutating func sendAfter(_ count: Int? = nil, waitingFor names: [String] = [], others: [DependencyID] = [],
                            _ name: String, priority: RequestPriority = .normal, deadline: TimeInterval? = nil) {
        let own = names.map { DependencyID(machine: Self.machineID, caller: callers[$0]!) }
        // Bound for the host `dependencySucceeded` sends it to, whose slot may be kept for it.
        let (id, actions) = machine.add(name, number: nextNumber(), priority: priority, dependencies: count ?? names.count,
                                        waitingFor: own + others, host: "https://api.test:443",
                                        within: deadline, now: now)
        callers[name] = id
        waitsFor[name] = names
        perform(actions)
    }

    /// What each caller sent with ``sendAfter(_:waitingFor:others:_:priority:deadline:)`` waits
    /// for, by name.
    private var waitsFor: [String: [String]] = [:]

    /// Callers whose inherited priorities are not what the dependents waiting for them lend,
    /// counted by name rather than by ID: a caller lent a priority it was never meant to get
    /// (another machine's ID naming it), or keeping one after its dependent stopped waiting.
    var lendingViolations: [String] {
        // A caller's handle is its name.
        let live = machine.callers.all.map(\.element)
        var lent: [String: PriorityCounts] = [:]
        for caller in live {
            guard case .waiting = caller.stage, let names = waitsFor[caller.handle] else { continue }
            for name in names where machine.callers.contains(callers[name]!.slot) {
                lent[name, default: PriorityCounts()].add(caller.effectivePriority)
            }
        }
        return live.compactMap { caller in
            (caller.lending?.inherited ?? PriorityCounts()) == lent[caller.handle, default: PriorityCounts()]
                ? nil : "\(caller.handle) inherits other than its dependents lend it"
        }
    }

    /// One dependency of `name` succeeded; once all have, it sends `path`.
    mutating func dependencySucceeded(_ name: String, then path: String = "/users/1") {
        let (ready, actions) = machine.dependencySucceeded(callers[name]!, now: now)
        perform(actions)
        guard ready == name else { return }
        let (request, key) = Self.request("GET", "https://api.test" + path, shared: true, timeout: 60)
        perform(machine.attach(callers[name]!, request: ScheduledRequest(request, of: Self.submission(request)), key: key, now: now).1)
    }

    /// A dependency of `name` failed: it ends with `error`, unless it had already ended.
    mutating func dependencyFailed(_ name: String, with error: ServiceError) {
        perform(machine.end(callers[name]!, with: .failure(error), now: now))
    }

    mutating func cancel(_ names: String...) {
        perform(machine.cancel(names.map { callers[$0]! }, now: now))
    }

    /// The callers `names` are suspended, or resumed.
    mutating func setSuspended(_ isSuspended: Bool, _ names: String...) {
        perform(machine.setSuspended(isSuspended, of: names.map { callers[$0]! }, now: now))
    }

    /// The callers `names` change their priority to `priority`.
    mutating func setPriority(_ priority: RequestPriority, of names: String...) {
        perform(machine.setPriority(priority, of: names.map { callers[$0]! }, now: now))
    }

    /// The attempt of task `name` ended with `status` (and `headers`), or with `error`; its
    /// answer came `over` a protocol, if its transport said.
    mutating func end(_ task: String, status: Int = 200, headers: HeaderFields = [:], error: ServiceError? = nil,
                      over spoken: HostProtocol? = nil) {
        let start = starts[task]!
        let outcome: Result<TransportResponse, ServiceError> = error.map { .failure($0) }
            ?? .success(Self.response(status: status, headers: headers))
        let reading = AttemptReading(outcome, request: start.request.prepared, submission: start.request.submission,
                                     failureStatuses: machine.healthPolicy.failureStatuses, date: date)
        let (end, actions) = machine.attemptEnded(start.id, with: outcome, reading, over: spoken, now: now)
        if let change = end.healthChange { healthChanges.append((change.host, change.availability)) }
        perform(actions, followUps: [end.followUp])
    }

    /// The head of task `name`'s answer arrived, with `status` (and `headers`), as the scheduler
    /// reports it for its host's probe; its body is still to come.
    mutating func answerHead(_ task: String, status: Int = 200, headers: HeaderFields = [:]) {
        let start = starts[task]!
        let kind = AttemptVerdict.Kind(.success(Self.response(status: status, headers: headers)), request: start.request.prepared,
                                       submission: start.request.submission,
                                       failureStatuses: machine.healthPolicy.failureStatuses, date: date)
        let (change, actions) = machine.probeAnswered(start.id, kind, now: now)
        if let change { healthChanges.append((change.host, change.availability)) }
        perform(actions)
    }

    /// The body of task `name` went out further: returns the callers the machine says to tell.
    mutating func progressed(_ task: String, to progress: TransferProgress = TransferProgress(bytesSent: 1, bytesExpectedToSend: 1)) -> [String] {
        let (handles, actions) = machine.attemptProgressed(starts[task]!.id, to: progress, now: now)
        perform(actions)
        return handles.sorted()
    }

    /// Ends every attempt with a 200, in the order they started, those started meanwhile
    /// included; returns the callers in the order they ended.
    mutating func endEveryAttempt() -> [String] {
        var ended = 0
        while ended < started.count {
            ended += 1
            end("task \(ended)")
        }
        return outcomes.map(\.caller)
    }

    /// Moves the clock, and fires the timer if it is due.
    mutating func advance(seconds: TimeInterval) {
        now += UInt64(seconds * 1_000_000_000)
        if let armed = armedFor, armed <= now {
            armedFor = nil
            let (fired, actions) = machine.timerFired(now: now)
            for promotion in fired.promotions { promotions.append((promotion.request.prepared.urlRequest.url?.path ?? "", promotion.to)) }
            for change in fired.healthChanges { healthChanges.append((change.host, change.availability)) }
            perform(actions, expired: fired.expired.map(\.attempt),
                    followUps: fired.expired.map(\.followUp) + fired.outwaited.map { .verdictWanted($0) })
        }
    }

    mutating func setConnected(_ isConnected: Bool) {
        perform(machine.connectivityChanged(isConnected: isConnected, now: now))
    }

    /// A token refresh ended: the call's request is built again, or it fails with `error`.
    mutating func tokenRefreshed(_ refresh: Machine.TokenRefresh, failing error: ServiceError? = nil) {
        refreshes.removeAll { $0.call == refresh.call }
        do throws(ServiceError) {
            if let error { throw error }
            perform(machine.tokenRefreshed(refresh.call, rebuilt: try refresh.request.rebuilt(), now: now))
        } catch {
            perform(machine.tokenRefreshFailed(refresh.call, with: .failure(error), now: now))
        }
    }

    /// The verdict on a failed attempt, or on callers whose patience with one ran out, is
    /// reported, as the scheduler reads it: by each asked caller's own policy.
    mutating func judge(_ wanted: Machine.VerdictWanted) {
        if let index = pendingVerdicts.firstIndex(of: wanted) { pendingVerdicts.remove(at: index) }
        verdictsReached += 1
        let asked = wanted.callers.map { ($0.id, policies[$0.handle] ?? retryPolicy, $0.attemptNumber) }
        let verdict = AttemptVerdict(failure: wanted.kind, outcome: wanted.outcome, asked: asked, request: wanted.request.prepared)
        if wanted.attemptRunsOn {
            perform(machine.patienceJudged(wanted.id, asked: wanted.callers.map(\.id), verdict, answer: wanted.outcome, now: now))
            return
        }
        let (followUp, actions) = machine.verdictReached(wanted.id, verdict, answer: wanted.outcome, now: now)
        perform(actions, followUps: [followUp])
    }

    /// The uptime `seconds` from now.
    func uptime(after seconds: TimeInterval) -> UInt64 {
        now + UInt64(seconds * 1_000_000_000)
    }

    // MARK: - Reading

    /// What `name` got, if it ended: the status it was delivered, or its error.
    func outcome(of name: String) -> Result<Int, ServiceError>? {
        outcomes.last { $0.caller == name }?.result
    }

    /// How many outcomes `name` got: one once it ended, never two.
    func outcomeCount(of name: String) -> Int {
        outcomes.count { $0.caller == name }
    }

    var violations: [String] { machine.invariantViolations() + lendingViolations }

    // MARK: - Performing actions

    /// Performs an event's actions, then what follows for the calls whose attempts it ended
    /// (`expired`: those it ended at their deadline, whose tasks are cancelled).
    mutating func perform(_ actions: Machine.Actions, expired: [AttemptID] = [], followUps: [Machine.FollowUp] = []) {
        let (locked, unlocked) = (actions.locked, actions.unlocked)
        for start in locked.starts {
            checkStartOrder(of: start.id.call, at: start.rank)
            let task = "task \(started.count + 1)"
            started.append(task)
            starts[task] = start
            tasks[start.id] = task
            taskPriorities[task] = start.priority
        }
        cancelledTasks.append(contentsOf: (Array(locked.cancels) + expired).map { tasks[$0]! })
        for change in locked.reprioritized { taskPriorities[tasks[change.attempt]!] = change.priority }
        checkTaskPriorities()
        if let armTimer = locked.armTimer { armedFor = armTimer }
        for delivery in unlocked.deliveries {
            record(delivery.caller, delivery.outcome.map(\.statusCode))
        }
        for caller in unlocked.cancelled { record(caller, .failure(.cancelled)) }
        recordLineArrivals()
        for followUp in followUps {
            switch followUp {
            case .none:
                break
            case .kept(let outcome):
                kept.append(outcome.request.prepared.urlRequest.url?.path ?? "")
            case .retry(_, let refresh):
                if let refresh { refreshes.append(refresh) }
            case .verdictWanted(let wanted):
                if !wanted.attemptRunsOn, !verdictsWanted.insert(wanted.id).inserted {
                    brokenContracts.append("the verdict on \(wanted.id) was wanted twice")
                }
                pendingVerdicts.append(wanted)
            }
        }
        if judgesAtOnce {
            while let wanted = pendingVerdicts.first { judge(wanted) }
        }
    }

    /// Each running attempt's task was told its call's priority as it is now.
    private mutating func checkTaskPriorities() {
        for (slot, call) in machine.calls.all {
            guard case .running(let running) = call.attempt,
                  let task = tasks[AttemptID(call: machine.id(ofCallAt: slot), serial: running.serial)],
                  let priority = call.priorities.highest, taskPriorities[task] != priority else { continue }
            brokenContracts.append("\(task) runs at \(taskPriorities[task].map(String.init(describing:)) ?? "?"), its call at \(priority)")
        }
    }

    /// Where each waiting call stands within its priority, as of the last event.
    private mutating func recordLineArrivals() {
        lineArrivals = [:]
        for (slot, call) in machine.calls.all {
            if case .waiting(_, let arrival, _) = call.attempt { lineArrivals[machine.id(ofCallAt: slot)] = arrival }
        }
    }

    private mutating func record(_ caller: String, _ result: Result<Int, ServiceError>) {
        if !ended.insert(caller).inserted { brokenContracts.append("\(caller) got a second outcome") }
        outcomes.append((caller, result))
    }

    /// Priority, then first in first out: a call that starts leaves no more urgent call
    /// waiting on its host, and no call of its own priority that entered the line before it.
    /// A call already waiting before this event entered before every call that entered during
    /// it; among those, the machine's arrival numbers are the only record of the order, so they
    /// are not compared here.
    private mutating func checkStartOrder(of callID: CallID, at priority: RequestPriority) {
        let started = machine.calls[callID.slot]
        let arrival = lineArrivals[callID] ?? .max
        for (slot, call) in machine.calls.all where call.host == started.host {
            guard case .waiting(_, let waitingArrival, _) = call.attempt, let waiting = call.rank else { continue }
            if waiting > priority {
                brokenContracts.append("call \(callID) started at \(priority) while call \(slot) waited at \(waiting)")
            } else if waiting == priority, lineArrivals[machine.id(ofCallAt: slot)] != nil, waitingArrival < arrival {
                brokenContracts.append("call \(callID) started at \(priority) before call \(slot), which entered the line earlier")
            }
        }
    }

    // MARK: - Values

    static func request(_ method: String, _ url: String, shared: Bool, timeout: TimeInterval,
                        idempotencyKey: String? = nil) -> (PreparedRequest, CallKey?) {
        var urlRequest = URLRequest(url: URL(string: url)!, timeoutInterval: timeout)
        urlRequest.httpMethod = method
        urlRequest.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key")
        let request = PreparedRequest(urlRequest)
        return (request, shared ? request.key(.automatic, ignoring: HeaderNames([])) : nil)
    }

    static func submission(_ request: PreparedRequest, retryPolicy: RetryPolicy? = nil,
                           authenticator: TokenAuthenticator? = nil, lane: Lane? = nil) -> Submission {
        Submission(.urlRequest(request.urlRequest), deduplication: .automatic, retryPolicy: retryPolicy,
                   authenticator: authenticator, lane: lane)
    }

    static func response(status: Int, headers: HeaderFields = [:]) -> TransportResponse {
        let url = URL(string: "https://api.test/")!
        return TransportResponse(data: Data(), response: HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1",
                                                                          headerFields: headers.dictionary)!)
    }
}

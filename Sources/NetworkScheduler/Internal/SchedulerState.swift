import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything the scheduler knows, as one value behind its lock.
///
/// Every caller is in the state from `send` until the one method that ends it (its handle's
/// ``CallerStage`` becomes `.ended`); whoever ends it delivers its outcome, so each caller ends
/// exactly once. A network call is live from its first attempt until its outcome is delivered
/// or its last caller leaves, across retries and a token refresh, and is registered under its
/// key all along, so that identical requests join it. Callers and calls are reached by
/// reference (a handle holds its stage, an operation its call), never looked up by ID: the
/// only table a request enters is the registry of keys.
///
/// A call waits for a budget slot in its host's ``WaitingLine``, as a few words of state; its
/// `DataTaskOperation` is made, and added to the host's `OperationQueue`, only when a slot is
/// free. So a long queue costs little memory, cancelling a waiting call only leaves a stale
/// entry in its line, and the queue never holds more operations than the budget. The methods
/// only decide: they return what must happen next (start operations, deliver, wait, refresh a
/// token), and the scheduler does it after unlocking.
struct SchedulerState {
    /// An operation that got a budget slot: add it to its host's queue.
    struct Start {
        let operation: DataTaskOperation
        let queue: OperationQueue
    }

    /// The operations to add to their queues after unlocking.
    typealias Starts = SmallBatch<Start>
    /// The callers to deliver to after unlocking, with what each gets.
    typealias Deliveries = SmallBatch<(RequestHandle, CallResult)>

    /// Where a caller is. Kept by its ``RequestHandle`` and only touched under the lock.
    enum CallerStage {
        /// Not in the state yet (or never: its request could not be built).
        case unsubmitted
        /// Waiting for this many dependencies to succeed.
        case waiting(dependencies: Int)
        /// Its `URLRequest` is being built, outside the lock.
        case building
        /// Subscribed to a network call since this uptime.
        case attached(Call, since: UInt64)
        /// Out of the state: its outcome is being (or was) delivered.
        case ended
    }

    /// What became of a caller whose request was ready.
    enum Attachment {
        /// It left before it could attach.
        case gone
        /// It joined an identical call in flight, which starts now if the joiner made it urgent
        /// enough for a slot kept free of low-priority calls.
        case joined(starts: Starts)
        /// It made a new call, sending `request`, which starts the operations given (its own
        /// when a budget slot was free).
        case created(request: PreparedRequest, starts: Starts)
    }

    /// What to do after an attempt of a call ended.
    enum Ending {
        /// The call's callers had all left.
        case gone
        /// Deliver to each remaining caller.
        case deliver(Deliveries)
        /// Try again after this many seconds (attempt is the next one's number).
        case retry(after: TimeInterval, attempt: Int, request: PreparedRequest)
        /// Get a token newer than `rejected`, then replay the call once (as attempt `attempt`).
        case refreshToken(TokenAuthenticator, rejected: String?, attempt: Int, request: PreparedRequest)
    }

    /// Makes the operation for a call's attempt, given the uptime since which it waited and
    /// whether it takes one of the slots that low-priority calls may use.
    typealias MakeOperation = (Call, PreparedRequest, _ waitingSince: UInt64, _ holdsLowPrioritySlot: Bool) -> DataTaskOperation

    /// The most operations running at once per host.
    let budget: Int
    /// The most of them that `.low` and `.background` calls may hold, so that a more urgent
    /// call finds a slot free.
    let lowPriorityBudget: Int
    /// The policy of calls whose resource has none.
    let defaultRetryPolicy: RetryPolicy
    private var registry = CallRegistry()
    private var lanes: [String: Lane] = [:]
    private var liveCallers = 0
    private var liveCalls = 0
    private var nextTicket = 0
    private var isOffline = false

    init(budget: Int, lowPriorityBudget: Int, defaultRetryPolicy: RetryPolicy) {
        self.budget = budget
        self.lowPriorityBudget = lowPriorityBudget
        self.defaultRetryPolicy = defaultRetryPolicy
    }

    /// Live callers, network calls and registry entries: all zero once everything has ended.
    var census: (callers: Int, calls: Int, registered: Int) {
        (liveCallers, liveCalls, registry.count)
    }

    /// The operations in the per-host queues (those of the calls holding a budget slot, and
    /// cancelled ones until their queue lets them go), for diagnostics.
    var operations: [DataTaskOperation] {
        lanes.values.flatMap { $0.queue.operations.compactMap { $0 as? DataTaskOperation } }
    }

    /// Calls holding a budget slot (and how many of those are low-priority ones), and calls
    /// waiting for one, over all hosts.
    var lineCounts: (running: Int, lowPriorityRunning: Int, waiting: Int) {
        lanes.values.reduce(into: (0, 0, 0)) { counts, lane in
            counts.0 += lane.running
            counts.1 += lane.lowPriorityRunning
            counts.2 += lane.waitingCount
        }
    }

    /// Entries in the waiting lines, stale ones included.
    var lineEntryCount: Int {
        lanes.values.reduce(0) { $0 + $1.waiting.entryCount }
    }

    /// Whether the waiting lines hold no entry at all, stale ones included.
    var waitingLinesAreEmpty: Bool {
        lanes.values.allSatisfy(\.waiting.isEmpty)
    }

    /// The per-host queues, for diagnostics.
    var operationQueues: [OperationQueue] {
        lanes.values.map(\.queue)
    }

    // MARK: - Callers

    /// Adds a caller that waits for dependencies before it is built.
    mutating func wait(_ handle: RequestHandle, dependencies: Int) {
        handle.stage = .waiting(dependencies: dependencies)
        liveCallers += 1
    }

    /// One dependency of `handle` succeeded. Returns whether it is now ready to be built.
    mutating func dependencySucceeded(_ handle: RequestHandle) -> Bool {
        guard case .waiting(let remaining) = handle.stage else { return false }
        handle.stage = remaining > 1 ? .waiting(dependencies: remaining - 1) : .building
        return remaining == 1
    }

    /// Ends a caller that has not attached to a call (a dependency failed, or its request
    /// could not be built). Returns whether it was still here.
    mutating func removeUnattached(_ handle: RequestHandle) -> Bool {
        switch handle.stage {
        case .waiting, .building:
            endCaller(handle)
            return true
        case .unsubmitted, .attached, .ended:
            return false
        }
    }

    /// Attaches a built request to the identical call in flight, or to a new one (which gets a
    /// fresh `Idempotency-Key` if it needs one). A caller without dependencies is new here; one
    /// whose dependencies succeeded must still be waiting.
    mutating func attach(
        _ handle: RequestHandle,
        isNew: Bool,
        request: PreparedRequest,
        needsIdempotencyKey: Bool,
        key: RequestKey?,
        now: UInt64,
        makeOperation: MakeOperation
    ) -> Attachment {
        if isNew {
            liveCallers += 1
        } else {
            guard case .building = handle.stage else { return .gone }
        }
        if let key, let call = registry.call(for: key) {
            handle.stage = .attached(call, since: now)
            call.subscribers.insert(handle)
            call.wasShared = true
            reprioritize(call) { [priority = handle.priority] in $0.add(priority) }
            guard case .waiting = call.attempt else { return .joined(starts: Starts()) }
            return .joined(starts: startWaiting(in: call.lane, makeOperation: makeOperation))
        }
        var sent = request
        if needsIdempotencyKey {
            // One key per logical submit: made with the call, so joiners and retries share it.
            sent.setValue(UUID().uuidString, forHTTPHeaderField: "Idempotency-Key")
        }
        let call = Call(key: key, submission: handle.submission, request: sent, lane: lane(sent.host), firstCaller: handle)
        liveCalls += 1
        registry.insert(call)
        handle.stage = .attached(call, since: now)
        line(call, now: now)
        return .created(request: sent, starts: startWaiting(in: call.lane, makeOperation: makeOperation))
    }

    /// Ends a caller on cancellation. Returns nil if it had already ended (or never entered);
    /// else the operation to cancel when it was the last caller of its running call.
    mutating func cancel(_ handle: RequestHandle) -> DataTaskOperation?? {
        switch handle.stage {
        case .unsubmitted, .ended:
            return nil
        case .waiting, .building:
            endCaller(handle)
            return .some(nil)
        case .attached(let call, _):
            endCaller(handle)
            if call.subscribers.count == 1 {
                removeCall(call)
                guard case .running(let operation) = call.attempt else { return .some(nil) }
                return operation
            }
            call.subscribers.remove(handle)
            reprioritize(call) { $0.remove(handle.priority) }
            return .some(nil)
        }
    }

    // MARK: - Attempts

    /// An attempt of a call on `host` ended, which frees its budget slot for the calls waiting
    /// (returned as `starts`). Decides whether to retry the call, refresh its token, or deliver
    /// its outcome.
    mutating func end(
        _ call: Call,
        freeingLowPrioritySlot: Bool,
        with outcome: Result<TransportResponse, ServiceError>,
        timing: DataTaskOperation.Timing,
        jitter: @autoclosure () -> Double,
        makeOperation: MakeOperation
    ) -> (ending: Ending, starts: Starts) {
        let lane = call.lane
        lane.running -= 1
        if freeingLowPrioritySlot { lane.lowPriorityRunning -= 1 }
        let starts = startWaiting(in: lane, makeOperation: makeOperation)
        return (end(call, with: outcome, timing: timing, jitter: jitter()), starts)
    }

    private mutating func end(
        _ call: Call,
        with outcome: Result<TransportResponse, ServiceError>,
        timing: DataTaskOperation.Timing,
        jitter: @autoclosure () -> Double
    ) -> Ending {
        // Lets go of the operation first, even for a call whose callers have all left: the
        // operation's completion holds the call, and the call would otherwise hold it back.
        call.attempt = .paused
        guard call.isLive else { return .gone }
        if case .success(let payload) = outcome, payload.response.statusCode == 401,
           let authenticator = call.submission.authenticator, !call.replayedWithNewToken {
            call.replayedWithNewToken = true
            return .refreshToken(authenticator, rejected: Self.bearerToken(of: call.request),
                                 attempt: call.attemptNumber + 1, request: call.request)
        }
        if isOffline, case .failure(let error) = outcome, error.isConnectivityFailure {
            // Offline with a monitor: wait in the line until the network returns; this is not an attempt.
            return .retry(after: 0, attempt: call.attemptNumber, request: call.request)
        }
        let policy = call.submission.retryPolicy ?? defaultRetryPolicy
        if let delay = policy.delay(before: call.attemptNumber, method: call.request.method,
                                         isKeyed: call.idempotencyKey != nil, after: outcome, jitter: jitter()) {
            call.attemptNumber += 1
            return .retry(after: delay, attempt: call.attemptNumber, request: call.request)
        }
        return .deliver(deliver(outcome, of: call, timing: timing))
    }

    /// Puts a call that was between attempts back in its host's line, with a rebuilt request
    /// after a token refresh. Returns what starts now; nothing if its callers have all left.
    mutating func restart(
        _ call: Call,
        rebuilt: PreparedRequest? = nil,
        makeOperation: MakeOperation
    ) -> Starts {
        guard call.isLive, case .paused = call.attempt else { return Starts() }
        if var rebuilt {
            if let key = call.idempotencyKey {
                rebuilt.setValue(key, forHTTPHeaderField: "Idempotency-Key")
            }
            call.request = rebuilt
        }
        let now = DispatchTime.now().uptimeNanoseconds
        line(call, now: now)
        return startWaiting(in: call.lane, makeOperation: makeOperation)
    }

    /// How to build a waiting call's request again, if its callers are still there.
    func submission(of call: Call) -> Submission? {
        call.isLive ? call.submission : nil
    }

    /// Ends a waiting call with `error` for every caller still subscribed.
    mutating func fail(_ call: Call, with error: ServiceError) -> Deliveries {
        guard call.isLive else { return Deliveries() }
        let now = DispatchTime.now().uptimeNanoseconds
        return deliver(.failure(error), of: call, timing: .init(created: now, started: nil, completed: now))
    }

    // MARK: - Connectivity

    /// Records whether the network is reachable. While it is not, no waiting call starts, and
    /// the queues hold what they have not started yet; once it is, what fits starts.
    mutating func setConnected(_ isConnected: Bool, makeOperation: MakeOperation) -> Starts {
        isOffline = !isConnected
        for lane in lanes.values { lane.queue.isSuspended = isOffline }
        var starts = Starts()
        for lane in lanes.values { starts.append(contentsOf: startWaiting(in: lane, makeOperation: makeOperation)) }
        return starts
    }

    // MARK: - Helpers

    /// Removes a call and every caller still subscribed, with what each gets.
    private mutating func deliver(
        _ outcome: Result<TransportResponse, ServiceError>,
        of call: Call,
        timing: DataTaskOperation.Timing
    ) -> Deliveries {
        removeCall(call)
        let idempotencyKey = call.idempotencyKey
        let statusCode = try? outcome.get().response.statusCode
        let sharedDecodes = call.subscribers.count > 1 && statusCode != nil ? SharedDecodes() : nil
        var deliveries = Deliveries()
        for handle in call.subscribers {
            guard case .attached(_, let since) = handle.stage else { continue }
            endCaller(handle)
            let metrics = ResponseMetrics(
                statusCode: statusCode,
                wasShared: call.wasShared,
                queuedDuration: seconds(from: since, to: timing.started ?? timing.completed),
                networkDuration: timing.networkDuration
            )
            deliveries.append((handle, CallResult(outcome: outcome, metrics: metrics, idempotencyKey: idempotencyKey,
                                                  sharedDecodes: sharedDecodes)))
        }
        return deliveries
    }

    /// Ends a caller that was in the state.
    private mutating func endCaller(_ handle: RequestHandle) {
        handle.stage = .ended
        liveCallers -= 1
    }

    private mutating func removeCall(_ call: Call) {
        call.isLive = false
        liveCalls -= 1
        registry.remove(call)
        if case .waiting = call.attempt { leaveLine(call.lane) }
    }

    // MARK: - Waiting lines

    /// Puts a call in its host's line at its highest caller's priority: at the back, or, for
    /// a call already waiting that moves to another priority, at the place its arrival gives.
    private mutating func line(_ call: Call, now: UInt64) {
        guard let priority = call.priorities.highest else { return }
        nextTicket += 1
        let arrival: Int
        if case .waiting(_, let firstArrival, _) = call.attempt {
            arrival = firstArrival
        } else {
            arrival = nextTicket
            call.lane.waitingCount += 1
        }
        call.attempt = .waiting(ticket: nextTicket, arrival: arrival, since: now)
        call.lane.waiting.append(.init(call: call, ticket: nextTicket, arrival: arrival), priority: priority)
        call.lane.waiting.compactIfMostlyStale(live: call.lane.waitingCount)
    }

    /// A waiting call left its host's line (its entry there is now stale).
    private func leaveLine(_ lane: Lane) {
        lane.waitingCount -= 1
        if lane.waitingCount == 0 {
            lane.waiting.removeAll()
        } else {
            lane.waiting.compactIfMostlyStale(live: lane.waitingCount)
        }
    }

    /// Gives the free budget slots of a lane to its first waiting calls, and returns their
    /// operations. Low-priority calls stop short of the slots kept for more urgent ones.
    /// Nothing starts while offline.
    private func startWaiting(in lane: Lane, makeOperation: MakeOperation) -> Starts {
        var starts = Starts()
        guard !isOffline, lane.running < budget, lane.waitingCount > 0 else { return starts }
        while lane.running < budget,
              let call = lane.waiting.popFirst(from: lane.lowPriorityRunning < lowPriorityBudget ? .background : .normal) {
            let isLowPriority = call.priorities.highest.map { $0 < .normal } ?? false
            let operation = call.begin { request, since in
                makeOperation(call, request, since, isLowPriority)
            }
            lane.running += 1
            if isLowPriority { lane.lowPriorityRunning += 1 }
            lane.waitingCount -= 1
            starts.append(Start(operation: operation, queue: lane.queue))
        }
        if lane.waitingCount == 0 { lane.waiting.removeAll() }
        return starts
    }

    /// The lane of `host`, made on its first call.
    private mutating func lane(_ host: String) -> Lane {
        if let lane = lanes[host] { return lane }
        let queue = OperationQueue()
        queue.name = "NetworkScheduler \(host)"
        queue.maxConcurrentOperationCount = budget
        queue.isSuspended = isOffline
        let lane = Lane(queue: queue)
        lanes[host] = lane
        return lane
    }

    /// Applies a change to a call's callers' priorities, and moves it in its line when the
    /// highest changes. Done under the lock so that concurrent changes apply in order.
    private mutating func reprioritize(_ call: Call, _ change: (inout PriorityCounts) -> Void) {
        guard let before = call.priorities.highest else { return }
        change(&call.priorities)
        guard let after = call.priorities.highest, after != before else { return }
        switch call.attempt {
        case .waiting(_, _, let since): line(call, now: since)
        case .running(let operation): operation.queuePriority = after.queuePriority
        case .paused: break
        }
    }

    private static func bearerToken(of request: PreparedRequest) -> String? {
        guard let header = request.header("authorization"), header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}

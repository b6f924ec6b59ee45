import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything the scheduler knows, as one value behind its lock.
///
/// Every caller is in `callers` from `send` until the one method that removes it; whoever
/// removes it delivers its outcome, so each caller ends exactly once. A network call lives in
/// `calls` from its first attempt until its outcome is delivered or its last caller leaves,
/// across retries and a token refresh, so that identical requests join it all along.
///
/// A call waits for a budget slot in its host's ``WaitingLine``, as a few words of state; its
/// `DataTaskOperation` is made, and added to the host's `OperationQueue`, only when a slot is
/// free. So a long queue costs little memory, cancelling a waiting call is a dictionary removal,
/// and the queue never holds more operations than the budget. The methods only decide: they
/// return what must happen next (start operations, deliver, wait, refresh a token), and the
/// scheduler does it after unlocking.
struct SchedulerState {
    typealias CallID = Int

    /// An operation that got a budget slot: add it to its host's queue.
    struct Start {
        let operation: DataTaskOperation
        let queue: OperationQueue
    }

    private enum Stage {
        /// Waiting for this many dependencies to succeed.
        case waiting(dependencies: Int)
        /// Its `URLRequest` is being built, outside the lock.
        case building
        /// Subscribed to a network call since this uptime.
        case attached(CallID, since: UInt64)
    }

    private struct Caller {
        let handle: RequestHandle
        var stage: Stage
    }

    /// What became of a caller whose request was ready.
    enum Attachment {
        /// It left before it could attach.
        case gone
        /// It joined an identical call in flight, which starts now if the joiner made it urgent
        /// enough for a slot kept free of low-priority calls.
        case joined(starts: [Start])
        /// It made a new call, sending `request`, which starts the operations given (its own
        /// when a budget slot was free).
        case created(request: PreparedRequest, starts: [Start])
    }

    /// What to do after an attempt of a call ended.
    enum Ending {
        /// The call's callers had all left.
        case gone
        /// Deliver to each remaining caller.
        case deliver([(RequestHandle, CallResult)])
        /// Try again after this many seconds (attempt is the next one's number).
        case retry(after: TimeInterval, attempt: Int, request: PreparedRequest)
        /// Get a token newer than `rejected`, then replay the call once (as attempt `attempt`).
        case refreshToken(TokenAuthenticator, rejected: String?, attempt: Int, request: PreparedRequest)
    }

    /// Makes the operation for a call's attempt, given the uptime since which it waited and
    /// whether it takes one of the slots that low-priority calls may use.
    typealias MakeOperation = (CallID, PreparedRequest, _ waitingSince: UInt64, _ holdsLowPrioritySlot: Bool) -> DataTaskOperation

    /// The most operations running at once per host.
    let budget: Int
    /// The most of them that `.low` and `.background` calls may hold, so that a more urgent
    /// call finds a slot free.
    let lowPriorityBudget: Int
    /// The policy of calls whose resource has none.
    let defaultRetryPolicy: RetryPolicy
    private var callers: [RequestID: Caller] = [:]
    private var calls: [CallID: Call] = [:]
    private var registry: [RequestKey: CallID] = [:]
    private var lanes: [String: Lane] = [:]
    private var nextCallID: CallID = 0
    private var nextTicket = 0
    private var isOffline = false

    init(budget: Int, lowPriorityBudget: Int, defaultRetryPolicy: RetryPolicy) {
        self.budget = budget
        self.lowPriorityBudget = lowPriorityBudget
        self.defaultRetryPolicy = defaultRetryPolicy
    }

    /// Live callers, network calls and registry entries: all zero once everything has ended.
    var census: (callers: Int, calls: Int, registered: Int) {
        (callers.count, calls.count, registry.count)
    }

    /// The operations of the calls holding a budget slot, for diagnostics.
    var operations: [DataTaskOperation] {
        calls.values.compactMap { call in
            if case .running(let operation) = call.attempt { return operation }
            return nil
        }
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
        callers[handle.id] = Caller(handle: handle, stage: .waiting(dependencies: dependencies))
    }

    /// One dependency of `id` succeeded. Returns the caller if it is now ready to be built.
    mutating func dependencySucceeded(_ id: RequestID) -> RequestHandle? {
        guard let caller = callers[id], case .waiting(let remaining) = caller.stage else { return nil }
        callers[id]?.stage = remaining > 1 ? .waiting(dependencies: remaining - 1) : .building
        return remaining > 1 ? nil : caller.handle
    }

    /// Removes a caller that has not attached to a call (a dependency failed, or its request
    /// could not be built). Returns it if it was still here.
    mutating func removeUnattached(_ id: RequestID) -> RequestHandle? {
        guard let caller = callers[id] else { return nil }
        if case .attached = caller.stage { return nil }
        callers[id] = nil
        return caller.handle
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
        let id = handle.id
        if !isNew {
            guard let caller = callers[id], case .building = caller.stage else { return .gone }
        }
        if let key, let callID = registry[key], let call = calls[callID] {
            callers[id] = Caller(handle: handle, stage: .attached(callID, since: now))
            call.subscribers.insert(id)
            call.wasShared = true
            reprioritize(call) { [priority = handle.priority] in $0.add(priority) }
            guard case .waiting = call.attempt else { return .joined(starts: []) }
            return .joined(starts: startWaiting(in: call.lane, makeOperation: makeOperation))
        }
        nextCallID += 1
        var sent = request
        if needsIdempotencyKey {
            // One key per logical submit: made with the call, so joiners and retries share it.
            sent.setValue(UUID().uuidString, forHTTPHeaderField: "Idempotency-Key")
        }
        let call = Call(id: nextCallID, key: key, submission: handle.submission, request: sent, lane: lane(sent.host),
                        firstCaller: handle)
        calls[call.id] = call
        if let key { registry[key] = call.id }
        callers[id] = Caller(handle: handle, stage: .attached(call.id, since: now))
        line(call, now: now)
        return .created(request: sent, starts: startWaiting(in: call.lane, makeOperation: makeOperation))
    }

    /// Removes a caller on cancellation. Returns it, and the operation to cancel when it was the
    /// last caller of its running call; nil if it had already ended.
    mutating func cancel(_ id: RequestID) -> (RequestHandle, DataTaskOperation?)? {
        guard let caller = callers.removeValue(forKey: id) else { return nil }
        guard case .attached(let callID, _) = caller.stage, let call = calls[callID] else {
            return (caller.handle, nil)
        }
        if call.subscribers.count == 1 {
            removeCall(call)
            guard case .running(let operation) = call.attempt else { return (caller.handle, nil) }
            return (caller.handle, operation)
        }
        call.subscribers.remove(id)
        reprioritize(call) { $0.remove(caller.handle.priority) }
        return (caller.handle, nil)
    }

    // MARK: - Attempts

    /// An attempt of a call on `host` ended, which frees its budget slot for the calls waiting
    /// (returned as `starts`). Decides whether to retry the call, refresh its token, or deliver
    /// its outcome.
    mutating func end(
        _ callID: CallID,
        on host: String,
        freeingLowPrioritySlot: Bool,
        with outcome: Result<TransportResponse, ServiceError>,
        timing: DataTaskOperation.Timing,
        jitter: @autoclosure () -> Double,
        makeOperation: MakeOperation
    ) -> (ending: Ending, starts: [Start]) {
        var starts: [Start] = []
        if let lane = lanes[host] {
            lane.running -= 1
            if freeingLowPrioritySlot { lane.lowPriorityRunning -= 1 }
            starts = startWaiting(in: lane, makeOperation: makeOperation)
        }
        return (end(callID, with: outcome, timing: timing, jitter: jitter()), starts)
    }

    private mutating func end(
        _ callID: CallID,
        with outcome: Result<TransportResponse, ServiceError>,
        timing: DataTaskOperation.Timing,
        jitter: @autoclosure () -> Double
    ) -> Ending {
        guard let call = calls[callID] else { return .gone }
        call.attempt = .paused
        if case .success(let payload) = outcome, payload.response.statusCode == 401,
           let authenticator = call.submission.authenticator, !call.replayedWithNewToken {
            call.replayedWithNewToken = true
            return .refreshToken(authenticator, rejected: Self.bearerToken(of: call.request),
                                 attempt: call.attemptNumber + 1, request: call.request)
        }
        if isOffline, case .failure(.noConnection) = outcome {
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
        _ callID: CallID,
        rebuilt: PreparedRequest? = nil,
        makeOperation: MakeOperation
    ) -> [Start] {
        guard let call = calls[callID], case .paused = call.attempt else { return [] }
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
    func submission(of callID: CallID) -> Submission? {
        calls[callID]?.submission
    }

    /// Ends a waiting call with `error` for every caller still subscribed.
    mutating func fail(_ callID: CallID, with error: ServiceError) -> [(RequestHandle, CallResult)] {
        guard let call = calls[callID] else { return [] }
        let now = DispatchTime.now().uptimeNanoseconds
        return deliver(.failure(error), of: call, timing: .init(created: now, started: nil, completed: now))
    }

    // MARK: - Connectivity

    /// Records whether the network is reachable. While it is not, no waiting call starts, and
    /// the queues hold what they have not started yet; once it is, what fits starts.
    mutating func setConnected(_ isConnected: Bool, makeOperation: MakeOperation) -> [Start] {
        isOffline = !isConnected
        for lane in lanes.values { lane.queue.isSuspended = isOffline }
        return lanes.values.flatMap { startWaiting(in: $0, makeOperation: makeOperation) }
    }

    // MARK: - Helpers

    /// Removes a call and every caller still subscribed, with what each gets.
    private mutating func deliver(
        _ outcome: Result<TransportResponse, ServiceError>,
        of call: Call,
        timing: DataTaskOperation.Timing
    ) -> [(RequestHandle, CallResult)] {
        removeCall(call)
        let idempotencyKey = call.idempotencyKey
        let statusCode = try? outcome.get().response.statusCode
        let sharedDecodes = call.subscribers.count > 1 && statusCode != nil ? SharedDecodes() : nil
        return call.subscribers.compactMap { id in
            guard let caller = callers.removeValue(forKey: id),
                  case .attached(_, let since) = caller.stage else { return nil }
            let metrics = ResponseMetrics(
                statusCode: statusCode,
                wasShared: call.wasShared,
                queuedDuration: seconds(from: since, to: timing.started ?? timing.completed),
                networkDuration: timing.networkDuration
            )
            return (caller.handle, CallResult(outcome: outcome, metrics: metrics, idempotencyKey: idempotencyKey,
                                           sharedDecodes: sharedDecodes))
        }
    }

    private mutating func removeCall(_ call: Call) {
        calls[call.id] = nil
        // One lookup: the entry is almost always this call's; put back one that is not.
        if let key = call.key, let registered = registry.removeValue(forKey: key), registered != call.id {
            registry[key] = registered
        }
        if case .waiting = call.attempt { leaveLine(call.lane) }
    }

    // MARK: - Waiting lines

    /// Puts a call at the back of its host's line, at its highest caller's priority.
    private mutating func line(_ call: Call, now: UInt64) {
        guard let priority = call.priorities.highest else { return }
        if case .waiting = call.attempt {} else {
            call.lane.waitingCount += 1
        }
        nextTicket += 1
        call.attempt = .waiting(ticket: nextTicket, since: now)
        call.lane.waiting.append(.init(callID: call.id, ticket: nextTicket), priority: priority)
    }

    /// A waiting call left its host's line (its entry there is now stale).
    private func leaveLine(_ lane: Lane) {
        lane.waitingCount -= 1
        if lane.waitingCount == 0 { lane.waiting.removeAll() }
    }

    /// Gives the free budget slots of a lane to its first waiting calls, and returns their
    /// operations. Low-priority calls stop short of the slots kept for more urgent ones.
    /// Nothing starts while offline.
    private func startWaiting(in lane: Lane, makeOperation: MakeOperation) -> [Start] {
        guard !isOffline, lane.running < budget, lane.waitingCount > 0 else { return [] }
        var starts: [Start] = []
        while lane.running < budget, let call = lane.waiting.popFirst(
            from: lane.lowPriorityRunning < lowPriorityBudget ? .background : .normal,
            resolve: { entry -> Call? in
                guard let call = calls[entry.callID], case .waiting(entry.ticket, _) = call.attempt else { return nil }
                return call
            }
        ) {
            let isLowPriority = call.priorities.highest.map { $0 < .normal } ?? false
            let operation = call.begin { request, since in
                makeOperation(call.id, request, since, isLowPriority)
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
        case .waiting(_, let since): line(call, now: since)
        case .running(let operation): operation.queuePriority = after.queuePriority
        case .paused: break
        }
    }

    private static func bearerToken(of request: PreparedRequest) -> String? {
        guard let header = request.header("authorization"), header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}

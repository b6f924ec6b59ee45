import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything the scheduler knows, as one value behind its lock.
///
/// Every caller is in `callers` from `send` until the one method that removes it; whoever
/// removes it delivers its outcome, so each caller ends exactly once. A network call lives in
/// `calls` from its first attempt until its outcome is delivered or its last caller leaves,
/// across retries and a token refresh, so that identical requests join it all along. The
/// methods only decide: they return what must happen next (start an operation, deliver, wait,
/// refresh a token), and the scheduler does it after unlocking.
struct SchedulerState {
    typealias CallID = Int

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

    private struct Call {
        let key: RequestKey?
        /// The first caller's request: how to build it again after a token refresh.
        let submission: Submission
        let host: String
        let policy: RetryPolicy
        /// The request as sent, with its idempotency key, reused by every attempt.
        var request: URLRequest
        /// The `Idempotency-Key` it carries, which gives 409 and 422 their meaning.
        let idempotencyKey: String?
        /// The running or queued attempt; nil while waiting to retry or refreshing the token.
        var operation: DataTaskOperation?
        var attempt = 1
        var replayedWithNewToken = false
        var subscribers: Set<RequestID> = []
        var priorities = PriorityCounts()
        var wasShared = false
    }

    /// What became of a caller whose request was ready.
    enum Attachment {
        /// It left before it could attach.
        case gone
        /// It joined an identical call in flight.
        case joined
        /// It made a new call: add the operation to the queue.
        case enqueue(DataTaskOperation, OperationQueue)
    }

    /// What to do after an attempt of a call ended.
    enum Ending {
        /// The call's callers had all left.
        case gone
        /// Deliver to each remaining caller.
        case deliver([(RequestHandle, CallResult)])
        /// Try again after this many seconds (attempt is the next one's number).
        case retry(after: TimeInterval, attempt: Int, request: URLRequest)
        /// Get a token newer than `rejected`, then replay the call once (as attempt `attempt`).
        case refreshToken(TokenAuthenticator, rejected: String?, attempt: Int, request: URLRequest)
    }

    typealias MakeOperation = (CallID, URLRequest) -> DataTaskOperation

    private var callers: [RequestID: Caller] = [:]
    private var calls: [CallID: Call] = [:]
    private var registry: [RequestKey: CallID] = [:]
    private var queues: [String: OperationQueue] = [:]
    private var nextCallID: CallID = 0
    private var isOffline = false

    /// Live callers, network calls and registry entries: all zero once everything has ended.
    var census: (callers: Int, calls: Int, registered: Int) {
        (callers.count, calls.count, registry.count)
    }

    /// The operations of the calls in flight, for diagnostics.
    var operations: [DataTaskOperation] {
        calls.values.compactMap(\.operation)
    }

    /// The per-host queues, for diagnostics.
    var operationQueues: [OperationQueue] {
        Array(queues.values)
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

    /// Attaches a built request to the identical call in flight, or to a new one. A caller
    /// without dependencies is new here; one whose dependencies succeeded must still be waiting.
    mutating func attach(
        _ handle: RequestHandle,
        isNew: Bool,
        request: URLRequest,
        idempotencyKey: String?,
        key: RequestKey?,
        host: String,
        budget: Int,
        defaultPolicy: RetryPolicy,
        now: UInt64,
        makeOperation: MakeOperation
    ) -> Attachment {
        let id = handle.id
        if isNew {
            callers[id] = Caller(handle: handle, stage: .building)
        } else {
            guard let caller = callers[id], case .building = caller.stage else { return .gone }
        }
        let priority = handle.priority
        if let key, let callID = registry[key] {
            callers[id]?.stage = .attached(callID, since: now)
            calls[callID]?.subscribers.insert(id)
            calls[callID]?.wasShared = true
            reprioritize(callID) { $0.add(priority) }
            return .joined
        }
        nextCallID += 1
        let callID = nextCallID
        var sent = request
        var idempotencyKey = idempotencyKey
        if handle.submission.sendsIdempotencyKey, idempotencyKey == nil {
            // One key per logical submit: made with the call, so joiners and retries share it.
            idempotencyKey = UUID().uuidString
            sent.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key")
        }
        let operation = makeOperation(callID, sent)
        operation.queuePriority = priority.queuePriority
        var call = Call(key: key, submission: handle.submission, host: host,
                        policy: handle.submission.retryPolicy ?? defaultPolicy,
                        request: sent, idempotencyKey: idempotencyKey, operation: operation, subscribers: [id])
        call.priorities.add(priority)
        calls[callID] = call
        if let key { registry[key] = callID }
        callers[id]?.stage = .attached(callID, since: now)
        return .enqueue(operation, queue(for: host, budget: budget))
    }

    /// Removes a caller on cancellation. Returns it, and the operation to cancel when it was the
    /// last caller of its call; nil if it had already ended.
    mutating func cancel(_ id: RequestID) -> (RequestHandle, DataTaskOperation?)? {
        guard let caller = callers.removeValue(forKey: id) else { return nil }
        guard case .attached(let callID, _) = caller.stage, let remaining = calls[callID]?.subscribers.count else {
            return (caller.handle, nil)
        }
        if remaining == 1 {
            return (caller.handle, removeCall(callID)?.operation)
        }
        calls[callID]?.subscribers.remove(id)
        reprioritize(callID) { $0.remove(caller.handle.priority) }
        return (caller.handle, nil)
    }

    // MARK: - Attempts

    /// An attempt of a call ended: retry it, refresh its token, or deliver its outcome.
    mutating func end(
        _ callID: CallID,
        with outcome: Result<TransportResponse, ServiceError>,
        timing: DataTaskOperation.Timing,
        jitter: @autoclosure () -> Double
    ) -> Ending {
        guard calls[callID] != nil else { return .gone }
        calls[callID]!.operation = nil
        let call = calls[callID]!
        if case .success(let payload) = outcome, payload.response.statusCode == 401,
           let authenticator = call.submission.authenticator, !call.replayedWithNewToken {
            calls[callID]!.replayedWithNewToken = true
            return .refreshToken(authenticator, rejected: Self.bearerToken(of: call.request),
                                 attempt: call.attempt + 1, request: call.request)
        }
        if isOffline, case .failure(.noConnection) = outcome {
            // Offline with a monitor: wait in the suspended queue; this is not an attempt.
            return .retry(after: 0, attempt: call.attempt, request: call.request)
        }
        if let delay = call.policy.delay(before: call.attempt, of: call.request, after: outcome, jitter: jitter()) {
            calls[callID]!.attempt += 1
            return .retry(after: delay, attempt: call.attempt + 1, request: call.request)
        }
        return .deliver(deliver(outcome, of: callID, timing: timing))
    }

    /// Starts the next attempt of a call waiting between attempts, with a rebuilt request after a
    /// token refresh. Returns nil if its callers have all left.
    mutating func restart(
        _ callID: CallID,
        rebuilt: URLRequest? = nil,
        budget: Int,
        makeOperation: MakeOperation
    ) -> (DataTaskOperation, OperationQueue)? {
        guard var call = calls[callID], call.operation == nil, let priority = call.priorities.highest else { return nil }
        if var rebuilt {
            if let key = call.idempotencyKey {
                rebuilt.setValue(key, forHTTPHeaderField: "Idempotency-Key")
            }
            call.request = rebuilt
        }
        let operation = makeOperation(callID, call.request)
        operation.queuePriority = priority.queuePriority
        call.operation = operation
        calls[callID] = call
        return (operation, queue(for: call.host, budget: budget))
    }

    /// How to build a waiting call's request again, if its callers are still there.
    func submission(of callID: CallID) -> Submission? {
        calls[callID]?.submission
    }

    /// Ends a waiting call with `error` for every caller still subscribed.
    mutating func fail(_ callID: CallID, with error: ServiceError) -> [(RequestHandle, CallResult)] {
        let now = DispatchTime.now().uptimeNanoseconds
        return deliver(.failure(error), of: callID, timing: .init(created: now, started: nil, completed: now))
    }

    // MARK: - Connectivity

    /// Records whether the network is reachable, and stops or resumes the queues to match.
    mutating func setConnected(_ isConnected: Bool) {
        isOffline = !isConnected
        for queue in queues.values { queue.isSuspended = isOffline }
    }

    // MARK: - Helpers

    /// Removes a call and every caller still subscribed, with what each gets.
    private mutating func deliver(
        _ outcome: Result<TransportResponse, ServiceError>,
        of callID: CallID,
        timing: DataTaskOperation.Timing
    ) -> [(RequestHandle, CallResult)] {
        guard let call = removeCall(callID) else { return [] }
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
            return (caller.handle, CallResult(outcome: outcome, metrics: metrics, idempotencyKey: call.idempotencyKey,
                                           sharedDecodes: sharedDecodes))
        }
    }

    private mutating func removeCall(_ callID: CallID) -> Call? {
        guard let call = calls.removeValue(forKey: callID) else { return nil }
        if let key = call.key, registry[key] == callID { registry[key] = nil }
        return call
    }

    /// Applies a change to a call's callers' priorities, and moves its operation in the queue
    /// when the highest changes. Done under the lock so that concurrent changes apply in order.
    private mutating func reprioritize(_ callID: CallID, _ change: (inout PriorityCounts) -> Void) {
        guard let before = calls[callID]?.priorities.highest else { return }
        change(&calls[callID]!.priorities)
        guard let call = calls[callID], let after = call.priorities.highest, after != before else { return }
        call.operation?.queuePriority = after.queuePriority
    }

    private mutating func queue(for host: String, budget: Int) -> OperationQueue {
        if let queue = queues[host] { return queue }
        let queue = OperationQueue()
        queue.name = "NetworkScheduler \(host)"
        queue.maxConcurrentOperationCount = budget
        queue.isSuspended = isOffline
        queues[host] = queue
        return queue
    }

    private static func bearerToken(of request: URLRequest) -> String? {
        guard let header = request.value(forHTTPHeaderField: "Authorization"), header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}

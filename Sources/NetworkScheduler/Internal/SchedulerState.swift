import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything the scheduler knows, as one value behind its lock.
///
/// Every caller is in `callers` from `send` until the one method that removes it; whoever
/// removes it delivers its outcome, so each caller ends exactly once. The methods only decide:
/// they return what must happen next (start an operation, deliver, cancel a task), and the
/// scheduler does it after unlocking.
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
        let operation: DataTaskOperation
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

    private var callers: [RequestID: Caller] = [:]
    private var calls: [CallID: Call] = [:]
    private var registry: [RequestKey: CallID] = [:]
    private var queues: [String: OperationQueue] = [:]
    private var nextCallID: CallID = 0

    /// Live callers, network calls and registry entries: all zero once everything has ended.
    var census: (callers: Int, calls: Int, registered: Int) {
        (callers.count, calls.count, registry.count)
    }

    /// The operations of the calls in flight, for diagnostics.
    var operations: [DataTaskOperation] {
        calls.values.map(\.operation)
    }

    /// The per-host queues, for diagnostics.
    var operationQueues: [OperationQueue] {
        Array(queues.values)
    }

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
        key: RequestKey?,
        host: String,
        budget: Int,
        now: UInt64,
        makeOperation: (CallID) -> DataTaskOperation
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
        let operation = makeOperation(callID)
        operation.queuePriority = priority.queuePriority
        var call = Call(key: key, operation: operation, subscribers: [id])
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

    /// Ends a network call: removes it and every caller still subscribed, with what each gets.
    mutating func complete(
        _ callID: CallID,
        with outcome: Result<TransportResponse, ServiceError>,
        timing: DataTaskOperation.Timing
    ) -> [(RequestHandle, CallResult)] {
        guard let call = removeCall(callID) else { return [] }
        let statusCode = try? outcome.get().response.statusCode
        return call.subscribers.compactMap { id in
            guard let caller = callers.removeValue(forKey: id),
                  case .attached(_, let since) = caller.stage else { return nil }
            let metrics = ResponseMetrics(
                statusCode: statusCode,
                wasShared: call.wasShared,
                queuedDuration: seconds(from: since, to: timing.started ?? timing.completed),
                networkDuration: timing.networkDuration
            )
            return (caller.handle, CallResult(outcome: outcome, metrics: metrics))
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
        call.operation.queuePriority = after.queuePriority
    }

    private mutating func queue(for host: String, budget: Int) -> OperationQueue {
        if let queue = queues[host] { return queue }
        let queue = OperationQueue()
        queue.name = "NetworkScheduler \(host)"
        queue.maxConcurrentOperationCount = budget
        queues[host] = queue
        return queue
    }
}

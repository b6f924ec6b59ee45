import Foundation

extension RequestScheduler {
    /// What a scheduler holds at one moment: zero everywhere once every caller is done.
    public struct Census: Sendable, Equatable {
        /// Callers that have not ended.
        public let callers: Int
        /// Network calls in flight, waiting in a queue, or waiting to retry.
        public let networkCalls: Int
        /// Deduplication keys of calls in flight.
        public let registeredKeys: Int
        /// Attempts' operations the scheduler holds: from their attempt's start until they
        /// report their end (a cancelled one when its queue starts it and it stops at once).
        public let queuedOperations: Int

        /// A census with the given counts; `Census()` is an idle scheduler's.
        ///
        /// - Parameters:
        ///   - callers: callers that have not ended.
        ///   - networkCalls: calls in flight, waiting or between attempts.
        ///   - registeredKeys: deduplication keys in use.
        ///   - queuedOperations: operations still in the queues.
        public init(callers: Int = 0, networkCalls: Int = 0, registeredKeys: Int = 0, queuedOperations: Int = 0) {
            self.callers = callers
            self.networkCalls = networkCalls
            self.registeredKeys = registeredKeys
            self.queuedOperations = queuedOperations
        }
    }

    /// What the scheduler holds now: for leak checks, dashboards and graceful shutdown.
    public var census: Census {
        state.withLock { state in
            let counts = state.machine.census
            return Census(callers: counts.callers, networkCalls: counts.calls, registeredKeys: counts.registered,
                          queuedOperations: state.operations.count)
        }
    }
}

extension RequestScheduler {
    /// Waits until no attempt has an operation, and the queues have let every one go,
    /// cancelled ones included: for a graceful shutdown, or a leak check (its ``census`` then
    /// counts no operation). Attempts started meanwhile are waited for too. While a
    /// ``ConnectivityMonitor`` reports the device offline, the queues are suspended and this
    /// waits for the network to return.
    public func queuesDrained() async {
        // The scheduler's own count, not the queue's: an attempt's operation joins the queue a
        // moment after the event that started it released the lock.
        await withCheckedContinuation { continuation in
            let isIdle = state.withLock { core in
                guard core.operations.count > 0 else { return true }
                core.drainWaiters.append(continuation)
                return false
            }
            if isIdle { continuation.resume() }
        }
        // Operations that reported their end are still finishing in the queue.
        await withCheckedContinuation { continuation in
            attempts.addBarrierBlock { continuation.resume() }
        }
    }
}

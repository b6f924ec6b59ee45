import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The scheduler's executor: what the machine decided, performed after its lock is released.
// Each action carries what performing it needs (an attempt its request and callers), so
// nothing here asks the machine again.
extension RequestScheduler {
    /// What an event leaves the scheduler to do with operations, found under the lock.
    struct OperationEffects {
        /// The operations of the attempts the machine started, made and stored under the lock.
        var started = SmallBatch<DataTaskOperation>()
        var cancels = SmallBatch<DataTaskOperation>()
        var reprioritized = SmallBatch<(DataTaskOperation, RequestPriority)>()
    }

    /// What the machine left for after the lock: the operations found under it, what the
    /// monitors hear of the attempts it lets start, those attempts, then the rest, in
    /// ``SchedulerMachine/Actions/Unlocked``'s order.
    func perform(_ actions: Machine.Actions, _ effects: OperationEffects) {
        for operation in effects.cancels { operation.cancel() }
        for (operation, priority) in effects.reprioritized { operation.reprioritize(to: priority) }
        let unlocked = actions.unlocked
        // Before the attempts start: a monitor hears of a call's retry, promotion or host's
        // probe before the attempt that follows it (whose start it hears on that attempt's
        // thread), so that each call's events come in the order they happened.
        tellMonitors(unlocked)
        for operation in effects.started { attempts.addOperation(operation) }
        for step in unlocked.progress { step.caller.progressed(step.progress) }
        if !unlocked.cancelled.isEmpty {
            RequestHandle.complete(unlocked.cancelled, with: .failure(.cancelled))
        }
        if unlocked.deliveries.count > 0 {
            RequestHandle.complete(unlocked.deliveries)
        }
        for refresh in unlocked.refreshes { refreshToken(refresh) }
        for wanted in unlocked.verdictsWanted { judge(wanted) }
        for caller in unlocked.ready { submit(caller) }
        for kept in unlocked.kept {
            record(.outcomeKept(Self.eventCall(kept.request.prepared, number: kept.call.number, callers: []), kept.outcome.map(\.statusCode)))
        }
    }

    /// The retries, promotions and host changes an event decided, for the monitors.
    private func tellMonitors(_ unlocked: Machine.Actions.Unlocked) {
        for retry in unlocked.retries {
            record(.retried(Self.eventCall(retry.request.prepared, number: retry.call.number, callers: Self.ids(of: retry.callers)),
                            attempt: retry.attempt, after: retry.delay, cause: Self.cause(of: retry.outcome)))
        }
        for promotion in unlocked.promotions {
            record(.promoted(Self.eventCall(promotion.request.prepared, number: promotion.call.number, callers: Self.ids(of: promotion.callers)),
                             from: promotion.from, to: promotion.to))
        }
        if unlocked.healthChanges.count > 0 {
            let now = clock.uptimeNanoseconds
            for change in unlocked.healthChanges {
                record(.hostHealthChanged(host: change.host, health(change.availability, now: now)))
            }
        }
    }

    /// The operation for one attempt, which hands its request to the transport when it starts.
    /// Its deadline is the machine's, not its own. Made under the scheduler's lock: it runs no
    /// code of the app's but the clock's, which, as for arming the timer there, takes no lock of
    /// the scheduler's.
    ///
    /// Its callbacks keep the attempt's ID and request, never `start` whole: that names the
    /// call's callers when a monitor listens, and an operation whose callers all left, still
    /// running until its task ends, would keep their handles alive.
    func makeOperation(_ start: Machine.AttemptStart) -> DataTaskOperation {
        // Made only when a monitor listens: it would be an allocation per attempt for nothing.
        var onStart: (@Sendable () -> Void)?
        if !configuration.eventMonitors.isEmpty {
            onStart = { [self, waitingSince = start.waitingSince, request = start.request.prepared, number = start.id.call.number,
                         callers = Self.ids(of: start.callers)] in
                // Since the call entered its waiting line, not since this operation was made.
                let now = clock.uptimeNanoseconds
                record(.started(Self.eventCall(request, number: number, callers: callers), queuedFor: seconds(from: waitingSince, to: now)))
            }
        }
        // Only for a request with a body: the others would make a closure for nothing.
        var onProgress: (@Sendable (TransferProgress) -> Void)?
        let submission = start.request.submission
        if start.request.prepared.hasBody || submission.downloadDestination != nil || submission.opensStream {
            onProgress = { [self, id = start.id, request = start.request] progress in attemptProgressed(id, of: request, progress) }
        }
        // For the age of an answer the cache keeps (RFC 9111 §4.2.3).
        let requested = start.request.prepared.cache != nil ? clock.now : nil
        var policy = submission.transportPolicy(maximumResponseSize: configuration.maximumResponseSize)
        policy.priority = start.priority
        if !addedCredentialHeaders.isEmpty { policy.originBoundHeaders += addedCredentialHeaders }
        return DataTaskOperation(
            request: start.request,
            transport: configuration.transport,
            policy: policy,
            clock: clock,
            onStart: onStart,
            onProgress: onProgress,
            onCompletion: { [self, id = start.id, request = start.request] outcome in
                attemptEnded(id, of: request, with: outcome, requested: requested)
            }
        )
    }
}

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

    /// What the machine left for after the lock, common to every event: the operations found
    /// under it, the attempts it lets start, then the callers it decided for. What an event
    /// decided beyond that (a retry, a verdict wanted, a host's health) its feeder performs:
    /// what the monitors hear of it before this (`announce`), so that each call's
    /// events come in the order they happened; the rest after (``follow(_:)``).
    func perform(_ actions: Machine.Actions, _ effects: OperationEffects) {
        for operation in effects.cancels { operation.cancel() }
        for (operation, priority) in effects.reprioritized { operation.reprioritize(to: priority) }
        for operation in effects.started { attempts.addOperation(operation) }
        let unlocked = actions.unlocked
        if !unlocked.cancelled.isEmpty {
            RequestHandle.complete(unlocked.cancelled, with: .failure(.cancelled))
        }
        if unlocked.deliveries.count > 0 {
            RequestHandle.complete(unlocked.deliveries)
        }
    }

    /// Tells the monitors of a call's retry, before the attempt that follows it begins (whose
    /// start they hear on that attempt's thread).
    func announce(_ followUp: Machine.FollowUp) {
        guard case .retry(let retry, _) = followUp else { return }
        record(.retried(Self.eventCall(retry.request.prepared, number: retry.call.number, callers: Self.ids(of: retry.callers)),
                        attempt: retry.attempt, after: retry.delay, cause: Self.cause(of: retry.outcome)))
    }

    /// Tells the monitors of a host's health as it changed.
    func announce(_ change: Machine.HealthChange) {
        record(.hostHealthChanged(host: change.host, health(change.availability, now: clock.uptimeNanoseconds)))
    }

    /// Tells the monitors of the promotions and host changes the timer found, and of the
    /// calls it ended.
    func announce(_ fired: Machine.TimerFired) {
        for promotion in fired.promotions {
            record(.promoted(Self.eventCall(promotion.request.prepared, number: promotion.call.number,
                                            callers: Self.ids(of: promotion.callers)),
                             from: promotion.from, to: promotion.to))
        }
        for change in fired.healthChanges { announce(change) }
        for expiry in fired.expired { announce(expiry.followUp) }
    }

    /// Does what follows for a call after an attempt's end, once the callers are told: refreshes
    /// its token, reads the verdict on the attempt, or tells the monitors of its kept outcome.
    func follow(_ followUp: Machine.FollowUp) {
        switch followUp {
        case .none:
            break
        case .kept(let kept):
            record(.outcomeKept(Self.eventCall(kept.request.prepared, number: kept.call.number, callers: []),
                                kept.outcome.map(\.statusCode)))
        case .verdictWanted(let wanted):
            judge(wanted)
        case .retry(_, let refresh):
            if let refresh { refreshToken(refresh) }
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
        if isMonitored {
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
        // Only for its host's probe, whose head opens the host before its body ends.
        var onHead: (@Sendable (ResponseHead) -> Void)?
        if start.isProbe {
            onHead = { [self, id = start.id, request = start.request] head in probeAnswered(id, of: request, head) }
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
            sendsPriorityHeader: configuration.sendsPriorityHeader,
            clock: clock,
            onStart: onStart,
            onProgress: onProgress,
            onHead: onHead,
            onCompletion: { [self, id = start.id, request = start.request] outcome in
                attemptEnded(id, of: request, with: outcome, requested: requested)
            }
        )
    }
}

import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What the scheduler reports to its machine about attempts, and the work it does for them
// outside the lock: a token refresh. The decisions (retry, backoff, refresh, deliver) are the
// machine's: see `SchedulerMachine+Attempts.swift`.
extension RequestScheduler {
    /// An attempt's operation reported its outcome: the cache takes what it keeps, and the
    /// machine hears what the outcome was, read here once (``AttemptReading``). An accepted
    /// answer, or a cancellation, asks no retry policy and is judged at once; a failure is
    /// judged when the machine asks (``judge(_:)``), only if its call still wants a verdict.
    /// `requested` is when it was sent, if the cache may keep its answer.
    func attemptEnded(_ attempt: AttemptID, of request: ScheduledRequest, with outcome: Result<TransportResponse, ServiceError>,
                      requested: Date? = nil) {
        // Read before the cache's answer: a 304 is what the server said, and the cache's merged
        // answer is what the callers get.
        let reading = AttemptReading(outcome, request: request.prepared, submission: request.submission,
                                     failureStatuses: configuration.hostHealth.failureStatuses, date: clock.now)
        var answer = cacheAnswer(to: request.prepared, ofCall: attempt.call.number, outcome, requested: requested)
        // An outage its resource accepts (a 503 it reads) ends the call now, with no retry: the
        // stored answer may stand in for it (`stale-if-error`), as for a failure no retry follows.
        if case .verdict = reading { answer = staleAnswer(to: request.prepared, after: answer) }
        // What the answer came over sets its host's budget: connections, or streams.
        let spoken = (try? outcome.get())?.head.hostProtocol(answering: request.prepared.urlString)
        let now = clock.uptimeNanoseconds
        let end = feed(ending: attempt, announcing: { end in
            if let change = end.healthChange { announce(change) }
            announce(end.followUp)
        }) { $0.attemptEnded(attempt, with: answer, reading, over: spoken, now: now) }
        follow(end.followUp)
    }

    /// An attempt's body went out further: the machine moves its deadline, and its call's
    /// callers are told.
    func attemptProgressed(_ attempt: AttemptID, of request: ScheduledRequest, _ progress: TransferProgress) {
        let now = clock.uptimeNanoseconds
        let handles = feed { machine in machine.attemptProgressed(attempt, to: progress, now: now) }
        for handle in handles { handle.progressed(progress) }
        record(.progressed(Self.eventCall(request.prepared, number: attempt.call.number, callers: Self.ids(of: handles)), progress))
    }

    /// The head of a host's probe's answer arrived: read here, as an attempt's end is, it may
    /// open the host while the body is still coming.
    func probeAnswered(_ attempt: AttemptID, of request: ScheduledRequest, _ head: ResponseHead) {
        let kind = AttemptVerdict.Kind(.success(TransportResponse(data: Data(), head: head)), request: request.prepared,
                                       submission: request.submission,
                                       failureStatuses: configuration.hostHealth.failureStatuses, date: clock.now)
        let now = clock.uptimeNanoseconds
        feed(announcing: { change in if let change { announce(change) } }) { $0.probeAnswered(attempt, kind, now: now) }
    }

    /// The machine asks for the verdict on a failed attempt (one it ended at its deadline
    /// included), of the kind read as it ended, or on the callers whose own patience with an
    /// attempt that runs on ran out: each asked caller's own retry policy (the scheduler's
    /// default where it has none) adds its retry here, outside the lock (a decider may be the
    /// app's), once for that attempt. A timeout is shown to it as the change of the body's
    /// file, if the layer beside the transport saw one (a file cut short leaves the transport
    /// waiting for bytes that never come). A failure that ends callers may be answered from the
    /// cache.
    func judge(_ wanted: Machine.VerdictWanted) {
        var outcome = wanted.outcome
        if case .failure(.timedOut) = outcome, let change = wanted.request.prepared.bodyFileChange { outcome = .failure(change) }
        let callPolicy = wanted.request.submission.retryPolicy ?? configuration.retryPolicy
        let asked = wanted.callers.map { caller in
            // A caller that ended meanwhile has let its submission go: its verdict is moot.
            (caller.id, caller.handle.submission.map { $0.retryPolicy ?? configuration.retryPolicy } ?? callPolicy,
             caller.attemptNumber)
        }
        let verdict = AttemptVerdict(failure: wanted.kind, outcome: outcome, asked: asked, request: wanted.request.prepared)
        let endsCallers = verdict.retry == nil || !verdict.givingUp.isEmpty
        let ended = endsCallers ? staleAnswer(to: wanted.request.prepared, after: outcome) : outcome
        let now = clock.uptimeNanoseconds
        if wanted.attemptRunsOn {
            feed { $0.patienceJudged(wanted.id, asked: wanted.callers.map(\.id), verdict, answer: ended, now: now) }
            return
        }
        let followUp = feed(announcing: announce) {
            $0.verdictReached(wanted.id, verdict, answer: outcome, endingWith: ended, now: now)
        }
        follow(followUp)
    }

    /// Gets a token newer than the one the server rejected, then has the machine send the call
    /// again with its request rebuilt (with the call's `Idempotency-Key`), or fail it.
    func refreshToken(_ refresh: Machine.TokenRefresh) {
        guard let authenticator = refresh.request.submission.authenticator else { return }
        Task { [weak self] in
            do throws(ServiceError) {
                _ = try await authenticator.token(replacing: refresh.rejected, within: refresh.patience)
            } catch {
                self?.tokenRefreshed(refresh.call, rebuilt: .failure(.authenticationFailed(cause: error)))
                return
            }
            self?.tokenRefreshed(refresh.call, rebuilt: Result { () throws(ServiceError) in try refresh.request.rebuilt() })
        }
    }

    private func tokenRefreshed(_ call: CallID, rebuilt: Result<ScheduledRequest, ServiceError>) {
        let now = clock.uptimeNanoseconds
        switch rebuilt {
        case .success(let request): feed { $0.tokenRefreshed(call, rebuilt: request, now: now) }
        case .failure(let error): feed { $0.tokenRefreshFailed(call, with: .failure(error), now: now) }
        }
    }

    /// The error a retried attempt ended with, for the event monitors.
    static func cause(of outcome: Result<TransportResponse, ServiceError>) -> ServiceError {
        switch outcome {
        case .success(let payload):
            .server(ServiceError.ServerResponse(statusCode: payload.statusCode, body: payload.data,
                                        headers: payload.head.headerFields))
        case .failure(let error):
            error
        }
    }
}

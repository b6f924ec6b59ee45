import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What the scheduler reports to its machine about attempts, and the work it does for them
// outside the lock: a token refresh. The decisions (retry, backoff, refresh, deliver) are the
// machine's: see `SchedulerMachine+Attempts.swift`.
extension RequestScheduler {
    /// An attempt's operation reported its outcome: read it here, outside the lock (a retry
    /// policy's decider runs then), and tell the machine.
    /// `requested` is when it was sent, if the cache may keep its answer.
    func attemptEnded(_ start: Machine.AttemptStart, with outcome: Result<TransportResponse, ServiceError>,
                      requested: Date? = nil) {
        // The late failure of an attempt the machine ended (at its deadline) asks no policy:
        // the machine judged that attempt once, and a decider may count what it is asked (a
        // stream's reconnections did, and gave up after one). Only a failure reaches a decider,
        // so an answer costs no second turn of the lock.
        if RetryPolicy.isFailure(outcome), !state.withLock({ $0.machine.isRunning(start.id) }) {
            feed(ending: start.id) { _ in Machine.Actions() }
            return
        }
        let verdict = AttemptVerdict(of: outcome, attemptNumber: start.attemptNumber, request: start.request,
                                     submission: start.submission, defaultPolicy: configuration.retryPolicy,
                                     failureStatuses: configuration.hostHealth.failureStatuses, date: clock.now)
        // The verdict is on what the server did; the callers get what the cache makes of it.
        let answer = cacheAnswer(to: start.request, ofCall: start.id.call.number, outcome, requested: requested, isFinal: verdict.retry == nil)
        let now = clock.uptimeNanoseconds
        feed(ending: start.id) { $0.attemptEnded(start.id, with: answer, verdict: verdict, now: now) }
    }

    /// An attempt's body went out further: the machine moves its deadline, and its call's
    /// callers are told.
    func attemptProgressed(_ start: Machine.AttemptStart, _ progress: TransferProgress) {
        let now = clock.uptimeNanoseconds
        let handles = feed { machine in (machine.attemptProgressed(start.id, to: progress, now: now), Machine.Actions()) }
        for handle in handles { handle.progressed(progress) }
        record(.progressed(Self.eventCall(start.request, number: start.id.call.number, callers: Self.ids(of: handles)), progress))
    }

    /// The machine ended an attempt at its deadline: read that timeout as any attempt's result,
    /// unless the attempt stalled because its body file changed (a file cut short leaves the
    /// transport waiting for bytes that never come).
    func judge(_ expiry: Machine.Expiry) {
        let error = expiry.request.bodyFileChange ?? .timedOut
        let verdict = AttemptVerdict(of: .failure(error), attemptNumber: expiry.attemptNumber, request: expiry.request,
                                     submission: expiry.submission, defaultPolicy: configuration.retryPolicy,
                                     failureStatuses: configuration.hostHealth.failureStatuses, date: clock.now)
        let answer = verdict.retry == nil && expiry.request.cache != nil
            ? cacheAnswer(to: expiry.request, ofCall: expiry.id.call.number, .failure(error), requested: nil, isFinal: true) : nil
        let now = clock.uptimeNanoseconds
        feed { $0.expiryJudged(expiry.id, as: error, verdict, answer: answer, now: now) }
    }

    /// Gets a token newer than the one the server rejected, then has the machine send the call
    /// again with its request rebuilt (with the call's `Idempotency-Key`), or fail it.
    func refreshToken(_ refresh: Machine.TokenRefresh) {
        guard let authenticator = refresh.submission.authenticator else { return }
        Task { [weak self] in
            do throws(ServiceError) {
                _ = try await authenticator.token(replacing: refresh.rejected, within: refresh.patience)
            } catch {
                self?.tokenRefreshed(refresh.call, rebuilt: .failure(.authenticationFailed(cause: error)))
                return
            }
            self?.tokenRefreshed(refresh.call, rebuilt: Result { () throws(ServiceError) in try refresh.rebuiltRequest() })
        }
    }

    private func tokenRefreshed(_ call: CallID, rebuilt: Result<PreparedRequest, ServiceError>) {
        let now = clock.uptimeNanoseconds
        feed { $0.tokenRefreshed(call, rebuilt: rebuilt, now: now) }
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

extension SchedulerMachine.TokenRefresh {
    /// The call's request built again with the new token, carrying the `Idempotency-Key`, the
    /// context fields (``ContextPropagation``) and the adapter's identity it was sent with (a
    /// user switched in meanwhile fails the replay's adapter check instead of taking the call).
    func rebuiltRequest() throws(ServiceError) -> PreparedRequest {
        let names = submission.contextPropagation?.fieldNames ?? []
        let context = HeaderFields(request.headerFields.filter { field in
            names.contains { HeaderFields.isSameName($0, field.name) }
        })
        var rebuilt = try submission.prepare(context: context, identity: request.adaptation?.identity)
        if let key = request.header("idempotency-key") { rebuilt.setValue(key, forHTTPHeaderField: "Idempotency-Key") }
        return rebuilt
    }
}

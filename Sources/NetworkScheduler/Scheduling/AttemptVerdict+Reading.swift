import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Reading an attempt's result beside the transport, where HTTP is known, into the value the
// machine decides by: once, as the attempt ends. Every later step reads that value: the
// verdict, the retry, the host's health, the probe, the dependents.

extension AttemptReading {
    /// `outcome`, the result of an attempt of `submission`'s request `request`, read once: an
    /// answer the resource accepts, or a cancellation, is judged at once; anything else is a
    /// failure of its kind, on which the call's retry policy is asked only if the call still
    /// wants a verdict. `date` is the wall clock, which a `Retry-After` date is counted from;
    /// `failureStatuses`, the statuses the host's health counts as failures.
    init(
        _ outcome: Result<TransportResponse, ServiceError>,
        request: PreparedRequest,
        submission: Submission,
        failureStatuses: Set<Int>,
        date: Date
    ) {
        let kind = AttemptVerdict.Kind(outcome, request: request, submission: submission,
                                       failureStatuses: failureStatuses, date: date)
        switch (kind, outcome) {
        case (.succeeded, _), (_, .failure(.cancelled)): self = .verdict(AttemptVerdict(kind: kind, retry: nil))
        default: self = .failure(kind)
        }
    }
}

extension AttemptVerdict.Kind {
    /// What `outcome` was, by the one rule for success: the status is one the resource
    /// accepts (``Resource/acceptableStatusCodes``, 200..<300 by default). A 304 the cache did
    /// not answer, or a redirect the policy did not follow, is no success to the machine either
    /// (its host's health, its retries, its dependents), as it is none to its caller.
    init(
        _ outcome: Result<TransportResponse, ServiceError>,
        request: PreparedRequest,
        submission: Submission,
        failureStatuses: Set<Int>,
        date: Date
    ) {
        switch outcome {
        case .success(let payload):
            let status = payload.statusCode
            let retryAfter = RetryPolicy.retryAfter(status: status, now: date) { payload.head.value(forHTTPHeaderField: "Retry-After") }
            self = switch status {
            case _ where submission.acceptableStatusCodes.contains(status): .succeeded
            case 401 where submission.authenticator != nil: .unauthorized(rejectedToken: Self.bearerToken(of: request))
            case _ where retryAfter == nil && failureStatuses.contains(status): .serverFailed
            case 429, 503: .throttled(retryAfter: retryAfter)
            default: .rejected
            }
        case .failure(let error):
            self = error == .timedOut ? .timedOut : error.isConnectivityFailure ? .unreachable : .noAnswer
        }
    }

    private static func bearerToken(of request: PreparedRequest) -> String? {
        guard let header = request.header("authorization"), header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}

extension AttemptVerdict {
    /// The verdict on a failed attempt whose result was read as `kind`, for the callers
    /// `asked`: each one's retry policy says whether it tries again after its own attempt
    /// number `attemptNumber` (1 for the first it waited on), and when. The call is tried again
    /// after the longest wait among those that would; those that would not end now. Each
    /// policy is asked once per attempt number, here, outside the scheduler's lock (its decider
    /// may be the app's); `outcome` is what it is shown.
    init(
        failure kind: Kind,
        outcome: Result<TransportResponse, ServiceError>,
        asked: [(id: CallerID, policy: RetryPolicy, attemptNumber: Int)],
        request: PreparedRequest
    ) {
        let isKeyed = request.header("idempotency-key") != nil
        var decided: [(policy: RetryPolicy, attemptNumber: Int, retry: Retry?)] = []
        var retries: [Retry] = []
        var givingUp: [CallerID] = []
        for caller in asked {
            let retry: Retry?
            if let earlier = decided.first(where: { $0.policy == caller.policy && $0.attemptNumber == caller.attemptNumber }) {
                retry = earlier.retry
            } else {
                retry = caller.policy.retry(before: caller.attemptNumber, method: request.method, isKeyed: isKeyed,
                                            after: outcome, retryAfter: kind.retryAfter)
                decided.append((caller.policy, caller.attemptNumber, retry))
            }
            if let retry { retries.append(retry) } else { givingUp.append(caller.id) }
        }
        self.init(kind: kind, retry: .longest(of: retries), givingUp: retries.isEmpty ? [] : givingUp)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Reading an attempt's result beside the transport, where HTTP is known, into the verdict the
// machine decides by.

extension AttemptVerdict {
    /// The verdict on `outcome`, the result of attempt `attemptNumber` (1 for the first) of a
    /// call that sent `request`, by the call's retry policy (`defaultPolicy` unless it has
    /// its own). `date` is the wall clock, which a `Retry-After` date is counted from;
    /// `failureStatuses`, the statuses the host's health counts as failures. A policy's decider
    /// runs here, outside the scheduler's lock.
    init(
        of outcome: Result<TransportResponse, ServiceError>,
        attemptNumber: Int,
        request: PreparedRequest,
        submission: Submission,
        defaultPolicy: RetryPolicy,
        failureStatuses: Set<Int>,
        date: Date
    ) {
        let (kind, retryAfter) = Self.read(outcome, request: request, submission: submission,
                                           failureStatuses: failureStatuses, date: date)
        let policy = submission.retryPolicy ?? defaultPolicy
        let retry = policy.retry(before: attemptNumber, method: request.method, isKeyed: request.header("idempotency-key") != nil,
                                 after: outcome, retryAfter: retryAfter)
        self.init(kind: kind, retry: retry)
    }

    /// What `outcome` was, without asking a retry policy: its kind, and the seconds of its
    /// `Retry-After`, if it gave one.
    static func read(
        _ outcome: Result<TransportResponse, ServiceError>,
        request: PreparedRequest,
        submission: Submission,
        failureStatuses: Set<Int>,
        date: Date
    ) -> (Kind, retryAfter: TimeInterval?) {
        switch outcome {
        case .success(let payload):
            let status = payload.statusCode
            let retryAfter = RetryPolicy.retryAfter(status: status, now: date) { payload.head.value(forHTTPHeaderField: "Retry-After") }
            let kind: Kind = switch status {
            case ..<400: .succeeded
            case 401 where submission.authenticator != nil: .unauthorized(rejectedToken: Self.bearerToken(of: request))
            case _ where retryAfter == nil && failureStatuses.contains(status): .serverFailed
            case 429, 503: .throttled(retryAfter: retryAfter)
            default: .rejected
            }
            return (kind, retryAfter)
        case .failure(let error):
            return (error == .timedOut ? .timedOut : error.isConnectivityFailure ? .unreachable : .noAnswer, nil)
        }
    }

    private static func bearerToken(of request: PreparedRequest) -> String? {
        guard let header = request.header("authorization"), header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}

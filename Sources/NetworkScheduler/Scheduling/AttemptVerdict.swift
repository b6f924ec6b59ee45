import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an attempt's result means, read beside the transport before it enters the machine:
/// the machine decides retries, refreshes and host health from this, and never reads a status,
/// a header or a token.
struct AttemptVerdict: Equatable, Sendable {
    /// What the result was.
    enum Kind: Equatable, Sendable {
        /// The server answered, and not with an error (a status below 400).
        case succeeded
        /// A 401 to a request whose authenticator can get a new token: the token it carried,
        /// which the server rejected.
        case unauthorized(rejectedToken: String?)
        /// A 429 or 503: the server asks to slow down, for the seconds of its `Retry-After`
        /// if it gave one.
        case throttled(retryAfter: TimeInterval?)
        /// An error answer whose status the host's health counts as a failure
        /// (``HostHealth/Policy/failureStatuses``), without a `Retry-After`: the server is up
        /// but failing.
        case serverFailed
        /// Another error answer.
        case rejected
        /// The host could not be reached, or the connection was lost.
        case unreachable
        /// No answer in time.
        case timedOut
        /// No answer, and nothing learnt of the host: cancelled, refused by a policy, too large,
        /// not built.
        case noAnswer
    }

    /// When the call may be tried again.
    enum Retry: Equatable, Sendable {
        /// After exactly this many seconds (a `Retry-After`, or a decider's choice).
        case after(TimeInterval)
        /// After a random share of this many seconds, drawn by the machine (full jitter).
        case backoff(upTo: TimeInterval)

        /// The seconds to wait, with `jitter` (in 0...1) the share of a backoff's ceiling.
        func delay(jitter: Double) -> TimeInterval {
            switch self {
            case .after(let seconds): max(0, seconds)
            case .backoff(let ceiling): ceiling * min(max(jitter, 0), 1)
            }
        }
    }

    let kind: Kind
    /// Nil when the call's retry policy gives up on this result.
    let retry: Retry?

    var isSuccess: Bool { kind == .succeeded }

    /// The token a 401 rejected, if the request carried one and can get a new one.
    var rejectedToken: String? {
        if case .unauthorized(let token) = kind { return token }
        return nil
    }

}

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
        let retryAfter: TimeInterval?
        switch outcome {
        case .success(let payload):
            let status = payload.statusCode
            retryAfter = RetryPolicy.retryAfter(status: status, now: date) { payload.head.value(forHTTPHeaderField: "Retry-After") }
            kind = switch status {
            case ..<400: .succeeded
            case 401 where submission.authenticator != nil: .unauthorized(rejectedToken: Self.bearerToken(of: request))
            case _ where retryAfter == nil && failureStatuses.contains(status): .serverFailed
            case 429, 503: .throttled(retryAfter: retryAfter)
            default: .rejected
            }
        case .failure(let error):
            retryAfter = nil
            kind = error == .timedOut ? .timedOut : error.isConnectivityFailure ? .unreachable : .noAnswer
        }
        let policy = submission.retryPolicy ?? defaultPolicy
        retry = policy.retry(before: attemptNumber, method: request.method, isKeyed: request.header("idempotency-key") != nil,
                             after: outcome, retryAfter: retryAfter)
    }

    private static func bearerToken(of request: PreparedRequest) -> String? {
        guard let header = request.header("authorization"), header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}

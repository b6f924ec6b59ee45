import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When and how often a failed network call is tried again.
///
/// Retries wait with exponential backoff and full jitter (a random delay between zero and
/// `baseDelay × 2^(attempt−1)`, capped at `maxDelay`), or as long as a 429 or 503 response's
/// `Retry-After` says (a `Retry-After` that is neither seconds nor an HTTP date is ignored). Only requests that are safe to send twice are retried: idempotent
/// methods, and requests carrying an `Idempotency-Key`. A cancelled request is never retried,
/// and a call waiting to retry holds no slot of its host's budget.
///
/// ```swift
/// let scheduler = RequestScheduler { $0.retryPolicy = RetryPolicy(maxAttempts: 5) }
/// let upload = Resource<Void>(.put, path: "avatar", body: .data(png, contentType: "image/png")).retrying(.never)
/// ```
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included: 1 means never retry.
    public var maxAttempts: Int
    /// The backoff's first ceiling.
    public var baseDelay: TimeInterval
    /// The longest wait between attempts.
    public var maxDelay: TimeInterval
    /// Statuses worth another try.
    public var retryableStatusCodes: Set<Int>
    /// A `Retry-After` longer than this ends the request with its error instead of waiting.
    public var maxRetryAfter: TimeInterval
    /// Whether to retry POST and PATCH requests that carry no idempotency key. Off by default:
    /// sending such a request twice may do its work twice.
    public var retriesNonIdempotentRequests: Bool

    /// A policy with the given limits.
    ///
    /// - Parameters:
    ///   - maxAttempts: attempts in all, the first included.
    ///   - baseDelay: the backoff's first ceiling, in seconds.
    ///   - maxDelay: the longest wait between attempts.
    ///   - retryableStatusCodes: statuses worth another try.
    ///   - maxRetryAfter: the longest `Retry-After` to wait for.
    ///   - retriesNonIdempotentRequests: whether to retry POST and PATCH without an idempotency key.
    public init(
        maxAttempts: Int = 3,
        baseDelay: TimeInterval = 0.25,
        maxDelay: TimeInterval = 10,
        retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        maxRetryAfter: TimeInterval = 60,
        retriesNonIdempotentRequests: Bool = false
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.retryableStatusCodes = retryableStatusCodes
        self.maxRetryAfter = maxRetryAfter
        self.retriesNonIdempotentRequests = retriesNonIdempotentRequests
    }

    /// Your own decision on each failed attempt (an error, or a status its resource does not accept), asked
    /// before the rules above; nil leaves them alone. See ``deciding(_:)``.
    var decider: Decider?

    /// This policy with your own decision on each failed attempt: retry a status or an error
    /// the rules pass over, give up on one they would retry, or leave it to them. `maxAttempts`
    /// and `maxRetryAfter` still bound it. It runs outside the scheduler's lock, once for each
    /// failed attempt whose call still waits for it (not for a call whose callers all left, nor
    /// again for an attempt that failed after its deadline ended it), after the attempt's
    /// budget slot went to the next request: decide quickly, from its argument.
    ///
    /// ```swift
    /// let policy = RetryPolicy.default.deciding { attempt in
    ///     // This API answers 423 while a record is briefly locked, and 500 only for bugs.
    ///     switch attempt.statusCode {
    ///     case 423: .retry(after: 0.5)
    ///     case 500: .doNotRetry
    ///     default: .usePolicy
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter decide: what to do about each failed attempt; runs outside the scheduler's lock.
    public func deciding(_ decide: @escaping @Sendable (FailedAttempt) -> Decision) -> RetryPolicy {
        var policy = self
        policy.decider = Decider(decide)
        return policy
    }

    /// Three attempts for requests that are safe to repeat: the scheduler's default.
    public static let `default` = RetryPolicy()

    /// One attempt: failures are reported at once.
    public static let never = RetryPolicy(maxAttempts: 1)

    /// When to send attempt `attempt + 1`, or nil to give up.
    ///
    /// - Parameters:
    ///   - method: the request's method.
    ///   - isKeyed: whether the request carries an `Idempotency-Key`.
    ///   - outcome: what attempt `attempt` produced.
    ///   - retryAfter: the seconds a 429's or 503's `Retry-After` asks for, if it has one.
    func retry(
        before attempt: Int,
        method: String,
        isKeyed: Bool,
        after outcome: Result<TransportResponse, ServiceError>,
        retryAfter: TimeInterval?
    ) -> AttemptVerdict.Retry? {
        guard attempt < maxAttempts else { return nil }
        // A cancellation is what the caller asked for, never a failure to try again.
        if case .failure(.cancelled) = outcome { return nil }
        if let decider {
            switch decider.decide(FailedAttempt(attempt: attempt, method: method, outcome: outcome)) {
            case .doNotRetry:
                return nil
            case .retry(let after):
                if let after { return .after(min(max(0, after), maxRetryAfter)) }
                return retryAfter.map { .after(min($0, maxRetryAfter)) } ?? backoff(before: attempt)
            case .usePolicy:
                break
            }
        }
        // A server's answer counts by its status, whether it came as a response (an attempt's)
        // or as the error a caller got (the outbox's tries).
        switch outcome {
        case .success(let payload):
            guard isWorthRetrying(status: payload.statusCode, isKeyed: isKeyed, retryAfter: retryAfter) else { return nil }
        case .failure(let error) where error.serverResponse != nil:
            guard let status = error.statusCode, isWorthRetrying(status: status, isKeyed: isKeyed, retryAfter: retryAfter) else {
                return nil
            }
        case .failure(.timedOut):
            break
        case .failure(let error):
            guard error.isConnectivityFailure else { return nil }
        }
        guard isSafeToRepeat(method: method, isKeyed: isKeyed) else { return nil }
        return retryAfter.map { .after($0) } ?? backoff(before: attempt)
    }

    /// Whether an answer of `status` is worth another try: a retryable status, or a 409 to a
    /// keyed request (its key still in use), unless its `Retry-After` asks for too long.
    private func isWorthRetrying(status: Int, isKeyed: Bool, retryAfter: TimeInterval?) -> Bool {
        // Most answers are not worth another try: decide that first, it is the hot path.
        guard retryableStatusCodes.contains(status) || status == 409 else { return false }
        guard retryableStatusCodes.contains(status) || isKeyed else { return false }
        if let retryAfter, retryAfter > maxRetryAfter { return false }
        return true
    }

    /// The seconds to wait before trying again a request whose caller got `error` after `tries`
    /// tries, or nil when this policy gives up on it: its rules and its decider, as for an
    /// attempt, with a server's answer read as its status and its `Retry-After`. For a retry
    /// above the scheduler's own, such as the outbox's between its tries of a write.
    ///
    /// - Parameters:
    ///   - tries: the tries made, the failed one included.
    ///   - error: what the last try's caller got.
    ///   - method: the request's method.
    ///   - isKeyed: whether the request carries an `Idempotency-Key`.
    ///   - now: the time, to read a `Retry-After` given as a date.
    ///   - jitter: the share (0...1) of a backoff's ceiling to wait.
    package func delay(
        afterTries tries: Int, failedWith error: ServiceError, method: String, isKeyed: Bool, now: Date, jitter: Double
    ) -> TimeInterval? {
        let response = error.serverResponse
        let retryAfter = response.flatMap { response in
            Self.retryAfter(status: response.statusCode, now: now) { response.headers["Retry-After"] }
        }
        return retry(before: tries, method: method, isKeyed: isKeyed, after: .failure(error), retryAfter: retryAfter)?
            .delay(jitter: jitter)
    }

    /// The backoff before attempt `attempt + 1`: full jitter under an exponential ceiling.
    private func backoff(before attempt: Int) -> AttemptVerdict.Retry {
        .backoff(upTo: backoffCeiling(afterTries: attempt))
    }

    /// The longest backoff after `tries` failed tries: `baseDelay × 2^(tries−1)`, at most
    /// `maxDelay`.
    ///
    /// - Parameter tries: the tries made, the failed one included.
    package func backoffCeiling(afterTries tries: Int) -> TimeInterval {
        min(maxDelay, baseDelay * pow(2, Double(max(tries, 1) - 1)))
    }

    func isSafeToRepeat(method: String, isKeyed: Bool) -> Bool {
        HTTPVerb(rawValue: method).isIdempotent || isKeyed
            || retriesNonIdempotentRequests
    }

    /// The seconds a 429's or 503's `Retry-After` asks for (read by `header`, only for those
    /// statuses); nil for another status, or none.
    static func retryAfter(status: Int, now: Date, header: () -> String?) -> TimeInterval? {
        guard status == 429 || status == 503 else { return nil }
        return header().flatMap { retryAfter($0, now: now) }
    }

    /// Seconds from a `Retry-After` value: a number of seconds, or an HTTP-date.
    static func retryAfter(_ value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = TimeInterval(trimmed) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

extension RetryPolicy {
    /// One failed attempt, as a decider of ``deciding(_:)`` sees it.
    public struct FailedAttempt: Sendable {
        /// The number of the attempt that failed: 1 for the first.
        public let attempt: Int
        /// The request's method.
        public let method: String
        /// What the attempt produced: a response with a status its resource does not accept, or an error.
        public let outcome: Result<TransportResponse, ServiceError>

        /// The response's status, if there was a response: the attempt's, or the one in the error
        /// a caller got (``ServiceError/serverResponse``).
        public var statusCode: Int? {
            switch outcome {
            case .success(let response): response.statusCode
            case .failure(let error): error.statusCode
            }
        }
        /// The error, if there was no response.
        public var error: ServiceError? {
            if case .failure(let error) = outcome { return error }
            return nil
        }
    }

    /// What a decider of ``deciding(_:)`` says about a failed attempt.
    public enum Decision: Sendable, Equatable {
        /// Try again: after `after` seconds, or nil for a 429's or 503's `Retry-After`, else the
        /// policy's backoff.
        case retry(after: TimeInterval? = nil)
        /// Give up: the caller gets the attempt's outcome.
        case doNotRetry
        /// Let the policy's rules decide, as if there were no decider.
        case usePolicy
    }

    /// A decider, boxed so that two policies are equal only if they hold the same one.
    final class Decider: Sendable, Equatable {
        let decide: @Sendable (FailedAttempt) -> Decision

        init(_ decide: @escaping @Sendable (FailedAttempt) -> Decision) {
            self.decide = decide
        }

        static func == (lhs: Decider, rhs: Decider) -> Bool {
            lhs === rhs
        }
    }
}

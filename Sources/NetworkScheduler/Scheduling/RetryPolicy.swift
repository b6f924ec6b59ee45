import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When and how often a failed network call is tried again.
///
/// Retries wait with exponential backoff and full jitter (a random delay between zero and
/// `baseDelay × 2^(attempt−1)`, capped at `maxDelay`), or as long as a 429 or 503 response's
/// `Retry-After` says. Only requests that are safe to send twice are retried: idempotent
/// methods, and requests carrying an `Idempotency-Key`. A cancelled request is never retried,
/// and a call waiting to retry holds no slot of its host's budget.
///
/// ```swift
/// let scheduler = RequestScheduler { $0.retryPolicy = RetryPolicy(maxAttempts: 5) }
/// let upload = Resource<Void>(.put, path: "avatar", body: .data(png), retryPolicy: .never)
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

    /// Three attempts for requests that are safe to repeat: the scheduler's default.
    public static let `default` = RetryPolicy()

    /// One attempt: failures are reported at once.
    public static let never = RetryPolicy(maxAttempts: 1)

    /// How long to wait before attempt `attempt + 1`, or nil to give up.
    ///
    /// - Parameters:
    ///   - method: the request's method.
    ///   - isKeyed: whether the request carries an `Idempotency-Key`.
    ///   - outcome: what attempt `attempt` produced.
    ///   - jitter: a random fraction in 0...1, the share of the backoff ceiling to wait; drawn
    ///     only when a backoff is needed.
    func delay(
        before attempt: Int,
        method: String,
        isKeyed: Bool,
        after outcome: Result<TransportResponse, ServiceError>,
        jitter: @autoclosure () -> Double,
        date: Date
    ) -> TimeInterval? {
        guard attempt < maxAttempts else { return nil }
        var retryAfter: TimeInterval?
        switch outcome {
        case .success(let payload):
            let status = payload.response.statusCode
            // Most answers are not worth another try: decide that first, it is the hot path.
            guard retryableStatusCodes.contains(status) || status == 409 else { return nil }
            let keyInUse = status == 409 && isKeyed
            guard retryableStatusCodes.contains(status) || keyInUse else { return nil }
            if status == 429 || status == 503,
               let header = payload.response.value(forHTTPHeaderField: "Retry-After") {
                guard let seconds = Self.retryAfter(header, now: date), seconds <= maxRetryAfter else { return nil }
                retryAfter = seconds
            }
        case .failure(.timedOut):
            break
        case .failure(let error):
            guard error.isConnectivityFailure else { return nil }
        }
        guard isSafeToRepeat(method: method, isKeyed: isKeyed) else { return nil }
        if let retryAfter { return retryAfter }
        return min(maxDelay, baseDelay * pow(2, Double(attempt - 1))) * min(max(jitter(), 0), 1)
    }

    func isSafeToRepeat(method: String, isKeyed: Bool) -> Bool {
        HTTPVerb(rawValue: method).isIdempotent || isKeyed
            || retriesNonIdempotentRequests
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

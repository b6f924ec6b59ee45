// A host's health as the machine keeps it: when it pauses and how fast it may be called. The
// status an app reads (`HostHealth`, with the moment a pause ends as a `Date`) is made from
// these outside the machine, which counts time in its own nanoseconds.

/// Why a host is paused.
public enum HostPauseReason: Sendable, Equatable {
    /// It answered 429 or 503 with `Retry-After`, and the pause is the time it asked for.
    case askedToWait
    /// Attempts in a row failed to reach it (no connection, refused, lost, timed out), or
    /// the probe after a pause did, the last failure being of this kind.
    case unreachable
    /// Attempts in a row got an answer whose status the policy counts as a failure
    /// (``HostHealthPolicy/failureStatuses``), or the probe did, the last failure being of this kind.
    case serverErrors
}

/// When the scheduler pauses a host.
///
/// ```swift
/// configuration.hostHealth = HostHealth.Policy(failuresBeforePause: 3, pauseAfterFailures: 2)
/// ```
public struct HostHealthPolicy: Sendable, Equatable {
    /// Whether a 429 or 503 with `Retry-After` pauses its whole host for that long.
    public var pausesOnRetryAfter: Bool
    /// How many attempts in a row may fail (fail to connect: no connection, refused, lost,
    /// timed out; or get an answer with one of ``failureStatuses``) before the host is
    /// paused; nil (the default) never pauses for failures. While it is paused, waiting
    /// calls wait: give them a deadline (``Resource/within(_:)``) if they should rather fail.
    /// After the pause one probe goes alone: an answer that is not a failure (its head is
    /// enough) closes the circuit, a failure pauses the host again, for twice as long.
    public var failuresBeforePause: Int?
    /// The statuses that count as failures of the host, beside failures to connect, when
    /// they come without a `Retry-After` (with one, the host asked for a pause, which
    /// ``pausesOnRetryAfter`` decides): by default 500, 502, 503 and 504. Any other answer
    /// shows the host is up, and ends a run of failures.
    public var failureStatuses: Set<Int>
    /// The first pause after failures, in seconds; each probe that fails doubles it.
    public var pauseAfterFailures: Double
    /// The longest pause, whatever `Retry-After` asks.
    public var maximumPause: Double
    /// Whether each host's budget adapts to how it copes: it starts at the scheduler's
    /// budget, halves on every 429, 503 or timeout, and grows back by one slot per budget's
    /// worth of answers (additive increase, multiplicative decrease, as TCP's congestion
    /// window), between 1 and the scheduler's budget. Off by default.
    public var adaptsBudget: Bool

    /// A policy; every parameter has the default described on its property.
    ///
    /// - Parameters:
    ///   - pausesOnRetryAfter: whether a 429 or 503 with `Retry-After` pauses the host.
    ///   - failuresBeforePause: failures in a row that pause the host; nil never.
    ///   - pauseAfterFailures: the first pause after such failures, doubled for each failed probe.
    ///   - maximumPause: the longest pause, whatever the server asks.
    ///   - adaptsBudget: whether each host's budget halves on strain and grows back with answers.
    ///   - failureStatuses: the statuses that count as failures, beside failures to connect.
    @inlinable public init(
        pausesOnRetryAfter: Bool = true,
        failuresBeforePause: Int? = nil,
        pauseAfterFailures: Double = 1,
        maximumPause: Double = 60,
        adaptsBudget: Bool = false,
        failureStatuses: Set<Int> = [500, 502, 503, 504]
    ) {
        self.pausesOnRetryAfter = pausesOnRetryAfter
        self.failuresBeforePause = failuresBeforePause.map { max(1, $0) }
        self.failureStatuses = failureStatuses
        self.pauseAfterFailures = max(0, pauseAfterFailures)
        self.maximumPause = max(0, maximumPause)
        self.adaptsBudget = adaptsBudget
    }

    /// Pauses on `Retry-After` only, up to a minute.
    public static let `default` = HostHealthPolicy()

    /// Pauses on `Retry-After`, and after five failures in a row (to connect, or 500, 502, 503
    /// or 504 answers): for a second, then two, four…, up to a minute.
    public static let breaker = HostHealthPolicy(failuresBeforePause: 5)

    /// Never pauses a host.
    public static let never = HostHealthPolicy(pausesOnRetryAfter: false, failuresBeforePause: nil)
}

/// A token bucket: at most `burst` attempts at once after a quiet spell, then
/// `requestsPerSecond` on average. Attempts beyond it wait in their line, in priority order.
public struct HostRateLimit: Sendable, Equatable {
    /// The average rate allowed.
    public var requestsPerSecond: Double
    /// How many attempts may start at once after a quiet spell.
    public var burst: Int

    /// A limit of `requestsPerSecond` on average, with bursts of up to `burst`.
    ///
    /// - Parameters:
    ///   - requestsPerSecond: the rate the bucket refills at.
    ///   - burst: the bucket's size: how many may start at once after a quiet spell.
    @inlinable public init(requestsPerSecond: Double, burst: Int = 1) {
        precondition(requestsPerSecond > 0, "a rate limit must let requests through")
        self.requestsPerSecond = requestsPerSecond
        self.burst = max(1, burst)
    }
}

import Foundation

/// Whether a host takes new attempts: a circuit breaker per host, which the scheduler opens
/// when the host asks for a pause or keeps failing. See ``RequestScheduler/health(of:)``.
public enum HostHealth: Sendable, Equatable {
    /// New attempts start as the budget allows.
    case available
    /// No new attempt starts before this moment: the host answered 429 or 503 with
    /// `Retry-After`, or failed to connect too many times in a row. Attempts already on the
    /// wire go on; waiting calls wait, every one of them, not only the one that was refused.
    case paused(until: Date)
    /// The pause is over, and one attempt (the probe) is let through: when it gets an answer
    /// the host is available again; when it fails, the host is paused again.
    case probing
}

extension HostHealth {
    /// When the scheduler pauses a host.
    ///
    /// ```swift
    /// configuration.hostHealth = HostHealth.Policy(failuresBeforePause: 3, pauseAfterFailures: 2)
    /// ```
    public struct Policy: Sendable, Equatable {
        /// Whether a 429 or 503 with `Retry-After` pauses its whole host for that long.
        public var pausesOnRetryAfter: Bool
        /// How many attempts in a row may fail to connect (no connection, refused, lost, timed
        /// out) before the host is paused; nil (the default) never pauses for failures. While it
        /// is paused, waiting calls wait: give them a deadline (``Resource/within(_:)``) if they
        /// should rather fail.
        public var failuresBeforePause: Int?
        /// The first pause after failures, in seconds; each probe that fails doubles it.
        public var pauseAfterFailures: TimeInterval
        /// The longest pause, whatever `Retry-After` asks.
        public var maximumPause: TimeInterval
        /// Whether each host's budget adapts to how it copes: it starts at the scheduler's
        /// budget, halves on every 429, 503 or timeout, and grows back by one slot per budget's
        /// worth of answers (additive increase, multiplicative decrease, as TCP's congestion
        /// window), between 1 and the scheduler's budget. Off by default.
        public var adaptsBudget: Bool

        /// A policy; every parameter has the default described on its property.
        ///
        /// - Parameters:
        ///   - pausesOnRetryAfter: whether a 429 or 503 with `Retry-After` pauses the host.
        ///   - failuresBeforePause: failures to connect in a row that pause the host; nil never.
        ///   - pauseAfterFailures: the first pause after such failures, doubled for each failed probe.
        ///   - maximumPause: the longest pause, whatever the server asks.
        ///   - adaptsBudget: whether each host's budget halves on strain and grows back with answers.
        public init(
            pausesOnRetryAfter: Bool = true,
            failuresBeforePause: Int? = nil,
            pauseAfterFailures: TimeInterval = 1,
            maximumPause: TimeInterval = 60,
            adaptsBudget: Bool = false
        ) {
            self.pausesOnRetryAfter = pausesOnRetryAfter
            self.failuresBeforePause = failuresBeforePause.map { max(1, $0) }
            self.pauseAfterFailures = max(0, pauseAfterFailures)
            self.maximumPause = max(0, maximumPause)
            self.adaptsBudget = adaptsBudget
        }

        /// Pauses on `Retry-After` only, up to a minute.
        public static let `default` = HostHealth.Policy()

        /// Pauses on `Retry-After`, and after five failures to connect in a row: for a second, then
        /// two, four…, up to a minute.
        public static let breaker = HostHealth.Policy(failuresBeforePause: 5)

        /// Never pauses a host.
        public static let never = HostHealth.Policy(pausesOnRetryAfter: false, failuresBeforePause: nil)
    }
}

extension HostHealth {
    /// A token bucket: at most `burst` attempts at once after a quiet spell, then
    /// `requestsPerSecond` on average. Attempts beyond it wait in their line, in priority order.
    public struct RateLimit: Sendable, Equatable {
        /// The average rate allowed.
        public var requestsPerSecond: Double
        /// How many attempts may start at once after a quiet spell.
        public var burst: Int

        /// A limit of `requestsPerSecond` on average, with bursts of up to `burst`.
        ///
        /// - Parameters:
        ///   - requestsPerSecond: the rate the bucket refills at.
        ///   - burst: the bucket's size: how many may start at once after a quiet spell.
        public init(requestsPerSecond: Double, burst: Int = 1) {
            precondition(requestsPerSecond > 0, "a rate limit must let requests through")
            self.requestsPerSecond = requestsPerSecond
            self.burst = max(1, burst)
        }
    }
}

import Foundation

/// Whether a host takes new attempts: a circuit breaker per host, which the scheduler opens
/// when the host asks for a pause or keeps failing. See ``RequestScheduler/health(of:)``.
public enum HostHealth: Sendable, Equatable {
    /// New attempts start as the budget allows.
    case available
    /// No new attempt starts before this moment, for `reason`: the host answered 429 or 503
    /// with `Retry-After`, or failed too many times in a row. Attempts already on the wire go
    /// on; waiting calls wait, every one of them, not only the one that was refused.
    case paused(until: Date, reason: PauseReason)
    /// The pause is over, and one attempt (the probe) is let through: when its answer's head
    /// arrives the host is available again (its body may still be coming); when it fails, the
    /// host is paused again if the policy pauses for failures
    /// (``HostHealthPolicy/failuresBeforePause``), and otherwise the next attempt (the probe's
    /// own retry, or another call's) is the probe. A probe that ends without an
    /// answer (cancelled, refused by the policy) hands its turn on too.
    case probing
}

extension HostHealth {
    /// Why a host is paused: ``HostPauseReason``.
    public typealias PauseReason = HostPauseReason
    /// When the scheduler pauses a host: ``HostHealthPolicy``.
    public typealias Policy = HostHealthPolicy
    /// A token bucket per host: ``HostRateLimit``.
    public typealias RateLimit = HostRateLimit
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where one caller's time went, and whether its answer was shared.
public struct ResponseMetrics: Sendable, Equatable {
    /// The HTTP status, or nil when no response arrived.
    public var statusCode: Int?
    /// Whether the network call that answered this caller had other callers too: true for
    /// every caller of a shared call, the one whose request went out included, so that each
    /// knows its answer was also another's.
    public var wasShared: Bool
    /// Seconds between entering the scheduler's queue and the call's last attempt getting a
    /// budget slot (zero for a caller that joined a call already on the wire), on the
    /// scheduler's clock (``RequestScheduler/Configuration-swift.struct/clock``).
    public var queuedDuration: TimeInterval
    /// Seconds from the last attempt getting its slot to its outcome, on the scheduler's clock.
    public var networkDuration: TimeInterval
    /// Whether the answer came from the scheduler's cache (``RequestScheduler/Configuration-swift.struct/cache``),
    /// and how.
    public var cacheUse: CacheUse = .none

    /// Metrics with every figure given.
    ///
    /// - Parameters:
    ///   - statusCode: the response's status, if there was one.
    ///   - wasShared: whether other callers shared the call.
    ///   - queuedDuration: seconds waited before the last attempt started.
    ///   - networkDuration: seconds on the wire.
    ///   - cacheUse: whether, and how, the answer came from the cache.
    public init(statusCode: Int? = nil, wasShared: Bool = false, queuedDuration: TimeInterval = 0,
                networkDuration: TimeInterval = 0, cacheUse: CacheUse = .none) {
        self.statusCode = statusCode
        self.wasShared = wasShared
        self.queuedDuration = queuedDuration
        self.networkDuration = networkDuration
        self.cacheUse = cacheUse
    }
}

/// A decoded model with the response it came from.
public struct Reply<Model: Sendable>: Sendable {
    /// The model.
    public let value: Model
    /// The status and headers.
    public let head: ResponseHead
    /// Timing and sharing.
    public let metrics: ResponseMetrics

    /// The status and headers as Foundation's type (see ``ResponseHead/httpResponse``).
    public var httpResponse: HTTPURLResponse { head.httpResponse }
    /// The HTTP status code.
    public var statusCode: Int { head.statusCode }
    /// Whether the network call that answered this caller had other callers too, for every
    /// caller of it, the one whose request went out included (``ResponseMetrics/wasShared``).
    public var wasShared: Bool { metrics.wasShared }
    /// Whether, and how, the answer came from the scheduler's cache.
    public var cacheUse: CacheUse { metrics.cacheUse }
}

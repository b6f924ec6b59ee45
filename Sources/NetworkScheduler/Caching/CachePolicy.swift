/// How a request uses its scheduler's ``ResponseCache``, set per resource with
/// ``Resource/caching(_:)``. Without a cache in the scheduler's configuration, every policy
/// but ``onlyCache`` sends as if there were none.
///
/// ```swift
/// let profile = Resource<User>.get("me")                       // .useCache: HTTP's rules
/// let pullToRefresh = Resource<Feed>.get("feed").caching(.revalidate)
/// let offline = Resource<Feed>.get("feed").caching(.onlyCache)
/// ```
public enum CachePolicy: Sendable, Equatable {
    /// HTTP's rules (RFC 9111): a fresh answer is used without a network call, a stale one is
    /// revalidated (or served while it is, as its `stale-while-revalidate` allows), and what
    /// the server allows is stored. The default.
    case useCache
    /// Asks the server every time, with the stored answer's validators (`If-None-Match`,
    /// `If-Modified-Since`) when there is one, so that an unchanged answer costs a 304.
    case revalidate
    /// Neither reads nor validates: a new answer, which is stored if the server allows.
    case reload
    /// Never reaches the network: the stored answer, fresh or stale, or
    /// ``ServiceError/notCached``.
    case onlyCache
    /// Leaves the cache alone: nothing read, nothing stored.
    case bypass

    var reads: Bool { self == .useCache || self == .onlyCache }
    var stores: Bool { self != .bypass && self != .onlyCache }
}

/// Where a caller's answer came from, in its ``ResponseMetrics/cacheUse``.
public enum CacheUse: Sendable, Equatable {
    /// From the network; the cache did not answer.
    case none
    /// A fresh stored answer: no network call, no budget slot.
    case fresh
    /// A stored answer the server confirmed with a 304 to a conditional request.
    case revalidated
    /// A stale stored answer its `stale-while-revalidate` allowed, handed over at once while a
    /// revalidation runs in the background.
    case staleWhileRevalidating
    /// A stale stored answer, handed over because the network failed and its `stale-if-error`
    /// allowed it.
    case staleAfterError
    /// A stored answer handed over by ``CachePolicy/onlyCache``, fresh or not.
    case onlyCache

    /// Whether the caller got a stored answer without waiting for the server to confirm it.
    public var servedFromCache: Bool {
        switch self {
        case .none, .revalidated: false
        case .fresh, .staleWhileRevalidating, .staleAfterError, .onlyCache: true
        }
    }
}

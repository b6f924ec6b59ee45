import Foundation

/// A private HTTP cache (RFC 9111) inside the scheduler, the same over every transport: set
/// ``RequestScheduler/Configuration-swift.struct/cache`` and GET and HEAD answers are kept as
/// their server allows, used while fresh without a network call or a budget slot, and
/// revalidated with `If-None-Match` / `If-Modified-Since` once stale.
///
/// ```swift
/// let cache = try ResponseCache(memoryCapacity: 8 << 20, directory: cachesFolder, diskCapacity: 64 << 20)
/// let scheduler = RequestScheduler { $0.cache = cache }
/// ```
///
/// An answer is kept per user: every header a request carried is part of its key, but the few
/// that deduplication ignores too (tracing and request IDs), so that no answer reaches another
/// user, whatever tells users apart. `no-store`
/// is never written; an answer from another origin (after a redirect) is not kept; a
/// successful POST, PUT, PATCH or DELETE drops what is stored for its URL. See the
/// <doc:Caching> article.
public final class ResponseCache: Sendable {
    /// The most bytes of answers kept in memory.
    public var memoryCapacity: Int { state.withLock { $0.memory.capacity } }

    private struct State {
        var memory: MemoryCacheStore
        /// Keys whose background revalidation is on its way, so that one serves every caller.
        var revalidating: Set<CacheKey> = []
    }

    private let state: Locked<State>
    private let disk: DiskCacheStore?

    /// A cache in memory only.
    ///
    /// - Parameter memoryCapacity: the most bytes of answers it keeps; an answer larger than
    ///   an eighth of it is not kept.
    public init(memoryCapacity: Int = 8 << 20) {
        state = Locked(State(memory: MemoryCacheStore(capacity: memoryCapacity)))
        disk = nil
    }

    /// A cache in memory and in `directory`, which keeps its answers across launches.
    ///
    /// - Parameters:
    ///   - memoryCapacity: the most bytes of answers kept in memory.
    ///   - directory: the folder of its files, made if it is not there; one store serves it in
    ///     a process, with the capacity of the first cache opened on it.
    ///   - diskCapacity: the most bytes of files it keeps there.
    /// - Throws: ``ServiceError/cannotWriteFile(reason:)`` if the folder cannot be made.
    public init(memoryCapacity: Int = 8 << 20, directory: URL, diskCapacity: Int = 64 << 20) throws(ServiceError) {
        state = Locked(State(memory: MemoryCacheStore(capacity: memoryCapacity)))
        disk = try DiskCacheStore.at(directory, capacity: diskCapacity)
    }

    /// Drops every stored answer.
    public func removeAll() {
        state.withLock { $0.memory.removeAll() }
        disk?.removeAll()
    }

    /// Drops every stored answer for `url`, for any method and user.
    ///
    /// - Parameter url: the URL whose answers go.
    public func removeAll(for url: URL) {
        invalidate(url: CacheKey.withoutFragment(url.absoluteString))
    }

    /// Waits until what is being written to disk is written: for tests.
    func flush() { disk?.flush() }

    // MARK: - Storage

    /// The answer stored for `key`: from memory, or from disk (then kept in memory too).
    func stored(_ key: CacheKey) -> CachedResponse? {
        if let response = state.withLock({ $0.memory.response(for: key) }) { return response }
        guard let response = disk?.response(for: key) else { return nil }
        state.withLock { $0.memory.store(response) }
        return response
    }

    func store(_ response: CachedResponse) {
        state.withLock { $0.memory.store(response) }
        disk?.store(response)
    }

    /// Drops every answer for `url` (as a ``CacheKey`` holds it), for any method and user.
    func invalidate(url: String) {
        state.withLock { $0.memory.removeAll(for: url) }
        disk?.removeAll(for: url)
    }

    func remove(_ key: CacheKey) {
        state.withLock { $0.memory.remove(key) }
        disk?.remove(key)
    }

    /// Claims `key`'s background revalidation: true for the first caller, until it ends.
    func claimRevalidation(of key: CacheKey) -> Bool {
        state.withLock { $0.revalidating.insert(key).inserted }
    }

    func revalidationEnded(_ key: CacheKey) {
        _ = state.withLock { $0.revalidating.remove(key) }
    }
}

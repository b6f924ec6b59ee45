/// The answers a cache keeps in memory, bounded by bytes: past its capacity, those used least
/// recently go first. A value, kept behind its cache's lock.
struct MemoryCacheStore: Sendable {
    private struct Slot {
        var response: CachedResponse
        /// When it was last stored or read, in the store's own count of uses.
        var lastUse: UInt64
    }

    let capacity: Int
    private var slots: [CacheKey: Slot] = [:]
    /// Each URL's keys, for invalidation, which drops every method's and user's answer.
    private var keysByURL: [String: Set<CacheKey>] = [:]
    private var uses: UInt64 = 0
    private(set) var bytes = 0

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var count: Int { slots.count }

    /// The answer stored for `key`, now the most recently used.
    mutating func response(for key: CacheKey) -> CachedResponse? {
        // One lookup: hashing a key (its URL) is most of a hit's cost here.
        guard let index = slots.index(forKey: key) else { return nil }
        uses += 1
        slots.values[index].lastUse = uses
        return slots.values[index].response
    }

    /// Stores `response` in place of any for its key, then drops the least recently used until
    /// the store fits. One larger than an eighth of the capacity is not kept at all, so that
    /// one large answer cannot empty the store.
    mutating func store(_ response: CachedResponse) {
        remove(response.key)
        guard response.cost <= capacity / 8 else { return }
        uses += 1
        slots[response.key] = Slot(response: response, lastUse: uses)
        keysByURL[response.key.url, default: []].insert(response.key)
        bytes += response.cost
        guard bytes > capacity else { return }
        // Down to nine tenths, so that the sort is paid once per many stores.
        for (key, _) in slots.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard bytes > capacity / 10 * 9 else { break }
            remove(key)
        }
    }

    mutating func remove(_ key: CacheKey) {
        guard let slot = slots.removeValue(forKey: key) else { return }
        bytes -= slot.response.cost
        keysByURL[key.url]?.remove(key)
        if keysByURL[key.url]?.isEmpty == true { keysByURL[key.url] = nil }
    }

    /// Drops every answer for `url`, whatever its method or user.
    mutating func removeAll(for url: String) {
        for key in keysByURL[url] ?? [] { remove(key) }
    }

    mutating func removeAll() {
        slots = [:]
        keysByURL = [:]
        bytes = 0
    }
}

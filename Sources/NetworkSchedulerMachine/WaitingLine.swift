/// The network calls waiting for a budget slot on one host: highest priority first, first in
/// first out within a priority.
///
/// Entries are not taken out of the middle when a call leaves or moves to another priority:
/// the call simply stops matching its old entry's ticket, and a stale entry is dropped when it
/// comes up (the machine says which entries are live). A call that moves keeps its arrival, so
/// one that drops back to its old priority takes its old place there, not the back of the
/// line. The line compacts itself once stale entries outnumber the live ones: a host kept busy
/// while thousands of callers leave keeps no memory for them.
@usableFromInline struct WaitingLine: Sendable {
    @usableFromInline struct Entry: Sendable {
        @usableFromInline let call: CallID
        /// Which time the call entered a line: an entry whose ticket is not the call's current
        /// one is stale.
        @usableFromInline let ticket: Int
        /// When the call first entered the line for this attempt: its place within a priority.
        @usableFromInline let arrival: Int

        @inlinable init(call: CallID, ticket: Int, arrival: Int) {
            self.call = call
            self.ticket = ticket
            self.arrival = arrival
        }
    }

    /// Whether the call of an entry still waits under it.
    @usableFromInline typealias IsLive = (Entry) -> Bool

    /// One priority's entries, as a binary min-heap by arrival: a new call arrives last, so
    /// appending one costs a comparison; a call that moves back in keeps its old place.
    @usableFromInline struct Bucket: Sendable {
        @usableFromInline var heap: [Entry] = []

        @inlinable mutating func insert(_ entry: Entry) {
            heap.append(entry)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child].arrival < heap[parent].arrival else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        @inlinable mutating func popFirst() -> Entry? {
            guard !heap.isEmpty else { return nil }
            heap.swapAt(0, heap.count - 1)
            let first = heap.removeLast()
            siftDown(from: 0)
            if heap.isEmpty { clear() }
            return first
        }

        /// Keeps the live entries only, in heap order again.
        @inlinable mutating func compact(keeping isLive: IsLive) {
            heap.removeAll { !isLive($0) }
            for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
        }

        @inlinable mutating func siftDown(from start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { return }
                let right = left + 1
                let child = right < heap.count && heap[right].arrival < heap[left].arrival ? right : left
                guard heap[child].arrival < heap[parent].arrival else { return }
                heap.swapAt(child, parent)
                parent = child
            }
        }

        /// Drops every entry. Keeps the storage of a small bucket, which a line that empties
        /// and fills again with each request would otherwise allocate every time, but not the
        /// storage a burst grew.
        @inlinable mutating func clear() {
            heap.removeAll(keepingCapacity: heap.capacity <= 1_024)
        }

        @inlinable init() {}
    }

    @usableFromInline var buckets = [Bucket](repeating: Bucket(), count: RequestPriority.allCases.count)
    /// Entries in every bucket, live and stale.
    @usableFromInline var entryCount = 0

    /// Whether no entry, live or stale, is left.
    @inlinable var isEmpty: Bool { entryCount == 0 }

    @inlinable mutating func append(_ entry: Entry, priority: RequestPriority) {
        buckets[priority.rawValue].insert(entry)
        entryCount += 1
    }

    /// Removes the first entry of priority `minimum` or above, by priority then arrival, live
    /// or stale: the machine skips the stale ones.
    @inlinable mutating func popFirst(from minimum: RequestPriority) -> Entry? {
        for priority in buckets.indices.reversed() where priority >= minimum.rawValue {
            if let entry = buckets[priority].popFirst() {
                entryCount -= 1
                return entry
            }
        }
        return nil
    }

    /// The highest priority a live entry has, dropping the stale entries ahead of it (as
    /// ``popFirst(from:)`` would when they come up); nil when no entry is live.
    @inlinable mutating func highestLivePriority(isLive: IsLive) -> RequestPriority? {
        for priority in buckets.indices.reversed() {
            while let first = buckets[priority].heap.first {
                if isLive(first) { return RequestPriority(rawValue: priority) }
                _ = buckets[priority].popFirst()
                entryCount -= 1
            }
        }
        return nil
    }

    /// The live entry that arrived last among those of the lowest priority that has one, with
    /// that priority: the one to shed when the line is full. It walks the entries of that
    /// priority (and of any below whose entries are all stale).
    @inlinable func newest(isLive: IsLive) -> (Entry, RequestPriority)? {
        for (index, bucket) in buckets.enumerated() {
            var newest: Entry?
            for entry in bucket.heap where entry.arrival > (newest?.arrival ?? .min) && isLive(entry) {
                newest = entry
            }
            if let newest { return (newest, RequestPriority(rawValue: index)!) }
        }
        return nil
    }

    /// Whether stale entries outnumber the `live` ones (and a few dozen more): compacting then
    /// walks each entry once for every entry that went stale, so leaving costs constant time on
    /// average, and stale entries never hold more than the live ones.
    @inlinable func isMostlyStale(live: Int) -> Bool {
        entryCount > 2 * live + 64
    }

    /// Drops the stale entries.
    @inlinable mutating func compact(keeping isLive: IsLive) {
        entryCount = 0
        for index in buckets.indices where !buckets[index].heap.isEmpty {
            buckets[index].compact(keeping: isLive)
            entryCount += buckets[index].heap.count
        }
    }

    /// Forgets every entry: for when the calls waiting have all left, so that their stale
    /// entries do not outlive them.
    @inlinable mutating func removeAll() {
        for index in buckets.indices where !buckets[index].heap.isEmpty {
            buckets[index].clear()
        }
        entryCount = 0
    }

    @inlinable init() {}
}

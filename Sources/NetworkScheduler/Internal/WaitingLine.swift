/// The network calls waiting for a budget slot on one host: highest priority first, first in
/// first out within a priority.
///
/// Entries are never taken out of the middle. A call that leaves, or moves to another priority,
/// simply stops matching its old entry's ticket, and a stale entry is dropped when it comes up;
/// so joining, leaving and reprioritising all cost constant time, whatever the line's length.
struct WaitingLine {
    struct Entry {
        let call: SchedulerState.Call
        let ticket: Int

        /// Whether the call still waits under this entry: it has callers, and has not moved on
        /// (started, or lined up again at another priority) since the entry was made.
        var isLive: Bool {
            guard call.isLive, case .waiting(ticket, _) = call.attempt else { return false }
            return true
        }
    }

    /// One priority's entries, oldest first; `head` is where the oldest unread one is. A read
    /// slot is emptied at once: it would otherwise keep its call alive until the slots before
    /// `head` are dropped, thousands of calls later, and then release them all at once, each
    /// a cache miss, under the scheduler's lock.
    private struct Bucket {
        var entries: [Entry?] = []
        var head = 0

        mutating func popFirst() -> Entry? {
            guard head < entries.count else { return nil }
            let entry = entries[head].take()
            head += 1
            if head == entries.count {
                clear()
            } else if head >= 4_096, head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
            return entry
        }

        /// Drops every entry. Keeps the storage of a small bucket, which a line that empties
        /// and fills again with each request would otherwise allocate every time, but not the
        /// storage a burst grew.
        mutating func clear() {
            entries.removeAll(keepingCapacity: entries.capacity <= 1_024)
            head = 0
        }
    }

    private var buckets = [Bucket](repeating: Bucket(), count: RequestPriority.allCases.count)

    /// Whether no entry, live or stale, is left.
    var isEmpty: Bool { buckets.allSatisfy { $0.head == $0.entries.count } }

    mutating func append(_ entry: Entry, priority: RequestPriority) {
        buckets[priority.rawValue].entries.append(entry)
    }

    /// Removes the first live entry of priority `minimum` or above, by priority then age, and
    /// returns its call; the stale entries before it are dropped.
    mutating func popFirst(from minimum: RequestPriority) -> SchedulerState.Call? {
        for priority in buckets.indices.reversed() where priority >= minimum.rawValue {
            while let entry = buckets[priority].popFirst() {
                if entry.isLive { return entry.call }
            }
        }
        return nil
    }

    /// Forgets every entry: for when the calls waiting have all left, so that their stale
    /// entries do not outlive them.
    mutating func removeAll() {
        for index in buckets.indices where !buckets[index].entries.isEmpty {
            buckets[index].clear()
        }
    }
}

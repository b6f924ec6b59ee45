import Foundation
import NetworkScheduler

// What an outbox holds in memory: its writes, each lane's line, and the writes each event may
// have made ready, so that no event looks at every write (10,000 waiting made each enqueue
// walk them all).
extension Outbox {
    struct Write {
        var entry: OutboxEntry
        var outcome: OutboxOutcome?
        var isTold = false
        var isSending = false
        var failures = 0
        /// The scheduler clock's uptime before which it is not tried again.
        var retryAt: UInt64?
    }

    /// What makes two writes the same: their kind and their payload's bytes (its JSON in
    /// canonical order, ``CanonicalJSON``, so equal payloads make equal bytes).
    struct Content: Hashable {
        let kind: String
        let payload: Data
    }

    struct Kind {
        let lane: String?
        let send: @Sendable (OutboxEntry) throws(ServiceError) -> Resource<Data>
        let tell: @Sendable (OutboxEntry, OutboxOutcome) -> Void
    }

    /// A lane's writes waiting for their outcome, first first; entries of writes that have one
    /// (or are gone) are passed over as the head moves.
    struct LaneLine {
        private var ids: [UUID] = []
        private var head = 0

        mutating func append(_ id: UUID) { ids.append(id) }

        /// The first write still waiting for its outcome.
        mutating func first(in writes: [UUID: Write]) -> UUID? {
            while head < ids.count, writes[ids[head]]?.outcome != nil || writes[ids[head]] == nil { head += 1 }
            if head > 64, head * 2 > ids.count {
                ids.removeFirst(head)
                head = 0
            }
            return head < ids.count ? ids[head] : nil
        }
    }

    struct State {
        var writes: [UUID: Write] = [:]
        /// The writes in the order they were enqueued; those gone are passed over, and swept
        /// once they are half of it.
        var order: [UUID] = []
        var gone = 0
        var lanes: [String: LaneLine] = [:]
        /// Writes an event may have made ready to send: looked at by the next pump.
        var ready: [UUID] = []
        /// Writes with an outcome not yet told, in the order the outcomes came.
        var untold: [UUID] = []
        var kinds: [String: Kind] = [:]
        var isClosed = false
        /// Writes told since the journal was last compacted.
        var toldSinceCompaction = 0
        /// Why the last compaction failed, if it did.
        var compactionFailure: ServiceError?
        /// The share of a backoff each wait between tries takes (full jitter, as the
        /// scheduler's): writes that failed together are not all tried again together.
        var jitter = SplitMix64(seed: .random(in: .min ... .max))
        /// The writes still waiting for their outcome, by what they send: an identical write
        /// enqueued meanwhile (a double tap) is this one, if nothing came after it in its lane.
        var pendingByContent: [Content: UUID] = [:]
        /// The write last enqueued in each lane (a kind without one: of that kind), by
        /// ``laneKey(of:)``: the only one an identical write may merge with.
        var lastEnqueued: [String: UUID] = [:]
        /// What the retry timer is armed for, if anything.
        var retryTimerAt: UInt64?
        /// Who watches its writes (``changes()``).
        var watchers: [UUID: AsyncStream<[OutboxWriteState]>.Continuation] = [:]

        /// Each write held, where it is, in the order they were enqueued.
        var snapshot: [OutboxWriteState] {
            order.compactMap { id in
                guard let write = writes[id] else { return nil }
                switch write.outcome {
                case .rejected?: return OutboxWriteState(entry: write.entry, phase: .deadLetter(write.outcome!))
                case .accepted?: return nil
                case nil: return OutboxWriteState(entry: write.entry, phase: write.isSending ? .sending : .waiting)
                }
            }
        }

        /// The writes held, in the order they were enqueued.
        var held: [Write] { order.compactMap { writes[$0] } }

        /// A new write, ready if it heads its lane.
        mutating func add(_ entry: OutboxEntry) {
            writes[entry.id] = Write(entry: entry)
            order.append(entry.id)
            pendingByContent[Content(kind: entry.kind, payload: entry.payload)] = entry.id
            lastEnqueued[Self.laneKey(of: entry)] = entry.id
            guard let lane = entry.lane else { return ready.append(entry.id) }
            lanes[lane, default: LaneLine()].append(entry.id)
            if lanes[lane]?.first(in: writes) == entry.id { ready.append(entry.id) }
        }

        /// A write got its outcome: it waits to be told, and the next of its lane is ready.
        mutating func settle(_ id: UUID, with outcome: OutboxOutcome) {
            guard let write = writes[id] else { return }
            forgetContent(of: write.entry)
            writes[id]?.outcome = outcome
            writes[id]?.isSending = false
            untold.append(id)
            readyNext(after: writes[id]?.entry.lane)
        }

        /// A write is gone: told and accepted, or dropped.
        mutating func remove(_ id: UUID) {
            guard let write = writes.removeValue(forKey: id) else { return }
            forgetContent(of: write.entry)
            gone += 1
            if gone * 2 > order.count {
                order.removeAll { writes[$0] == nil }
                gone = 0
            }
            if write.outcome == nil { readyNext(after: write.entry.lane) }
        }

        /// The pending write that a new write of `entry`'s kind and payload is: one that sends
        /// the same, still waiting for its outcome, and the last enqueued in its lane, since
        /// merging past a later write would reorder the lane (away, online, away must end away).
        func pendingWrite(identicalTo entry: OutboxEntry) -> UUID? {
            guard let identical = pendingByContent[Content(kind: entry.kind, payload: entry.payload)],
                  lastEnqueued[Self.laneKey(of: entry)] == identical else { return nil }
            return identical
        }

        /// The lane `entry` is ordered in, for merging: its lane, or its kind when it has none.
        private static func laneKey(of entry: OutboxEntry) -> String {
            entry.lane.map { "lane:" + $0 } ?? "kind:" + entry.kind
        }

        private mutating func forgetContent(of entry: OutboxEntry) {
            let content = Content(kind: entry.kind, payload: entry.payload)
            if pendingByContent[content] == entry.id { pendingByContent[content] = nil }
        }

        /// Writes whose wait is over are ready; returns when the next wait ends, if one does.
        mutating func retriesDue(at now: UInt64) -> UInt64? {
            var next: UInt64?
            for (id, write) in writes where write.outcome == nil && !write.isSending {
                guard let retryAt = write.retryAt else { continue }
                if retryAt <= now {
                    ready.append(id)
                } else {
                    next = min(next ?? .max, retryAt)
                }
            }
            return next
        }

        private mutating func readyNext(after lane: String?) {
            if let lane, let next = lanes[lane]?.first(in: writes) { ready.append(next) }
        }

        /// Takes the writes ready to send now: due, of a registered kind, heading their lane.
        /// The others are made ready again by what they wait for (a timer, a registration).
        mutating func takeDue(at now: UInt64) -> [(OutboxEntry, Kind)] {
            guard !isClosed else { return [] }
            let candidates = ready
            ready = []
            var due: [(OutboxEntry, Kind)] = []
            for id in candidates {
                guard let write = writes[id], write.outcome == nil, !write.isSending,
                      write.retryAt.map({ $0 <= now }) ?? true, let kind = kinds[write.entry.kind] else { continue }
                if let lane = write.entry.lane, lanes[lane]?.first(in: writes) != id { continue }
                writes[id]?.isSending = true
                due.append((write.entry, kind))
            }
            return due
        }

        /// Takes the outcomes to tell now, marking them told; those of kinds not registered
        /// wait for their registration.
        mutating func takeUntold() -> [(OutboxEntry, OutboxOutcome, Kind)] {
            var taken: [(OutboxEntry, OutboxOutcome, Kind)] = []
            var waiting: [UUID] = []
            for id in untold {
                guard let write = writes[id], !write.isTold, let outcome = write.outcome else { continue }
                guard let kind = kinds[write.entry.kind] else {
                    waiting.append(id)
                    continue
                }
                writes[id]?.isTold = true
                taken.append((write.entry, outcome, kind))
            }
            untold = waiting
            return taken
        }

        /// A kind was registered: its writes heading their lanes are ready, its outcomes told.
        mutating func registered(_ name: String) {
            for id in order {
                guard let write = writes[id], write.entry.kind == name, write.outcome == nil else { continue }
                if let lane = write.entry.lane, lanes[lane]?.first(in: writes) != id { continue }
                ready.append(id)
            }
        }
    }
}

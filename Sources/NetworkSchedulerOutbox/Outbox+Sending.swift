import Foundation
import NetworkScheduler

// Sending an outbox's writes, reading their outcomes, and its journal's history.
extension Outbox {
    /// Sends the writes an event made ready: due, of a registered kind, heading their lane.
    func pump() {
        let now = clock.uptimeNanoseconds
        let due = state.withLock { $0.takeDue(at: now) }
        for (entry, kind) in due { send(entry, kind) }
        if !due.isEmpty { publish() }
    }

    private func send(_ entry: OutboxEntry, _ kind: Kind) {
        let resource: Resource<Data>
        do throws(ServiceError) {
            var built = try kind.send(entry)
            // The same key on every attempt, in every process: the server applies it once.
            built.headers["Idempotency-Key"] = entry.key
            built.sendsIdempotencyKey = false
            resource = built
        } catch {
            // A request that cannot be built is final: no try would build it.
            return settle(entry, with: .rejected(status: nil, reason: Self.reason(error)))
        }
        // Weakly: a released outbox leaves its write pending, sent again by the next one.
        Task { [weak self, client] in
            do throws(ServiceError) {
                let reply = try await client.reply(for: resource)
                self?.ended(entry, method: resource.method.rawValue, with: .success((reply.statusCode, reply.value)))
            } catch {
                self?.ended(entry, method: resource.method.rawValue, with: .failure(error))
            }
        }
    }

    /// A try of `entry` ended: its outcome is kept and told, or it is tried again later.
    private func ended(_ entry: OutboxEntry, method: String, with result: Result<(status: Int, body: Data), ServiceError>) {
        let outcome: OutboxOutcome
        switch result {
        case .success(let answer):
            outcome = .accepted(status: answer.status, body: answer.body)
        case .failure(let error):
            let (tries, jitter) = nextTry(of: entry)
            let delay: TimeInterval? = if case .cancelled = error {
                // Not an answer (the client was torn down mid-try): tried again after a backoff.
                configuration.retryPolicy.backoffCeiling(afterTries: tries) * jitter
            } else {
                configuration.retryPolicy.delay(afterTries: tries, failedWith: error, method: method, isKeyed: true,
                                                now: clock.now, jitter: jitter)
            }
            if let delay, clock.now.timeIntervalSince(entry.enqueuedAt) <= configuration.maximumAge {
                return tryAgainLater(entry, after: delay)
            }
            outcome = .rejected(status: error.statusCode, reason: delay == nil
                ? Self.reason(error) : "still failing past its maximum age: \(error)")
        }
        settle(entry, with: outcome)
    }

    /// Keeps `entry`'s final outcome, then tells it.
    private func settle(_ entry: OutboxEntry, with outcome: OutboxOutcome) {
        // Kept before it is told: a crash between the two tells it at the next launch.
        do {
            // In memory as in the journal, before a compaction could come between the two.
            try journal.append(try Self.record(.finished(id: entry.id, outcome: outcome))) {
                state.withLock { $0.settle(entry.id, with: outcome) }
            }
        } catch {
            // The journal could not keep the outcome (a full disk): the write is tried again.
            let (tries, jitter) = nextTry(of: entry)
            return tryAgainLater(entry, after: configuration.retryPolicy.backoffCeiling(afterTries: tries) * jitter)
        }
        tellOutcomes()
        pump()
    }

    /// The number of `entry`'s try that just failed, and a share (0...1) of a backoff to wait.
    private func nextTry(of entry: OutboxEntry) -> (tries: Int, jitter: Double) {
        state.withLock { state in
            ((state.writes[entry.id]?.failures ?? 0) + 1, Double.random(in: 0...1, using: &state.jitter))
        }
    }

    /// Waits `delay`, on the scheduler's clock, before `entry` is tried again: the outbox's one
    /// timer is armed for the first wait to end.
    private func tryAgainLater(_ entry: OutboxEntry, after delay: TimeInterval) {
        let now = clock.uptimeNanoseconds
        let arm = state.withLock { state -> UInt64? in
            guard var write = state.writes[entry.id] else { return nil }
            write.failures += 1
            // At most a year: a policy's limits are the app's, and may be infinite.
            let retryAt = now + UInt64(min(max(0, delay), 365 * 86_400) * 1_000_000_000)
            write.isSending = false
            write.retryAt = retryAt
            state.writes[entry.id] = write
            guard retryAt < state.retryTimerAt ?? .max else { return nil }
            state.retryTimerAt = retryAt
            return retryAt
        }
        publish()
        if let arm { retryTimer.arm(at: arm) }
    }

    /// The retry timer fired: the writes whose wait is over go, and it is armed for the next.
    func retryWaitEnded() {
        let now = clock.uptimeNanoseconds
        let next = state.withLock { state in
            let next = state.retriesDue(at: now)
            state.retryTimerAt = next
            return next
        }
        if let next { retryTimer.arm(at: next) }
        pump()
    }

    /// Why a write the retry policy gave up on was rejected: the server's message, or what
    /// kept the request from being made.
    static func reason(_ error: ServiceError) -> String {
        switch error {
        case .invalidRequest(let reason): reason
        case let error where error.serverResponse != nil:
            error.serverResponse?.message ?? "the server answered \(error.statusCode ?? 0)"
        default: "\(error)"
        }
    }

    /// Tells each outcome not yet told whose kind is registered, once, and notes it.
    func tellOutcomes() {
        let untold = state.withLock { $0.takeUntold() }
        for (entry, outcome, kind) in untold {
            kind.tell(entry, outcome)
            // An accepted write is gone once told; a rejected one stays, a dead letter. Noted at
            // once, without waiting for the disk: a process killed from now on does not tell it
            // again (only a machine losing power may).
            try? toldLog.append(try Self.record(.told(id: entry.id)), synchronize: false) {
                if case .accepted = outcome { removing(entry.id) }
            }
        }
        if !untold.isEmpty {
            compactIfMostlyHistory()
            publish()
        }
    }

    // MARK: - The journal

    /// Rewrites the journal once it holds many times more records than its writes need.
    private func compactIfMostlyHistory() {
        let (live, told) = state.withLock { state in
            state.toldSinceCompaction += 1
            return (state.writes.count, state.toldSinceCompaction)
        }
        guard told > 1_000, told > 4 * live else { return }
        try? compact()
    }

    static func record(_ event: OutboxEvent) throws(ServiceError) -> Data {
        do {
            return try JSONEncoder().encode(event)
        } catch {
            throw .invalidRequest(reason: "an outbox event could not be encoded: \(error)")
        }
    }

    static func payload<Payload: Decodable>(of entry: OutboxEntry, as type: Payload.Type) throws(ServiceError) -> Payload {
        do {
            return try JSONDecoder().decode(type, from: entry.payload)
        } catch {
            throw .invalidRequest(reason: "the payload of a \"\(entry.kind)\" write could not be read: \(error)")
        }
    }

    /// The writes a journal's events leave: those not told, and the dead letters not dropped.
    static func replay(_ events: [OutboxEvent]) -> State {
        var state = State()
        for event in events {
            switch event {
            case .enqueued(let entry):
                if state.writes[entry.id] == nil { state.add(entry) }
            case let .finished(id, outcome):
                state.settle(id, with: outcome)
            case .told(let id):
                state.writes[id]?.isTold = true
                if case .accepted? = state.writes[id]?.outcome { state.remove(id) }
            case .dropped(let id):
                state.remove(id)
            case let .resent(id, entry):
                state.remove(id)
                if state.writes[entry.id] == nil { state.add(entry) }
            }
        }
        return state
    }

    /// The records that keep `state`'s writes as they are.
    static func records(of state: State) throws(ServiceError) -> [Data] {
        var records: [Data] = []
        for write in state.held {
            records.append(try record(.enqueued(write.entry)))
            if let outcome = write.outcome { records.append(try record(.finished(id: write.entry.id, outcome: outcome))) }
            if write.isTold { records.append(try record(.told(id: write.entry.id))) }
        }
        return records
    }
}

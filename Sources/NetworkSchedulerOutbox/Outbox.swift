import Foundation
import NetworkScheduler

/// Writes that survive a crash or a relaunch and reach the server once, by their key.
///
/// `enqueue` returns once the write is on disk, in a journal in a folder the app chooses. The
/// outbox then sends it through its client's scheduler, with one `Idempotency-Key` for every
/// attempt in every process, one write of a lane at a time in the order they were enqueued,
/// again after each failure worth another try, until the server gives a final answer; then it
/// tells the app, once, through the handler registered for the write's kind. A process that
/// opens the same folder sends what an earlier one left, and tells what it could not.
///
/// ```swift
/// let outbox = try Outbox(folder: appSupport.appendingPathComponent("outbox"), client: api)
/// outbox.register(.newPost) { draft, outcome in … }
/// try outbox.enqueue(PostDraft(text: "Hello"), as: .newPost)
/// ```
///
/// What is final: a 2xx (`accepted`); what its ``Configuration/retryPolicy`` gives up on
/// (`rejected`: a dead letter, kept until ``drop(_:)`` or ``resend(_:)``): by default a 4xx
/// other than 408, 409, 425 and 429, or a request that cannot be built. What is tried again,
/// after the policy's backoff or the server's `Retry-After`: everything else (no connection, a
/// timeout, a 5xx, 408, 425, 429, a 409 for a key still in use), until
/// ``Configuration/maximumAge``.
public final class Outbox: Sendable {
    /// Its limits and delays.
    public struct Configuration: Sendable {
        /// The most writes it holds, told or not; `enqueue` fails past it.
        public var maximumWrites = 10_000
        /// How long a write is tried before it becomes a dead letter.
        public var maximumAge: TimeInterval = 7 * 24 * 3_600
        /// Which failed tries are tried again, and after how long: the scheduler's own kind of
        /// policy, asked after the scheduler's retries within a try gave up
        /// (``Outbox/defaultRetryPolicy`` by default).
        public var retryPolicy: RetryPolicy = Outbox.defaultRetryPolicy

        /// The defaults.
        public init() {}
    }

    let journal: OutboxJournal
    /// Which outcomes were told: apart from the journal, so that noting one never waits behind
    /// an enqueue's `fsync` (a process killed meanwhile would tell it again).
    let toldLog: OutboxJournal
    let client: APIClient
    let configuration: Configuration
    let state = Locked(State())
    /// Its client's scheduler's clock: the writes' dates, and the waits between their tries.
    let clock: any SchedulerClock
    /// Ends the wait of the write to be tried again first.
    let retryTimer: any SchedulerTimer
    /// How many damaged stretches its journal held when it was opened: records torn by a crash,
    /// corrupted on disk, or written by a version it cannot read, skipped and reported here,
    /// never read as a write.
    public let damagedRecords: Int

    /// If the journal could not be rewritten without its history when the outbox opened, or at
    /// its last compaction since, why (a full disk, say): the outbox works on from the journal
    /// as it was, which keeps every write and every told mark, and tries again later.
    public var compactionFailure: ServiceError? { state.withLock { $0.compactionFailure } }

    /// The outbox whose journal is in `folder` (made if needed), sending through `client`. It
    /// sends nothing until the kinds of its writes are registered.
    ///
    /// - Parameters:
    ///   - folder: where its journal is kept; one outbox per folder and process.
    ///   - client: the client that sends its writes.
    ///   - configuration: its limits and delays.
    public convenience init(folder: URL, client: APIClient, configuration: Configuration = Configuration()) throws(ServiceError) {
        try self.init(folder: folder, client: client, configuration: configuration, synchronizer: .disk)
    }

    /// An outbox whose journals make their records durable with `synchronizer`: a test's, that fails.
    init(folder: URL, client: APIClient, configuration: Configuration, synchronizer: OutboxJournal.Synchronizer) throws(ServiceError) {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .cannotWriteFile(reason: "\(folder.lastPathComponent): \((error as NSError).localizedDescription)")
        }
        journal = try OutboxJournal(file: folder.appendingPathComponent("outbox.journal"), synchronizer: synchronizer)
        toldLog = try OutboxJournal(file: folder.appendingPathComponent("outbox.told"), synchronizer: synchronizer)
        self.client = client
        self.configuration = configuration
        clock = client.scheduler.clock
        retryTimer = clock.makeTimer()
        let (contents, told) = (try journal.read(), try toldLog.read())
        let records = contents.records + told.records
        // A whole record that is no event of this version (written by a newer one) is damage too.
        let events = records.compactMap { try? JSONDecoder().decode(OutboxEvent.self, from: $0) }
        damagedRecords = contents.damaged.count + told.damaged.count + records.count - events.count
        let replayed = Self.replay(events)
        state.withLock { $0 = replayed }
        retryTimer.start { [weak self] in self?.retryWaitEnded() }
        // A journal that cannot be rewritten now (a full disk) is read as it is: the outbox
        // opens, and says why (``compactionFailure``).
        try? compact()
    }

    deinit {
        retryTimer.stop()
    }

    /// Rewrites the journal with the records its writes need (the told ones noted in it), then
    /// empties the told log. A compaction that fails leaves both as they were.
    func compact() throws(ServiceError) {
        do {
            // Under the told log's lock: a tell noted meanwhile waits until the told log was
            // emptied, so it is not lost with it; its write is marked told in memory before it
            // is told, so the new journal has it already.
            try toldLog.compact { () throws(ServiceError) in
                try journal.compact { () throws(ServiceError) in
                    try state.withLock { state in
                        state.toldSinceCompaction = 0
                        return Result { () throws(ServiceError) in try Self.records(of: state) }
                    }.get()
                }
                return []
            }
            state.withLock { $0.compactionFailure = nil }
        } catch {
            state.withLock { $0.compactionFailure = error }
            throw error
        }
    }

    // MARK: - The app's side

    /// Registers a kind: its writes, pending from now or from an earlier process, are sent, and
    /// their outcomes told to `tell` (once each, on any thread).
    ///
    /// - Parameters:
    ///   - kind: the kind.
    ///   - tell: told each write's payload and outcome.
    public func register<Payload>(_ kind: OutboxKind<Payload>,
                                  tell: @escaping @Sendable (Payload, OutboxOutcome) -> Void) {
        let registered = Kind(lane: kind.lane, send: { entry throws(ServiceError) in
            kind.request(try Self.payload(of: entry, as: Payload.self))
        }, tell: { entry, outcome in
            if let payload = try? Self.payload(of: entry, as: Payload.self) { tell(payload, outcome) }
        })
        state.withLock { state in
            state.kinds[kind.name] = registered
            state.registered(kind.name)
        }
        tellOutcomes()
        pump()
    }

    /// Keeps `payload` as a write of `kind`: on disk before it returns, then sent. If the write
    /// last enqueued in its lane (for a kind without a lane, the last of that kind) is of the
    /// same kind with an equal payload and still waits for its outcome, it is that write: its
    /// ID is returned, and nothing is enqueued, so a double tap sends once. A write enqueued in
    /// between keeps them apart (away, online, away sends all three and ends away), and a kind
    /// whose ``OutboxKind/merging`` is ``OutboxKind/Merging/never`` never merges (a counter's
    /// "+1"). When it throws, nothing was kept, and nothing will be sent.
    ///
    /// - Parameters:
    ///   - payload: what the write sends.
    ///   - kind: its kind.
    /// - Returns: the write's ID.
    @discardableResult
    public func enqueue<Payload>(_ payload: Payload, as kind: OutboxKind<Payload>) throws(ServiceError) -> UUID {
        let body: Data
        do {
            body = try CanonicalJSON.encode(payload, with: .sortingKeys)
        } catch {
            throw .invalidRequest(reason: "the payload could not be encoded: \(error)")
        }
        let entry = OutboxEntry(id: UUID(), kind: kind.name, lane: kind.lane, key: UUID().uuidString, enqueuedAt: clock.now,
                                payload: body)
        let maximum = configuration.maximumWrites
        var pending: UUID?
        // Checked under the journal's lock, which every enqueue takes: two at once cannot both
        // take the last place, nor both be the first of two identical writes.
        let isNew = try journal.append(try Self.record(.enqueued(entry)), admitting: { () throws(ServiceError) -> Bool in
            let (count, identical) = state.withLock { state in
                (state.writes.count, kind.merging == .never ? nil : state.pendingWrite(identicalTo: entry))
            }
            pending = identical
            guard identical == nil else { return false }
            guard count < maximum else { throw .invalidRequest(reason: "the outbox holds its \(maximum) writes: it is full") }
            return true
        }, then: { adding(entry) })
        guard isNew else { return pending ?? entry.id }
        pump()
        publish()
        return entry.id
    }

    /// Its writes and where each is, now and again after each change, the latest first when a
    /// reader falls behind. Ends when the outbox closes.
    ///
    /// ```swift
    /// for await writes in outbox.changes() { badge.count = writes.count }
    /// ```
    public func changes() -> AsyncStream<[OutboxWriteState]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [OutboxWriteState].self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        let (snapshot, isClosed) = state.withLock { state in
            if !state.isClosed { state.watchers[id] = continuation }
            return (state.snapshot, state.isClosed)
        }
        continuation.yield(snapshot)
        if isClosed { continuation.finish() }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.watchers.removeValue(forKey: id) } }
        return stream
    }

    /// Tells the watchers where the writes are now.
    func publish() {
        let (snapshot, watchers) = state.withLock { state in
            state.watchers.isEmpty ? ([], []) : (state.snapshot, Array(state.watchers.values))
        }
        for watcher in watchers { watcher.yield(snapshot) }
    }

    private func adding(_ entry: OutboxEntry) {
        state.withLock { $0.add(entry) }
    }

    /// The writes not yet told, in the order they were enqueued.
    public var pending: [OutboxEntry] {
        state.withLock { state in state.held.filter { !$0.isTold }.map(\.entry) }
    }

    /// The writes the server refused for good, or that failed past their maximum age.
    public var deadLetters: [(entry: OutboxEntry, outcome: OutboxOutcome)] {
        state.withLock { state in
            state.held.compactMap { write in
                guard case .rejected? = write.outcome else { return nil }
                return (write.entry, write.outcome!)
            }
        }
    }

    /// Stops sending, and closes its journal, so that another outbox may open its folder. What
    /// is pending stays in the journal for the next one; an outcome that comes after is not
    /// kept, and its write is sent again, with its key, by the next outbox.
    public func close() {
        journal.close()
        toldLog.close()
        let watchers = state.withLock { state in
            state.isClosed = true
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.finish() }
    }

    /// Forgets a dead letter.
    ///
    /// - Parameter id: the write's ID.
    public func drop(_ id: UUID) throws(ServiceError) {
        try journal.append(try Self.record(.dropped(id: id))) { removing(id) }
        publish()
    }

    func removing(_ id: UUID) {
        state.withLock { $0.remove(id) }
    }

    /// Sends a dead letter again, as a new write with a new key; nil if `id` is no dead letter.
    ///
    /// - Parameter id: the write's ID.
    /// - Returns: the new write's ID.
    @discardableResult
    public func resend(_ id: UUID) throws(ServiceError) -> UUID? {
        let dead = state.withLock { state -> OutboxEntry? in
            guard let write = state.writes[id], case .rejected? = write.outcome else { return nil }
            return write.entry
        }
        guard let old = dead else { return nil }
        let entry = OutboxEntry(id: UUID(), kind: old.kind, lane: old.lane, key: UUID().uuidString, enqueuedAt: clock.now,
                                payload: old.payload)
        try journal.append(try Self.record(.resent(id: id, as: entry))) {
            state.withLock { state in
                state.remove(id)
                state.add(entry)
            }
        }
        pump()
        publish()
        return entry.id
    }
}

extension Outbox {
    /// An outbox's retries by default: every try of a write carries its key, so every failure
    /// that is not the server's final word is tried again, without a limit of tries (its
    /// ``Configuration/maximumAge`` ends it), after a backoff from 1 s doubling to 5 minutes
    /// (with full jitter), or after the server's `Retry-After` up to a day.
    ///
    /// Worth another try: no connection, a lost one, a timeout, 408, 409 (the key still in
    /// use), 425, 429 and any 5xx, and any other failure of the transport (a malformed answer,
    /// say). Final: another 4xx, a 3xx that was not followed, a request that cannot be built.
    public static let defaultRetryPolicy = RetryPolicy(
        maxAttempts: .max, baseDelay: 1, maxDelay: 300,
        retryableStatusCodes: Set([408, 425, 429]).union(500...599), maxRetryAfter: 24 * 3_600,
        retriesNonIdempotentRequests: true
    ).deciding { attempt in
        // The policy's rules retry only connectivity failures and timeouts of the transport's;
        // a write retries what else went wrong on the way too, but not a request that cannot be
        // built, nor a server's answer, whose status the rules read.
        switch attempt.error {
        case .invalidRequest?, nil: .usePolicy
        case let error? where error.serverResponse != nil: .usePolicy
        case _?: .retry()
        }
    }
}

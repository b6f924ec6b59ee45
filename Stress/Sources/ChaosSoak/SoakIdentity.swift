import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerOutbox

/// The soak's checks of identity: a client whose adapter adds the current user's token while
/// the app switches users mid-run (no caller may get another user's answer, from a shared call
/// or from the cache), and an outbox whose lanes take toggles and counter taps (each lane's
/// last write must be the server's final state; every tap counts once).
final class SoakIdentity: Sendable {
    static let users = ["alice", "bob", "carol"]
    static let presences = ["away", "online"]
    static let lanes = ["status", "mood"]

    private let random: SeededRandom
    /// The current user, and how many switches there have been: the adapter states both, as an
    /// app states its sign-in session, so that a switch away and back during one adaptation is
    /// seen (the user's name alone would be the same before and after).
    private let currentUser = Mutex((name: "alice", generation: 0))
    /// Callers who got an answer meant for another user: must be 0.
    let crossedUsers = Mutex(0)
    /// Callers whose user switched while they were sent, so that who they asked as is unknown.
    let ambiguous = Mutex(0)
    let client: APIClient
    private let outbox: Outbox?
    private let intents = Mutex((presence: [String: String](), taps: 0, lastIDs: [String: UUID](), seen: Set<UUID>()))
    /// Enqueues that returned an older write of their lane than its last (a merge past a later
    /// write), or an earlier tap's: must be 0.
    let mergesPastALaterWrite = Mutex(0)
    /// Callers of `whoami` that got an answer, and writes enqueued, for the report.
    let answered = Mutex(0)
    let enqueued = Mutex(0)

    init(random: SeededRandom, scheduler: RequestScheduler, folder: URL) {
        self.random = random
        var client = APIClient(baseURL: URL(string: "https://a.test/v1")!, scheduler: scheduler, timeout: 0.5)
        let currentUser = currentUser
        client.requestAdapter = RequestAdapter(identity: { currentUser.withLock { "\($0.name)#\($0.generation)" } }) { request in
            var request = request
            request.setValue("Bearer \(currentUser.withLock { $0.name })", forHTTPHeaderField: "Authorization")
            return request
        }
        self.client = client
        var configuration = Outbox.Configuration()
        configuration.retryPolicy.baseDelay = 0.01
        let writer = APIClient(baseURL: URL(string: "https://a.test/v1")!, scheduler: scheduler, timeout: 0.5)
        outbox = try? Outbox(folder: folder.appendingPathComponent("outbox"), client: writer, configuration: configuration)
        for lane in Self.lanes { outbox?.register(.presence(in: lane)) { _, _ in } }
        outbox?.register(.tap) { _, _ in }
    }

    /// Switches the app's user, as a sign-out and sign-in does.
    func switchUser() {
        let user = random.pick(Self.users)
        currentUser.withLock { $0 = (user, $0.generation + 1) }
    }

    /// One caller of `whoami` as the current user; `end` is told its outcome's kind. Now and
    /// then it switches the user first, while other callers are being sent on other threads.
    func askWhoAmI(priority: RequestPriority, group: RequestGroup?, end: @escaping @Sendable (String) -> Void) {
        if random.chance(5) { switchUser() }
        let before = currentUser.withLock { $0 }
        // Cached for a second (on a scheduler with a cache): a hit must be the same user's too.
        let resource = Resource<Whoami>(path: "whoami")
        let handle = client.send(resource, priority: priority, group: group) { [self] result in
            switch result {
            case .success(let whoami):
                answered.withLock { $0 += 1 }
                if whoami.user != before.name { crossedUsers.withLock { $0 += 1 } }
                end("success")
            case .failure(let error):
                end(errorKind(error))
            }
        }
        // Who it was built as is `before` only if no switch came between.
        if currentUser.withLock({ $0.generation }) != before.generation {
            ambiguous.withLock { $0 += 1 }
            handle.cancel()
        }
    }

    /// A burst of writes to the outbox: presence toggles (away, online, away…) in two lanes, and
    /// taps of a counter that never merge. Each enqueue's ID must be a new write's or, for an
    /// identical toggle, its lane's last one.
    func write() {
        guard let outbox else { return }
        for _ in 0..<random.below(8) {
            let isToggle = random.chance(75)
            let lane = isToggle ? random.pick(Self.lanes) : "taps"
            let presence = random.pick(Self.presences)
            let id = isToggle
                ? try? outbox.enqueue(PresenceWrite(lane: lane, presence: presence, tags: Set(Self.presences.shuffled())),
                                      as: .presence(in: lane))
                : try? outbox.enqueue(Tap(counter: "likes"), as: .tap)
            guard let id else { continue }
            enqueued.withLock { $0 += 1 }
            intents.withLock { intents in
                let isNew = intents.seen.insert(id).inserted
                if !isNew, intents.lastIDs[lane] != id || !isToggle { mergesPastALaterWrite.withLock { $0 += 1 } }
                intents.lastIDs[lane] = id
                if isToggle { intents.presence[lane] = presence } else { intents.taps += 1 }
            }
        }
    }

    /// Waits (bounded) for the outbox to send every write, then compares what the app meant
    /// with what the server holds; nil when they agree.
    func outboxDisagreement(with server: ChaosServerState, timeout: TimeInterval) async -> String? {
        guard let outbox else { return "the outbox could not be opened" }
        let deadline = Date().addingTimeInterval(timeout)
        while !outbox.pending.isEmpty, Date() < deadline { try? await Task.sleep(nanoseconds: 20_000_000) }
        let pending = outbox.pending.count
        outbox.close()
        let (meant, taps) = intents.withLock { ($0.presence, $0.taps) }
        let (held, counted) = server.snapshot
        guard pending == 0 else { return "\(pending) writes still pending" }
        guard held == meant else { return "the server holds \(held), the app meant \(meant)" }
        guard counted == taps else { return "the server counted \(counted) taps of \(taps)" }
        let merges = mergesPastALaterWrite.withLock { $0 }
        guard merges == 0 else { return "\(merges) enqueues merged past a later write of their lane" }
        return nil
    }
}

struct Whoami: Decodable, Sendable {
    let user: String
}

/// A toggle of one lane's presence; its tags are a set, built anew each time.
struct PresenceWrite: Codable, Sendable {
    let lane: String
    let presence: String
    let tags: Set<String>
}

struct Tap: Codable, Sendable {
    let counter: String
}

extension OutboxKind where Payload == PresenceWrite {
    /// A lane's presence toggles: away, online, away must end away.
    static func presence(in lane: String) -> Self {
        OutboxKind("presence \(lane)", lane: lane) { write in
            Resource<Data>(.put, path: "presence/\(write.lane)", body: .json(write), decoding: .data)
        }
    }
}

extension OutboxKind where Payload == Tap {
    static let tap = OutboxKind("tap", lane: "taps", merging: .never) { tap in
        Resource<Data>(.post, path: "taps", body: .json(tap), decoding: .data)
    }
}

/// What the chaos transport's server keeps of the outbox's writes: each lane's presence and the
/// taps it counted, each write once by its `Idempotency-Key` (a late answer to an attempt the
/// scheduler gave up on must not apply an old write again).
final class ChaosServerState: Sendable {
    private let state = Mutex((presence: [String: String](), taps: 0, applied: Set<String>()))

    /// Applies a write the server answers with a 2xx.
    func apply(_ request: URLRequest) {
        guard let key = request.value(forHTTPHeaderField: "Idempotency-Key"), let path = request.url?.path else { return }
        let write = request.httpBody.flatMap { try? JSONDecoder().decode(PresenceWrite.self, from: $0) }
        state.withLock { state in
            guard state.applied.insert(key).inserted else { return }
            if path.hasSuffix("/taps") {
                state.taps += 1
            } else if let write {
                state.presence[write.lane] = write.presence
            }
        }
    }

    var snapshot: (presence: [String: String], taps: Int) {
        state.withLock { ($0.presence, $0.taps) }
    }
}

import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerTimeline

struct Item: Decodable, Sendable {
    let id: Int
    let name: String
}

/// A draft of several fields: its keys come out of Foundation's encoder in a varying order, and
/// its tags, a set built anew for each caller, in its storage's.
struct Draft: Codable, Sendable {
    let title: String
    let body: String
    let tags: Set<String>
    let authorID: Int
    let isPublic: Bool
}

/// The schedulers, clients, screens and app operations a soak's callers use, and what stirs
/// them while the faults are on.
final class SoakWorld: Sendable {
    let ledger = Ledger()
    let transport: ChaosTransport
    /// The first scheduler's schedule, so that the path a monitor takes (each caller noting
    /// its call) runs under the chaos too, and a timeline is drawn from a chaotic run. Its
    /// first 20,000 events only (a few MB), so that the soak's memory still tells a leak.
    let recorder = ScheduleRecorder(limit: 20_000)
    /// What every scheduler's monitors heard of each caller.
    let stories = CallerStories()
    private let random: SeededRandom
    private let schedulers: [RequestScheduler]
    /// Each scheduler's plain client, then the one whose token an authenticator refreshes.
    private let clients: [APIClient]
    private let authenticator: TokenAuthenticator
    private let refreshes: RefreshBehaviour
    private let network = FlappingNetwork()
    /// Screens: each caller may join one; the chaos cancels them and lets them go.
    private let groups: Mutex<[RequestGroup]>
    /// Recent callers, for `after:` (across schedulers) and live priority changes.
    private let recent = Mutex<[RequestHandle]>([])
    /// The app's queue of request operations, which stay executing (holding one of its 16
    /// places) until their callers end.
    private let appQueue = OperationQueue()
    /// The app's queue of its own work, which requests wait for: not the requests' queue, whose
    /// places requests waiting for this work could all hold (a deadlock of the app's).
    private let workQueue = OperationQueue()
    private let downloads: URL
    private let signIns = Mutex(0)
    /// A client whose adapter switches users mid-run, and an outbox of toggles.
    let identity: SoakIdentity
    /// Callers with options of their own, downloads of a changing file, transports shut down.
    let terms: SoakTerms
    /// A scheduler over a transport of its own, which the chaos shuts down and replaces.
    private let shortLived: Mutex<(transport: ChaosTransport, scheduler: RequestScheduler, client: APIClient)>
    /// Schedulers whose transport was shut down, checked for idleness a few batches later.
    private let retired = Mutex<[RequestScheduler]>([])

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
        transport = ChaosTransport(random: random)
        refreshes = RefreshBehaviour(random: random)
        let refreshes = refreshes
        authenticator = TokenAuthenticator(token: "t0", timeout: 0.3) { _ in try await refreshes.refresh() }
        downloads = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        appQueue.maxConcurrentOperationCount = 16

        var configurations: [RequestScheduler.Configuration] = []
        for index in 0..<3 {
            var configuration = RequestScheduler.Configuration(transport: transport)
            configuration.callbackQueue = DispatchQueue(label: "soak.callbacks.\(index)", attributes: .concurrent)
            configuration.keptOutcomeWindow = 0.2
            // A host that answers over HTTP/2 widens from 4 connections to 12 streams, few
            // enough that its line still fills, and narrows back when it answers over HTTP/1.1.
            configuration.multiplexedHostBudget = 12
            configuration.eventMonitors = [stories]
            configurations.append(configuration)
        }
        // Default health (pauses on Retry-After only, the policy that once stranded a host), with
        // short pauses; and the cache.
        configurations[0].hostHealth = HostHealth.Policy(maximumPause: 0.2)
        configurations[0].cache = ResponseCache(memoryCapacity: 1 << 20)
        configurations[0].eventMonitors.append(recorder)
        // A breaker and an adaptive budget; a rate limit; a network that comes and goes.
        configurations[1].hostHealth = HostHealth.Policy(failuresBeforePause: 3, pauseAfterFailures: 0.05, maximumPause: 0.2,
                                                         adaptsBudget: true)
        configurations[1].rateLimits = ["b.test": HostHealth.RateLimit(requestsPerSecond: 2_000, burst: 20)]
        configurations[1].connectivityMonitor = network
        // Default health again; bounded lines, aging, a cache on the token's client.
        configurations[2].hostHealth = HostHealth.Policy(maximumPause: 0.2)
        configurations[2].maximumWaitingPerHost = 400
        configurations[2].maximumWait = [.background: 0.5, .low: 0.3]
        schedulers = configurations.map { RequestScheduler(configuration: $0) }

        var clients: [APIClient] = []
        for scheduler in schedulers {
            clients.append(APIClient(baseURL: URL(string: "https://a.test/v1")!, scheduler: scheduler, timeout: 0.5,
                                     sendsIdempotencyKeys: true))
        }
        clients.append(APIClient(baseURL: URL(string: "https://b.test/v1")!, scheduler: schedulers[2], timeout: 0.5,
                                 authenticator: authenticator))
        clients.append(APIClient(baseURL: URL(string: "https://b.test/v1")!, scheduler: schedulers[1], timeout: 0.5))
        // Context fields on every caller of the first scheduler's client, read as each is sent.
        clients[0].contextPropagation = CallerTrace()
        self.clients = clients
        groups = Mutex((0..<6).map { _ in RequestGroup() })
        // On the scheduler with a cache: a cached answer must be its user's too.
        identity = SoakIdentity(random: random, scheduler: schedulers[0], folder: downloads)
        terms = SoakTerms(random: random)
        shortLived = Mutex(Self.makeShortLived(random: random, stories: stories))
    }

    /// A scheduler and client over a chaotic transport of their own.
    private static func makeShortLived(random: SeededRandom, stories: CallerStories)
        -> (transport: ChaosTransport, scheduler: RequestScheduler, client: APIClient) {
        let transport = ChaosTransport(random: random)
        var configuration = RequestScheduler.Configuration(transport: transport, eventMonitors: [stories])
        configuration.callbackQueue = nil
        configuration.hostHealth = HostHealth.Policy(maximumPause: 0.2)
        let scheduler = RequestScheduler(configuration: configuration)
        return (transport, scheduler, APIClient(baseURL: URL(string: "https://d.test/v1")!, scheduler: scheduler, timeout: 0.5))
    }

    func tearDown() {
        try? FileManager.default.removeItem(at: downloads)
        // The handles kept for `after:` hold their completions, which hold this world.
        recent.withLock { $0.removeAll() }
    }

    // MARK: - Callers

    /// One caller, through one of the entry points, chosen at random.
    func launchCaller(isFromACompletion: Bool = false) {
        let number = ledger.begin()
        let client = random.chance(6) ? shortLived.withLock { $0.client } : random.pick(clients)
        let group = random.chance(40) ? groups.withLock { [random] in random.pick($0) } : nil
        let priority = random.pick(RequestPriority.allCases)
        let after = dependencies()
        switch random.below(100) {
        case 0..<34:
            let handle = client.send(resource(for: number), priority: priority, group: group, after: after) { [self] result in
                if !isFromACompletion, random.chance(8) { launchCaller(isFromACompletion: true) }
                ledger.end(number, outcomeKind(result))
            }
            remember(handle)
        case 34..<50:
            let task = Task { [self] in
                do throws(ServiceError) {
                    _ = try await client.value(for: resource(for: number), priority: priority, group: group, after: after)
                    ledger.end(number, "success")
                } catch {
                    ledger.end(number, errorKind(error))
                }
            }
            if random.chance(10) { DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(random.below(20))) { task.cancel() } }
        case 50..<60:
            Task { [self] in
                do throws(ServiceError) {
                    let reply = try await client.reply(for: resource(for: number), priority: priority, group: group, after: after)
                    ledger.end(number, reply.wasShared ? "success (shared)" : "success")
                } catch {
                    ledger.end(number, errorKind(error))
                }
            }
        case 60..<66:
            identity.askWhoAmI(priority: priority, group: group) { [ledger] kind in ledger.end(number, kind) }
        case 66..<72:
            let operation = client.operation(for: resource(for: number), priority: priority, group: group, after: after) { [ledger] result in
                ledger.end(number, outcomeKind(result))
            }
            // It may wait for an operation of the app's in its queue, and be cancelled meanwhile
            // (which crashed corelibs' queue until the request's operation guarded against it).
            if random.chance(20) { operation.addDependency(appOperation(mayBeCancelled: false)) }
            appQueue.addOperation(operation)
            if random.chance(10) { DispatchQueue.global().async { operation.cancel() } }
        case 72..<78:
            let destination = downloads.appendingPathComponent("\(number).bin")
            client.send(.download("export", to: destination, maximumSize: 1 << 20), priority: .low, group: group, after: after) { [ledger, terms] result in
                if case .success = result { terms.checkSaved(destination) }
                try? FileManager.default.removeItem(at: destination)
                try? FileManager.default.removeItem(at: destination.appendingPathExtension("partial"))
                ledger.end(number, outcomeKind(result))
            }
        case 78..<84:
            terms.launchCallerWithOptions(number: number, client: client, ledger: ledger)
        default:
            let stream = client.stream(.events("feed/live", timeout: 0.5, reconnectionDelay: 0.01, maximumReconnections: 2),
                                       priority: priority, group: group, after: after)
            let readsAll = random.chance(70)
            Task { [ledger] in
                var kind = "success"
                do throws(ServiceError) {
                    for try await _ in stream where !readsAll { break }
                } catch {
                    kind = errorKind(error)
                }
                // Left unread, the stream is cancelled when released.
                ledger.end(number, readsAll ? kind : "left")
            }
        }
    }

    /// What caller `number` asks for: users (shared by many), a cached profile, posts of
    /// drafts (deduplicated, POSTs included), uploads, with deadlines and lanes now and then.
    private func resource(for number: Int) -> Resource<Item> {
        var resource: Resource<Item>
        switch random.below(10) {
        case 0..<4: resource = Resource(path: "users/\(random.below(8))")
        case 4..<6: resource = Resource(path: "profile")
        case 6..<8:
            var tags = Set<String>(minimumCapacity: random.below(16))
            for tag in ["a", "b", "c", "d", "e"].shuffled() { tags.insert(tag) }
            let draft = Draft(title: "draft \(random.below(4))", body: "soak", tags: tags, authorID: 7, isPublic: true)
            resource = Resource(.post, path: "posts", body: .json(draft))
        case 8: resource = Resource(.put, path: "uploads/\(random.below(4))", body: .data(Data(repeating: 1, count: 32 * 1_024)))
        default: resource = Resource(.patch, path: "settings", body: .json(["theme": "dark"])).withIdempotencyKey()
        }
        if random.chance(10) { resource = resource.within(Double(random.below(400)) / 1_000) }
        if random.chance(5) { resource = resource.inLane("lane \(random.below(2))", onFailure: random.chance(50) ? .runTheRest : .cancelTheRest) }
        return resource
    }

    /// Some callers wait for others, of any scheduler, or for an operation of the app's.
    private func dependencies() -> [any RequestDependency] {
        switch random.below(100) {
        case 0..<10: return recent.withLock { [random] in $0.isEmpty ? [] : [random.pick($0)] }
        case 10..<14: return [appOperation()]
        default: return []
        }
    }

    /// An operation of the app's, in its queue: it finishes soon, or is cancelled (but not one
    /// another depends on by `addDependency`, which crashes corelibs' queue: see PlatformNotes).
    private func appOperation(mayBeCancelled: Bool = true) -> Operation {
        let operation = BlockOperation {}
        if mayBeCancelled, random.chance(15) { operation.cancel() }
        workQueue.addOperation(operation)
        return operation
    }

    private func remember(_ handle: RequestHandle) {
        recent.withLock { [random] recent in
            if recent.count < 64 { recent.append(handle) } else { recent[random.below(64)] = handle }
        }
    }

    // MARK: - Chaos

    /// Between batches: screens cancelled or let go on other threads, live priority changes,
    /// suspended screens, the network flapping, the user signing in again.
    func stirChaos() {
        for _ in 0..<3 {
            let slot = random.below(6)
            switch random.below(4) {
            case 0:
                let group = groups.withLock { $0[slot] }
                DispatchQueue.global().async { group.cancelAll() }
            case 1:
                // Let go: its deinit cancels its callers, on whichever thread releases it last.
                groups.withLock { $0[slot] = RequestGroup() }
            case 2:
                let group = groups.withLock { $0[slot] }
                group.suspend()
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(random.below(30))) { group.resume() }
            default:
                let group = groups.withLock { $0[slot] }
                let priority = random.pick(RequestPriority.allCases)
                DispatchQueue.global().async { group.setPriority(priority) }
            }
        }
        let handles = recent.withLock { $0 }
        for handle in handles where random.chance(20) {
            let priority = random.pick(RequestPriority.allCases)
            DispatchQueue.global().async { handle.priority = priority }
        }
        if random.chance(30) {
            // Offline for a moment: callers wait in their lines meanwhile.
            network.set(connected: false)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5 + random.below(50))) { [network] in
                network.set(connected: true)
            }
        }
        if random.chance(20) { signIn() }
        if random.chance(10) { shutDownShortLivedTransport() }
        if random.chance(25) { identity.switchUser() }
        if random.chance(50) { identity.write() }
    }

    /// Shuts the short-lived scheduler's transport down, as an app invalidates a session, while
    /// its callers wait, back off and run; a new one takes its place. The one retired eight
    /// shut-downs ago must be idle by now.
    private func shutDownShortLivedTransport() {
        let old = shortLived.withLock { [random, stories] current in
            defer { current = Self.makeShortLived(random: random, stories: stories) }
            return current
        }
        terms.closed()
        DispatchQueue.global().async { old.transport.lifecycle.close() }
        let due = retired.withLock { retired -> RequestScheduler? in
            retired.append(old.scheduler)
            return retired.count > 8 ? retired.removeFirst() : nil
        }
        if let due { terms.check(retired: due) }
    }

    private func signIn() {
        let token = signIns.withLock { count in
            count += 1
            return "t\(count)"
        }
        authenticator.token = token
    }

    /// The faults stop: the server answers well, the network is up, refreshes succeed, and
    /// every screen is resumed.
    func calm() {
        transport.setFaults(false)
        refreshes.calm()
        network.set(connected: true)
        signIn()
        for group in groups.withLock({ $0 }) { group.resume() }
    }

    /// Each scheduler's census once its queues drained and its kept outcomes expired (bounded).
    func idleCensus(timeout: TimeInterval) async -> [RequestScheduler.Census] {
        let deadline = Date().addingTimeInterval(timeout)
        // The short-lived schedulers too: those retired, and the one in use.
        let schedulers = schedulers + retired.withLock { $0 } + [shortLived.withLock { $0.scheduler }]
        for scheduler in schedulers { await scheduler.queuesDrained() }
        while Date() < deadline {
            let census = schedulers.map(\.census)
            if census.allSatisfy({ $0.callers == 0 && $0.networkCalls == 0 && $0.registeredKeys == 0 && $0.queuedOperations == 0 }) {
                return census
            }
            // A kept outcome lasts 0.2 s after its callers left: look again shortly.
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        return schedulers.map(\.census)
    }
}

/// How the authenticator's refreshes go: while the faults are on, a third fail and a third
/// hang (until the authenticator's deadline cancels them).
final class RefreshBehaviour: Sendable {
    private struct RefreshFailed: Error {}
    private let random: SeededRandom
    private let isCalm = Mutex(false)
    private let issued = Mutex(0)

    init(random: SeededRandom) {
        self.random = random
    }

    func calm() { isCalm.withLock { $0 = true } }

    func refresh() async throws -> String {
        let token = "r\(issued.withLock { count in count += 1; return count })"
        guard !isCalm.withLock({ $0 }) else { return token }
        switch random.below(3) {
        case 0: throw RefreshFailed()
        case 1: try await Task.sleep(nanoseconds: 3_600_000_000_000)
        default: break
        }
        return token
    }
}

/// A network that comes and goes when the soak says.
final class FlappingNetwork: ConnectivityMonitor {
    private let state = Mutex((connected: true, onChange: nil as (@Sendable (Bool) -> Void)?))

    var isConnected: Bool { state.withLock { $0.connected } }

    func start(onChange: @escaping @Sendable (Bool) -> Void) {
        state.withLock { $0.onChange = onChange }
    }

    func set(connected: Bool) {
        let onChange = state.withLock { state -> (@Sendable (Bool) -> Void)? in
            guard state.connected != connected else { return nil }
            state.connected = connected
            return state.onChange
        }
        onChange?(connected)
    }
}

/// A `traceparent` naming each caller, as a tracer's propagation gives one.
struct CallerTrace: ContextPropagation {
    var fieldNames: Set<String> { ["traceparent"] }

    func fields(for caller: RequestEvent.Caller) -> HeaderFields {
        let id = String(caller.id.description.dropFirst())
        return ["traceparent": "00-\(String(repeating: "0", count: max(0, 32 - id.count)))\(id)-00000000000000aa-01"]
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler
import NetworkSchedulerTesting

struct User: Codable, Sendable, Equatable {
    let id: Int
    let name: String
    let email: String?
}

struct UserName: Decodable, Sendable, Equatable {
    let name: String
}

/// A user whose decoding counts itself, in the `Counter` its decoder carries.
struct CountedUser: Decodable, Sendable {
    static let counterKey = CodingUserInfoKey(rawValue: "decodes")!
    let name: String

    init(from decoder: any Decoder) throws {
        _ = (decoder.userInfo[Self.counterKey] as? Counter)?.next()
        name = try UserName(from: decoder).name
    }
}

struct NewPost: Encodable, Sendable {
    let text: String
}

/// A model of many fields, nested objects, arrays and a dictionary: its keys come out of
/// Foundation's encoder on Linux in an order that varies between encodes.
struct RichDraft: Encodable, Sendable {
    struct Place: Encodable, Sendable { let name: String; let latitude: Double; let longitude: Double }
    let title: String
    let body: String
    let authorID: Int
    let tags: [String]
    let isDraft: Bool
    let place: Place
    let mentions: [Place]
    let counts: [String: Int]
    let replyTo: Int?

    static let sample = RichDraft(
        title: "Lunch", body: "Who's in?", authorID: 7, tags: ["food", "friday"], isDraft: false,
        place: Place(name: "Canteen", latitude: 51.5, longitude: -0.12),
        mentions: [Place(name: "Park", latitude: 51.51, longitude: -0.13), Place(name: "Pier", latitude: 50.8, longitude: -1.1)],
        counts: ["likes": 3, "shares": 1, "views": 40], replyTo: nil)
}

let userJSON = #"{"id": 1, "name": "Ada", "email": "ada@example.com"}"#

/// A scheduler over a stub transport, with a client for `https://api.test`, the outcomes of
/// its callers, and its metrics.
struct Harness: Sendable {
    let transport: StubTransport
    let scheduler: RequestScheduler
    let api: APIClient
    let metrics = MetricsCollector()
    let events = EventRecorder()

    let tokens = TokenStore()

    /// - Parameters:
    ///   - retryPolicy: none by default, so that each test sees exactly the attempts it makes.
    ///   - authenticator: replaces the token store as the source of the bearer token.
    init(
        budget: Int = 6,
        distantBudget: Int? = nil,
        slotsReservedAboveLowPriority: Int = 1,
        retryPolicy: RetryPolicy = .never,
        sendsIdempotencyKeys: Bool = false,
        authenticator: TokenAuthenticator? = nil,
        connectivity: (any ConnectivityMonitor)? = nil,
        maximumWait: [RequestPriority: TimeInterval] = [:],
        reply: @escaping @Sendable (URLRequest) -> StubResponse = { _ in .json(userJSON) },
        configure: (inout RequestScheduler.Configuration) -> Void = { _ in }
    ) {
        transport = StubTransport(maximumConnectionsPerHost: budget, maximumConnectionsPerDistantHost: distantBudget,
                                  reply: reply)
        var configuration = RequestScheduler.Configuration(
            transport: transport, slotsReservedAboveLowPriority: slotsReservedAboveLowPriority,
            eventMonitors: [metrics, events], retryPolicy: retryPolicy,
            connectivityMonitor: connectivity
        )
        configuration.maximumWait = maximumWait
        configure(&configuration)
        scheduler = RequestScheduler(configuration: configuration)
        // Attempts held on purpose must outlast the slowest test: deadline tests set their own.
        api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler, timeout: 600,
                        sendsIdempotencyKeys: sendsIdempotencyKeys, authenticator: authenticator,
                        bearerToken: { [tokens] in tokens.token })
    }

    /// Returns once the completions handed to the callback queue so far have run and the
    /// batch that ran them has let go of their handles: a monitor hears a caller end from
    /// inside that batch, before it ends. A barrier, so that it waits on a concurrent queue too.
    func callbacksRan() async {
        guard let queue = scheduler.configuration.callbackQueue else { return }
        await withCheckedContinuation { continuation in queue.async(flags: .barrier) { continuation.resume() } }
    }

    /// True once every caller, call, registry entry and attempt's operation is gone.
    var isIdle: Bool {
        let (census, operations) = scheduler.state.withLock { ($0.machine.census, $0.operations.count) }
        return census.callers == 0 && census.calls == 0 && census.registered == 0 && operations == 0
    }
}

/// Records each caller's result under a label.
final class Outcomes<Value: Sendable>: Sendable {
    let log = EventLog<(label: String, result: Result<Value, ServiceError>)>()

    func completion(_ label: String) -> @Sendable (Result<Value, ServiceError>) -> Void {
        { [log] result in log.append((label, result)) }
    }

    @discardableResult
    func wait(for count: Int) async -> [String: Result<Value, ServiceError>] {
        var byLabel: [String: Result<Value, ServiceError>] = [:]
        for entry in await log.wait(for: count) { byLabel[entry.label] = entry.result }
        return byLabel
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

/// Keeps the scheduler's events, so that tests can wait for one.
final class EventRecorder: RequestEvent.Monitor {
    let enqueued = EventLog<RequestHandle.ID>()
    let joined = EventLog<RequestHandle.ID>()
    let started = EventLog<RequestEvent.Call>()
    let retried = EventLog<Int>()
    let ended = EventLog<RequestEvent>()
    /// The path of each call promoted, and the rank it rose to.
    let promoted = EventLog<(path: String, to: RequestPriority)>()
    /// Each host's health as it changed.
    let health = EventLog<HostHealth>()
    /// Keyed calls whose outcome was kept after their callers left.
    let kept = EventLog<RequestEvent.Call>()
    /// Each step of a call's body, with the callers it was told to.
    let progressed = EventLog<(call: RequestEvent.Call, progress: TransferProgress)>()
    /// The status of each answer to a request the cache made conditional.
    let revalidated = EventLog<Int>()

    func record(_ event: RequestEvent) {
        switch event {
        case .enqueued(let caller): enqueued.append(caller.id)
        case .joined(let caller): joined.append(caller.id)
        case .started(let call, _): started.append(call)
        case .retried(_, let attempt, _, _): retried.append(attempt)
        case .succeeded, .servedFromCache, .failed, .cancelled: ended.append(event)
        case .promoted(let call, _, let to): promoted.append((call.url?.path ?? "", to))
        case .hostHealthChanged(_, let change): health.append(change)
        case .outcomeKept(let call, _): kept.append(call)
        case .progressed(let call, let progress): progressed.append((call, progress))
        case .revalidated(_, let statusCode): revalidated.append(statusCode)
        }
    }
}

import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import AsyncHTTPClient
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import NIOCore
import SocialServer
import Synchronization

/// Scenario 1: GETs of a user's friends (~350 bytes of JSON) from the SocialServer in a process
/// of its own on loopback, `concurrency` at a time, by eight clients taking turns: raw URLSession
/// with completion handlers, with `data(for:)` and with a session delegate that reads each body
/// as it arrives (as the scheduler's transport must, to stop reading past its size limit), one
/// plain async `Operation` per request, the scheduler's completion and async APIs, raw
/// AsyncHTTPClient, and the scheduler over it. Every client decodes the same models; each gets
/// its own session or client, so that the connections it opens can be counted at the server.
struct Loopback: Sendable {
    enum Client: String, CaseIterable {
        case rawCompletion = "raw URLSession completion"
        case rawAsync = "raw URLSession data(for:)"
        case rawDelegate = "raw URLSession delegate"
        case plainOperation = "plain Operation per request"
        case schedulerCompletion = "scheduler completion"
        case schedulerAsync = "scheduler async"
        case rawAsyncHTTPClient = "raw AsyncHTTPClient"
        /// AsyncHTTPClient's completion API, each request in a plain async `Operation` on a
        /// queue as wide as the scheduler's budget: what the design card's `Operation` per
        /// attempt costs over the same transport, without the scheduler.
        case operationAsyncHTTPClient = "AsyncHTTPClient in a plain Operation"
        case schedulerAsyncHTTPClient = "scheduler over AsyncHTTPClient"
        case schedulerAsyncOverAsyncHTTPClient = "scheduler async over AsyncHTTPClient"

        /// The clients of the runs against the SocialServer, as before the nginx runs.
        static let againstSocialServer: [Client] = [
            .rawCompletion, .rawAsync, .rawDelegate, .plainOperation, .schedulerCompletion, .schedulerAsync,
            .rawAsyncHTTPClient, .schedulerAsyncHTTPClient,
        ]
        /// The clients of the runs against nginx: each transport raw and under the scheduler,
        /// through both of the scheduler's APIs.
        static let againstNginx: [Client] = [
            .rawAsync, .rawDelegate, .schedulerCompletion, .schedulerAsync,
            .rawAsyncHTTPClient, .operationAsyncHTTPClient, .schedulerAsyncHTTPClient, .schedulerAsyncOverAsyncHTTPClient,
        ]
    }

    /// Connections per host for both AsyncHTTPClient clients: the scheduler's budget over it.
    static let asyncHTTPClientConnections = 8

    struct Run {
        let cost: Cost
        let connections: Int
    }

    /// What every client asks for.
    enum Method: String {
        /// A user's friends.
        case get = "GETs"
        /// A new post, each with its own text, so that none is shared or refused as a duplicate.
        case post = "POSTs with unique bodies"
    }

    /// Who answers: the Sample's server, or nginx.
    enum Server {
        case socialServer
        case nginx
    }

    let server: any LoopbackServer
    let token: String
    let requests: Int
    let concurrency: Int
    let method: Method

    static func start(requests: Int, concurrency: Int, method: Method, against kind: Server = .socialServer) async throws -> Loopback {
        let server: any LoopbackServer
        let token: String
        switch kind {
        case .socialServer:
            server = try ServerProcess.start()
            token = try await logIn(at: server.baseURL)
        case .nginx:
            // nginx answers whoever asks; the clients still send a token, as they would.
            server = try NginxProcess.start()
            token = "benchmark"
        }
        return Loopback(server: server, token: token, requests: requests, concurrency: concurrency, method: method)
    }

    /// Logs Ada in at the SocialServer at `baseURL`; returns her token.
    static func logIn(at baseURL: URL) async throws -> String {
        var login = URLRequest(url: baseURL.appending(path: "login"))
        login.httpMethod = "POST"
        login.setValue("application/json", forHTTPHeaderField: "Content-Type")
        login.httpBody = Data(#"{"username":"ada","password":"secret"}"#.utf8)
        let (data, _) = try await URLSession.shared.data(for: login)
        return try JSONDecoder().decode(Session.self, from: data).token
    }

    /// Runs every client on `requests` requests, in `slices` turns of an equal share each: the
    /// clients take their turns in `order`, then in reverse, and so on, so that the drift of a
    /// shared machine over the seconds of one run falls on every client alike instead of on
    /// whichever ran last. Each client keeps its session (and its scheduler) across its turns.
    func run(_ order: [Client], slices: Int) async throws -> [Client: Run] {
        let setups = Dictionary(uniqueKeysWithValues: order.map { ($0, Setup(for: $0, in: self)) })
        var runs: [Client: Run] = [:]
        precondition(requests % slices == 0, "\(requests) requests do not split into \(slices) equal turns")
        let share = requests / slices
        for slice in 0..<slices {
            for client in slice % 2 == 0 ? order : order.reversed() {
                let connectionsBefore = try await server.connections()
                let cost = try await run(client, setup: setups[client]!, indices: slice * share..<(slice + 1) * share)
                let connections = try await server.connections() - connectionsBefore
                let total = runs[client]
                runs[client] = Run(cost: total.map { $0.cost + cost } ?? cost, connections: (total?.connections ?? 0) + connections)
            }
        }
        for setup in setups.values {
            setup.session.finishTasksAndInvalidate()
            try await setup.httpClient?.shutdown()
        }
        return runs
    }

    /// What a client keeps between its turns.
    private struct Setup {
        let session: URLSession
        let bodies: BodyCollector?
        let api: APIClient?
        let queue: OperationQueue?
        /// The AsyncHTTPClient clients' own client.
        let httpClient: HTTPClient?

        init(for client: Client, in loopback: Loopback) {
            bodies = client == .rawDelegate ? BodyCollector() : nil
            session = Loopback.session(delegate: bodies)
            httpClient = switch client {
            case .rawAsyncHTTPClient, .operationAsyncHTTPClient, .schedulerAsyncHTTPClient, .schedulerAsyncOverAsyncHTTPClient:
                Loopback.httpClient()
            default: nil
            }
            switch client {
            case .schedulerCompletion, .schedulerAsync:
                api = loopback.makeClient(URLSessionTransport(session: session))
                queue = nil
            case .schedulerAsyncHTTPClient, .schedulerAsyncOverAsyncHTTPClient:
                api = loopback.makeClient(AsyncHTTPClientTransport(client: httpClient!, maximumConnectionsPerHost: Loopback.asyncHTTPClientConnections))
                queue = nil
            case .plainOperation:
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = session.configuration.httpMaximumConnectionsPerHost
                self.queue = queue
                api = nil
            case .operationAsyncHTTPClient:
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = Loopback.asyncHTTPClientConnections
                self.queue = queue
                api = nil
            case .rawCompletion, .rawAsync, .rawDelegate, .rawAsyncHTTPClient:
                api = nil
                queue = nil
            }
        }
    }

    private func urlRequest(_ index: Int, _ client: Client) -> URLRequest {
        var request: URLRequest
        switch method {
        case .get:
            request = URLRequest(url: URL(string: "\(server.baseURL.absoluteString)/users/1/friends?n=\(index)")!)
        case .post:
            request = URLRequest(url: server.baseURL.appendingPathComponent("posts"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try? Self.encoder.encode(Self.draft(index, client))
        }
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
    }

    /// The raw clients' encoder, made once as a careful client would.
    private static let encoder = JSONEncoder()

    private static func draft(_ index: Int, _ client: Client) -> PostDraft {
        PostDraft(text: "\(client.rawValue) \(index)")
    }

    private func run(_ client: Client, setup: Setup, indices: Range<Int>) async throws -> Cost {
        let failures = Counter()
        let session = setup.session
        let cost: Cost
        switch client {
        case .rawCompletion:
            cost = await measure(count: indices.count) { done in
                let next = Counter()
                @Sendable func startNext() {
                    let index = indices.lowerBound + next.take()
                    guard index < indices.upperBound else { return }
                    session.dataTask(with: urlRequest(index, client)) { data, response, error in
                        if !decodes(data, response, error) { failures.take() }
                        done()
                        startNext()
                    }.resume()
                }
                for _ in 0..<concurrency { startNext() }
            }
        case .rawAsync:
            cost = await measure(count: indices.count) { done in
                await workers(indices) { index in
                    let answer = try? await session.data(for: urlRequest(index, client))
                    if !decodes(answer?.0, answer?.1, nil) { failures.take() }
                    done()
                }
            }
        case .rawDelegate:
            let bodies = setup.bodies!
            cost = await measure(count: indices.count) { done in
                let next = Counter()
                @Sendable func startNext() {
                    let index = indices.lowerBound + next.take()
                    guard index < indices.upperBound else { return }
                    let task = session.dataTask(with: urlRequest(index, client))
                    bodies.collect(task) { data, response, error in
                        if !decodes(data, response, error) { failures.take() }
                        done()
                        startNext()
                    }
                    task.resume()
                }
                for _ in 0..<concurrency { startNext() }
            }
        case .plainOperation:
            cost = await inOperations(on: setup.queue!, indices, failures: failures) { index, succeeded in
                session.dataTask(with: urlRequest(index, client)) { data, response, error in
                    succeeded(decodes(data, response, error))
                }.resume()
            }
        case .rawAsyncHTTPClient:
            let httpClient = setup.httpClient!
            cost = await measure(count: indices.count) { done in
                await workers(indices) { index in
                    if await !fetch(index, client, with: httpClient) { failures.take() }
                    done()
                }
            }
        case .operationAsyncHTTPClient:
            let httpClient = setup.httpClient!
            cost = await inOperations(on: setup.queue!, indices, failures: failures) { index, succeeded in
                fetch(index, client, with: httpClient, completion: succeeded)
            }
        case .schedulerCompletion, .schedulerAsyncHTTPClient:
            let api = setup.api!
            cost = await measure(count: indices.count) { done in
                let next = Counter()
                @Sendable func sendNext() {
                    let index = indices.lowerBound + next.take()
                    guard index < indices.upperBound else { return }
                    send(index, client, through: api) { succeeded in
                        if !succeeded { failures.take() }
                        done()
                        sendNext()
                    }
                }
                for _ in 0..<concurrency { sendNext() }
            }
        case .schedulerAsync, .schedulerAsyncOverAsyncHTTPClient:
            let api = setup.api!
            cost = await measure(count: indices.count) { done in
                await workers(indices) { index in
                    if await !value(index, client, through: api) { failures.take() }
                    done()
                }
            }
        }
        let failed = failures.value
        guard failed == 0 else { throw BenchmarkFailure("\(client.rawValue): \(failed) of \(indices.count) requests failed") }
        return cost
    }

    /// Sends the requests of `indices`, `concurrency` at a time, each in a plain async
    /// `Operation` on `queue`: `send` sends one and tells whether it succeeded.
    private func inOperations(
        on queue: OperationQueue, _ indices: Range<Int>, failures: Counter,
        send: @escaping @Sendable (_ index: Int, _ succeeded: @escaping @Sendable (Bool) -> Void) -> Void
    ) async -> Cost {
        await measure(count: indices.count) { done in
            let next = Counter()
            @Sendable func addNext() {
                let index = indices.lowerBound + next.take()
                guard index < indices.upperBound else { return }
                queue.addOperation(PlainAsyncOperation { finish in
                    send(index) { succeeded in
                        if !succeeded { failures.take() }
                        finish()
                        done()
                        addNext()
                    }
                })
            }
            for _ in 0..<concurrency { addNext() }
        }
    }

    /// `concurrency` tasks, each taking the next index until all are taken.
    private func workers(_ indices: Range<Int>, _ body: @escaping @Sendable (Int) async -> Void) async {
        let next = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while case let index = indices.lowerBound + next.take(), index < indices.upperBound {
                        await body(index)
                    }
                }
            }
        }
    }

    /// A session for one client. Without a `URLCache` for every client alike: on Linux the
    /// scheduler's transport never sends through one (see `URLSessionTransport`), and a cache
    /// lookup before each task would make the raw clients pay for what the scheduler skips.
    static func session(delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// A raw AsyncHTTPClient request for the same resource, read whole and decoded, made as a
    /// user of the client makes one: its own request type, from a string, with no `URLRequest`
    /// (on Linux one costs about ten allocations, which would be the raw client's cost, not the
    /// scheduler's).
    private func fetch(_ index: Int, _ client: Client, with httpClient: HTTPClient) async -> Bool {
        var request: HTTPClientRequest
        switch method {
        case .get:
            request = HTTPClientRequest(url: "\(baseURLString)/users/1/friends?n=\(index)")
        case .post:
            request = HTTPClientRequest(url: "\(baseURLString)/posts")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            guard let body = try? Self.encoder.encode(Self.draft(index, client)) else { return false }
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        guard let response = try? await httpClient.execute(request, timeout: .seconds(60)),
              let body = try? await response.body.collect(upTo: 50 * 1_024 * 1_024) else { return false }
        return decodes(Data(body.readableBytesView), status: Int(response.status.code))
    }

    /// The server's base URL as text, without a trailing slash.
    private var baseURLString: String {
        let text = server.baseURL.absoluteString
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    /// The same request through AsyncHTTPClient's completion API (a future completed on the
    /// event loop), as the scheduler's transport sends it.
    private func fetch(_ index: Int, _ client: Client, with httpClient: HTTPClient,
                       completion: @escaping @Sendable (Bool) -> Void) {
        let url = urlRequest(index, client)
        guard var request = try? HTTPClient.Request(url: url.url!.absoluteString, method: .init(rawValue: url.httpMethod ?? "GET")) else {
            return completion(false)
        }
        for (name, value) in url.allHTTPHeaderFields ?? [:] { request.headers.add(name: name, value: value) }
        if let body = url.httpBody { request.body = .bytes(body) }
        httpClient.execute(request: request, deadline: .now() + .seconds(60)).whenComplete { result in
            guard case .success(let response) = result else { return completion(false) }
            let body = response.body.map { Data($0.readableBytesView) } ?? Data()
            completion(decodes(body, status: Int(response.status.code)))
        }
    }

    /// A client as the transport makes its own: no redirects followed by the client, the same
    /// connections per host, on the shared event loops.
    static func httpClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = asyncHTTPClientConnections
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// A client over `transport`, with the scheduler's default configuration. (With no
    /// callback queue, completions on the event loops, a GET over AsyncHTTPClient cost 8 µs
    /// more of CPU, 2026-11-27: the event loop then also sends the next request.)
    private func makeClient(_ transport: any HTTPTransport) -> APIClient {
        let scheduler = RequestScheduler { $0.transport = transport }
        let token = token
        return APIClient(baseURL: server.baseURL, scheduler: scheduler, bearerToken: { token })
    }

    private static func friends(_ index: Int) -> Resource<[User]> {
        Resource(path: "/users/1/friends", query: [URLQueryItem(name: "n", value: "\(index)")])
    }

    private static func post(_ index: Int, _ client: Client) -> Resource<Post> {
        Resource(.post, path: "/posts", body: .json(draft(index, client)))
    }

    /// Sends the request through the scheduler's completion API; tells whether it succeeded.
    private func send(_ index: Int, _ client: Client, through api: APIClient, _ done: @escaping @Sendable (Bool) -> Void) {
        switch method {
        case .get: api.send(Self.friends(index)) { done((try? $0.get()) != nil) }
        case .post: api.send(Self.post(index, client)) { done((try? $0.get()) != nil) }
        }
    }

    /// The same through the async API.
    private func value(_ index: Int, _ client: Client, through api: APIClient) async -> Bool {
        switch method {
        case .get: (try? await api.value(for: Self.friends(index))) != nil
        case .post: (try? await api.value(for: Self.post(index, client))) != nil
        }
    }

    private func decodes(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?) -> Bool {
        guard error == nil, let data, let status = (response as? HTTPURLResponse)?.statusCode else { return false }
        return decodes(data, status: status)
    }

    /// Whether the answer is a success whose body decodes as the method's model.
    private func decodes(_ data: Data, status: Int) -> Bool {
        guard (200..<300).contains(status) else { return false }
        return switch method {
        case .get: (try? Self.decoder.decode([User].self, from: data)) != nil
        case .post: (try? Self.decoder.decode(Post.self, from: data)) != nil
        }
    }

    /// The raw clients' decoder, made once as a careful client would (as the scheduler's is).
    private static let decoder = JSONDecoder()
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialServer
import Synchronization

/// Scenario 1: GETs of a user's friends (~350 bytes of JSON) from the SocialServer on loopback,
/// `concurrency` at a time, by six clients taking turns: raw URLSession with completion handlers,
/// with `data(for:)` and with a session delegate that reads each body as it arrives (as the
/// scheduler's transport must, to stop reading past its size limit), one plain async `Operation`
/// per request, and the scheduler's completion and async APIs. Every client decodes the same models; each gets its own session, so that the
/// connections it opens can be counted at the server.
struct Loopback: Sendable {
    enum Client: String, CaseIterable {
        case rawCompletion = "raw URLSession completion"
        case rawAsync = "raw URLSession data(for:)"
        case rawDelegate = "raw URLSession delegate"
        case plainOperation = "plain Operation per request"
        case schedulerCompletion = "scheduler completion"
        case schedulerAsync = "scheduler async"
    }

    struct Run {
        let cost: Cost
        let connections: Int
    }

    let server: SocialServer
    let token: String
    let requests: Int
    let concurrency: Int

    static func start(requests: Int, concurrency: Int) async throws -> Loopback {
        let server = try await SocialServer.start()
        var login = URLRequest(url: server.baseURL.appending(path: "login"))
        login.httpMethod = "POST"
        login.setValue("application/json", forHTTPHeaderField: "Content-Type")
        login.httpBody = Data(#"{"username":"ada","password":"secret"}"#.utf8)
        let (data, _) = try await URLSession.shared.data(for: login)
        let token = try JSONDecoder().decode(Session.self, from: data).token
        return Loopback(server: server, token: token, requests: requests, concurrency: concurrency)
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
                let connectionsBefore = server.arrivals.connections
                let cost = try await run(client, setup: setups[client]!, indices: slice * share..<(slice + 1) * share)
                let connections = server.arrivals.connections - connectionsBefore
                let total = runs[client]
                runs[client] = Run(cost: total.map { $0.cost + cost } ?? cost, connections: (total?.connections ?? 0) + connections)
            }
        }
        for setup in setups.values { setup.session.finishTasksAndInvalidate() }
        return runs
    }

    /// What a client keeps between its turns.
    private struct Setup {
        let session: URLSession
        let bodies: BodyCollector?
        let api: APIClient?
        let queue: OperationQueue?

        init(for client: Client, in loopback: Loopback) {
            bodies = client == .rawDelegate ? BodyCollector() : nil
            session = Loopback.session(delegate: bodies)
            switch client {
            case .schedulerCompletion, .schedulerAsync:
                api = loopback.makeClient(session)
                queue = nil
            case .plainOperation:
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = session.configuration.httpMaximumConnectionsPerHost
                self.queue = queue
                api = nil
            case .rawCompletion, .rawAsync, .rawDelegate:
                api = nil
                queue = nil
            }
        }
    }

    private func urlRequest(_ index: Int) -> URLRequest {
        var request = URLRequest(url: URL(string: "\(server.baseURL.absoluteString)/users/1/friends?n=\(index)")!)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
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
                    session.dataTask(with: urlRequest(index)) { data, response, error in
                        if Self.decode(data, response, error) == nil { failures.take() }
                        done()
                        startNext()
                    }.resume()
                }
                for _ in 0..<concurrency { startNext() }
            }
        case .rawAsync:
            cost = await measure(count: indices.count) { done in
                await workers(indices) { index in
                    let answer = try? await session.data(for: urlRequest(index))
                    if Self.decode(answer?.0, answer?.1, nil) == nil { failures.take() }
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
                    let task = session.dataTask(with: urlRequest(index))
                    bodies.collect(task) { data, response, error in
                        if Self.decode(data, response, error) == nil { failures.take() }
                        done()
                        startNext()
                    }
                    task.resume()
                }
                for _ in 0..<concurrency { startNext() }
            }
        case .plainOperation:
            let queue = setup.queue!
            cost = await measure(count: indices.count) { done in
                let next = Counter()
                @Sendable func addNext() {
                    let index = indices.lowerBound + next.take()
                    guard index < indices.upperBound else { return }
                    queue.addOperation(PlainAsyncOperation { finish in
                        session.dataTask(with: urlRequest(index)) { data, response, error in
                            if Self.decode(data, response, error) == nil { failures.take() }
                            finish()
                            done()
                            addNext()
                        }.resume()
                    })
                }
                for _ in 0..<concurrency { addNext() }
            }
        case .schedulerCompletion:
            let api = setup.api!
            cost = await measure(count: indices.count) { done in
                let next = Counter()
                @Sendable func sendNext() {
                    let index = indices.lowerBound + next.take()
                    guard index < indices.upperBound else { return }
                    api.send(Self.friends(index)) { result in
                        if case .failure = result { failures.take() }
                        done()
                        sendNext()
                    }
                }
                for _ in 0..<concurrency { sendNext() }
            }
        case .schedulerAsync:
            let api = setup.api!
            cost = await measure(count: indices.count) { done in
                await workers(indices) { index in
                    if (try? await api.value(for: Self.friends(index))) == nil {
                        failures.take()
                    }
                    done()
                }
            }
        }
        let failed = failures.value
        guard failed == 0 else { throw BenchmarkFailure("\(client.rawValue): \(failed) of \(indices.count) requests failed") }
        return cost
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

    private func makeClient(_ session: URLSession) -> APIClient {
        let scheduler = RequestScheduler { $0.transport = URLSessionTransport(session: session) }
        let token = token
        return APIClient(baseURL: server.baseURL, scheduler: scheduler, bearerToken: { token })
    }

    private static func friends(_ index: Int) -> Resource<[User]> {
        Resource(path: "/users/1/friends", query: [URLQueryItem(name: "n", value: "\(index)")])
    }

    private static func decode(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?) -> [User]? {
        guard error == nil, let data, (response as? HTTPURLResponse)?.statusCode == 200 else { return nil }
        return try? JSONDecoder().decode([User].self, from: data)
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialServer
import Synchronization

/// Scenario 1: GETs of a user's friends (~350 bytes of JSON) from the SocialServer on loopback,
/// `concurrency` at a time, by five clients in turn: raw URLSession with completion handlers and
/// with `data(for:)`, one plain async `Operation` per request, and the scheduler's completion and
/// async APIs. Every client decodes the same models; each gets its own session, so that the
/// connections it opens can be counted at the server.
struct Loopback: Sendable {
    enum Client: String, CaseIterable {
        case rawCompletion = "raw URLSession completion"
        case rawAsync = "raw URLSession data(for:)"
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

    /// Runs each client once, in `order`.
    func run(_ order: [Client]) async throws -> [Client: Run] {
        var runs: [Client: Run] = [:]
        for client in order {
            let connectionsBefore = server.arrivals.connections
            let session = Self.session()
            let cost = try await run(client, session: session)
            session.finishTasksAndInvalidate()
            runs[client] = Run(cost: cost, connections: server.arrivals.connections - connectionsBefore)
        }
        return runs
    }

    private func urlRequest(_ index: Int) -> URLRequest {
        var request = URLRequest(url: URL(string: "\(server.baseURL.absoluteString)/users/1/friends?n=\(index)")!)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
    }

    private func run(_ client: Client, session: URLSession) async throws -> Cost {
        let failures = Counter()
        let cost: Cost
        switch client {
        case .rawCompletion:
            cost = await measure(count: requests) { done in
                let next = Counter()
                @Sendable func startNext() {
                    let index = next.take()
                    guard index < requests else { return }
                    session.dataTask(with: urlRequest(index)) { data, response, error in
                        if Self.decode(data, response, error) == nil { failures.take() }
                        done()
                        startNext()
                    }.resume()
                }
                for _ in 0..<concurrency { startNext() }
            }
        case .rawAsync:
            cost = await measure(count: requests) { done in
                await workers { index in
                    let answer = try? await session.data(for: urlRequest(index))
                    if Self.decode(answer?.0, answer?.1, nil) == nil { failures.take() }
                    done()
                }
            }
        case .plainOperation:
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = session.configuration.httpMaximumConnectionsPerHost
            cost = await measure(count: requests) { done in
                let next = Counter()
                @Sendable func addNext() {
                    let index = next.take()
                    guard index < requests else { return }
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
            let api = makeClient(session)
            cost = await measure(count: requests) { done in
                let next = Counter()
                @Sendable func sendNext() {
                    let index = next.take()
                    guard index < requests else { return }
                    api.send(Self.friends(index)) { result in
                        if case .failure = result { failures.take() }
                        done()
                        sendNext()
                    }
                }
                for _ in 0..<concurrency { sendNext() }
            }
        case .schedulerAsync:
            let api = makeClient(session)
            cost = await measure(count: requests) { done in
                await workers { index in
                    if (try? await api.value(for: Self.friends(index))) == nil {
                        failures.take()
                    }
                    done()
                }
            }
        }
        let failed = failures.value
        guard failed == 0 else { throw BenchmarkFailure("\(client.rawValue): \(failed) of \(requests) requests failed") }
        return cost
    }

    /// `concurrency` tasks, each taking the next index until all are taken.
    private func workers(_ body: @escaping @Sendable (Int) async -> Void) async {
        let next = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while case let index = next.take(), index < requests {
                        await body(index)
                    }
                }
            }
        }
    }

    /// A session for one client. Without a `URLCache` for every client alike: on Linux the
    /// scheduler's transport never sends through one (see `URLSessionTransport`), and a cache
    /// lookup before each task would make the raw clients pay for what the scheduler skips.
    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
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

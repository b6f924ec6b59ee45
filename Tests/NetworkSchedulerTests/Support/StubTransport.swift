import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler

/// What the stub server does with one request.
enum StubReply: Sendable {
    /// Answers at once.
    case respond(status: Int = 200, body: Data = Data(), headers: [String: String] = [:])
    /// Fails at once with a transport error.
    case fail(URLError)
    /// Holds the request until the test releases it: a gate.
    case hold
    /// Never calls back, not even when cancelled: a transport stuck for good.
    case never
}

extension StubReply {
    var isNever: Bool {
        if case .never = self { return true }
        return false
    }

    static func json(_ text: String, status: Int = 200) -> StubReply {
        .respond(status: status, body: Data(text.utf8), headers: ["Content-Type": "application/json"])
    }
}

/// A transport with no sockets: it records every request that reaches "the network", answers
/// as the test says, and can hold requests until released.
final class StubTransport: HTTPTransport {
    struct Arrival: Sendable {
        let request: URLRequest
        var path: String { request.url?.path ?? "" }
    }

    private struct Held {
        let task: StubTask
        let request: URLRequest
    }

    private struct State {
        var held: [Held] = []
        var inFlight = 0
        var maxInFlight = 0
    }

    let maximumConnectionsPerHost: Int
    /// Every request that reached the network, in the order they started.
    let arrivals = EventLog<Arrival>()
    /// Every task the scheduler cancelled while it was on the wire.
    let cancellations = EventLog<URLRequest>()
    /// The priority each task started with, then each change it was told, by path.
    let priorities = EventLog<(path: String, priority: RequestPriority)>()
    private let reply: @Sendable (URLRequest) -> StubReply
    private let state = Locked(State())

    init(maximumConnectionsPerHost: Int = 6, reply: @escaping @Sendable (URLRequest) -> StubReply = { _ in .json("{}") }) {
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
        self.reply = reply
    }

    /// The most requests that were on the wire at once.
    var maxInFlight: Int { state.withLock { $0.maxInFlight } }
    /// How many requests are held now.
    var heldCount: Int { state.withLock { $0.held.count } }

    func startTask(
        for request: URLRequest,
        policy: TransportPolicy,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        let reply = reply(request)
        priorities.append((request.url?.path ?? "", policy.priority))
        let task = StubTask(request: request, transport: self, answersCancellation: !reply.isNever, completion: completion)
        state.withLock { state in
            state.inFlight += 1
            state.maxInFlight = max(state.maxInFlight, state.inFlight)
        }
        if case .hold = reply {
            state.withLock { $0.held.append(Held(task: task, request: request)) }
        }
        // Announced once held, so that a test that releases what arrived always finds it.
        arrivals.append(Arrival(request: request))
        switch reply {
        case .hold, .never:
            break
        case let .respond(status, body, headers):
            DispatchQueue.global().async { task.finish(.success(Self.response(to: request, status: status, body: body, headers: headers))) }
        case .fail(let error):
            DispatchQueue.global().async { task.finish(.failure(error)) }
        }
        return task
    }

    /// Answers the oldest held request (or the oldest whose path is `path`). Returns whether
    /// there was one.
    @discardableResult
    func release(path: String? = nil, with reply: StubReply = .json("{}")) -> Bool {
        let held: Held? = state.withLock { state in
            guard let index = state.held.firstIndex(where: { path == nil || $0.request.url?.path == path }) else { return nil }
            return state.held.remove(at: index)
        }
        guard let held else { return false }
        switch reply {
        case let .respond(status, body, headers):
            held.task.finish(.success(Self.response(to: held.request, status: status, body: body, headers: headers)))
        case .fail(let error):
            held.task.finish(.failure(error))
        case .hold, .never:
            state.withLock { $0.held.append(held) }
        }
        return true
    }

    fileprivate func taskEnded(_ task: StubTask, cancelled: Bool) {
        state.withLock { state in
            state.inFlight -= 1
            state.held.removeAll { $0.task === task }
        }
        if cancelled { cancellations.append(task.request) }
    }

    static func response(to request: URLRequest, status: Int, body: Data, headers: [String: String]) -> TransportResponse {
        let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
        return TransportResponse(data: body, response: response)
    }
}

/// One stub task: finishes once, by an answer or by cancellation.
final class StubTask: TransportTask {
    let request: URLRequest
    private let transport: StubTransport
    private let answersCancellation: Bool
    private let completion: Locked<(@Sendable (Result<TransportResponse, any Error>) -> Void)?>

    init(request: URLRequest, transport: StubTransport, answersCancellation: Bool = true,
         completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) {
        self.request = request
        self.transport = transport
        self.answersCancellation = answersCancellation
        self.completion = Locked(completion)
    }

    func cancel() {
        guard let completion = takeCompletion() else { return }
        transport.taskEnded(self, cancelled: true)
        guard answersCancellation else { return }
        DispatchQueue.global().async { completion(.failure(URLError(.cancelled))) }
    }

    func reprioritize(to priority: RequestPriority) {
        transport.priorities.append((request.url?.path ?? "", priority))
    }

    func finish(_ result: Result<TransportResponse, any Error>) {
        guard let completion = takeCompletion() else { return }
        transport.taskEnded(self, cancelled: false)
        completion(result)
    }

    private func takeCompletion() -> (@Sendable (Result<TransportResponse, any Error>) -> Void)? {
        completion.withLock { completion in
            defer { completion = nil }
            return completion
        }
    }
}

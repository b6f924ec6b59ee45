import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import Synchronization

/// A transport without sockets: it answers each request from a global queue with one fixed
/// response, as a network callback would arrive, or holds the requests until released.
final class StubTransport: HTTPTransport {
    let maximumConnectionsPerHost = 6
    private let response: TransportResponse
    private let state = Mutex(State())

    private struct State {
        var isHolding = false
        var started = 0
        var held: [Int: @Sendable (Result<TransportResponse, any Error>) -> Void] = [:]
    }

    /// A transport answering 200 with `body` and `headers` besides its `Content-Type`.
    init(body: Data, headers: [String: String] = [:]) {
        let url = URL(string: "http://stub.invalid/")!
        let http = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                   headerFields: headers.merging(["Content-Type": "application/json"]) { $1 })!
        response = TransportResponse(data: body, response: http)
    }

    /// A client for `http://stub.invalid` whose scheduler sends through this transport, with
    /// `cache` if one is given.
    func client(cache: ResponseCache? = nil) -> APIClient {
        let scheduler = RequestScheduler { $0.transport = self; $0.cache = cache }
        return APIClient(baseURL: URL(string: "http://stub.invalid")!, scheduler: scheduler)
    }

    /// How many tasks were started: the requests that reached the "network".
    var started: Int { state.withLock { $0.started } }

    /// Holds every task started from now until ``release()``.
    func hold() {
        state.withLock { $0.isHolding = true }
    }

    /// Answers every held task, and stops holding.
    func release() {
        let held = state.withLock { state in
            defer { state.held = [:]; state.isHolding = false }
            return state.held.values
        }
        for completion in held { completion(.success(response)) }
    }

    func startTask(
        for request: TransportRequest,
        policy: TransportPolicy,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        let (number, isHeld) = state.withLock { state in
            state.started += 1
            if state.isHolding { state.held[state.started] = completion }
            return (state.started, state.isHolding)
        }
        if !isHeld {
            let response = response
            DispatchQueue.global().async { completion(.success(response)) }
        }
        return StubTask(number: number, transport: self)
    }

    fileprivate func cancel(_ number: Int) {
        let completion = state.withLock { $0.held.removeValue(forKey: number) }
        completion?(.failure(URLError(.cancelled)))
    }
}

private struct StubTask: TransportTask {
    let number: Int
    let transport: StubTransport

    func cancel() {
        transport.cancel(number)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialApp
import SocialServer
import Synchronization
import Testing

/// A SocialServer of the test's own on 127.0.0.1, and the app's networking pointed at it
/// through a URLSession of its own.
struct Fixture: Sendable {
    let server: SocialServer
    let api: SocialAPI
    let session: URLSession
    let started: StartedCalls

    static let ada = Credentials(username: "ada", password: "secret")

    /// Runs `body` against a new server, and always stops the server afterwards.
    static func with(
        budget: Int? = nil,
        _ body: (Fixture) async throws -> Void
    ) async throws {
        let server = try await SocialServer.start()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        let session = URLSession(configuration: configuration)
        let started = StartedCalls()
        let api = SocialAPI(baseURL: server.baseURL, configuration: .init(
            transport: URLSessionTransport(session: session),
            maximumConcurrentRequestsPerHost: budget,
            eventMonitors: [started]
        ))
        let fixture = Fixture(server: server, api: api, session: session, started: started)
        do {
            try await body(fixture)
        } catch {
            await fixture.shutDown()
            throw error
        }
        await fixture.shutDown()
    }

    func logIn() async throws -> Session {
        try await api.auth.logIn(Self.ada)
    }

    private func shutDown() async {
        session.invalidateAndCancel()
        await server.stop()
    }
}

/// The network calls the scheduler started, with a bounded wait for them.
final class StartedCalls: RequestEventMonitor {
    private struct State {
        var targets: [String] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    var targets: [String] { state.withLock { $0.targets } }

    func record(_ event: RequestEvent) {
        guard case .started(let request, _) = event else { return }
        let target = request.url.map { $0.path + ($0.query.map { "?\($0)" } ?? "") } ?? ""
        let ready = state.withLock { state in
            state.targets.append(target)
            let count = state.targets.count
            defer { state.waiters.removeAll { $0.count <= count } }
            return state.waiters.filter { $0.count <= count }.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until `count` calls have started, or `timeout` seconds have passed.
    func wait(for count: Int, timeout: TimeInterval = 10) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = state.withLock { state -> Bool in
                if state.targets.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if already {
                continuation.resume()
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let expired = state.withLock { state -> Bool in
                    guard let index = state.waiters.firstIndex(where: { $0.count == count }) else { return false }
                    state.waiters.remove(at: index).continuation.resume()
                    return true
                }
                _ = expired
            }
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import SocialApp
import SocialServer
import Testing

/// The transports the integration, hostile-server and stress suites run over: each of their
/// tests runs once over each.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `URLSessionTransport`: FoundationNetworking on Linux, as an app uses it.
    case urlSession
    /// `AsyncHTTPClientTransport`, from the Integrations package: SwiftNIO, as a server uses it.
    case asyncHTTPClient

    var testDescription: String { "over \(rawValue)" }

    /// A new transport of this kind, and what shuts it down.
    func make() -> (transport: any HTTPTransport, shutDown: @Sendable () async -> Void) {
        switch self {
        case .urlSession:
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 10
            let transport = URLSessionTransport(configuration: configuration)
            return (transport, { transport.invalidate() })
        case .asyncHTTPClient:
            let transport = AsyncHTTPClientTransport()
            return (transport, { try? await transport.shutdown() })
        }
    }
}

/// A SocialServer of the test's own on 127.0.0.1, and the app's networking pointed at it
/// through a transport of its own.
struct Fixture: Sendable {
    let server: SocialServer
    let api: SocialAPI
    /// The transport's session, when it runs over URLSession.
    let session: URLSession?
    private let shutDownTransport: @Sendable () async -> Void

    static let ada = Credentials(username: "ada", password: "secret")

    /// Runs `body` against a new server, and always stops the server afterwards.
    /// - Parameter retryPolicy: none by default, so that each test sees exactly the attempts it makes.
    static func with(
        over kind: TransportKind = .urlSession,
        budget: Int? = nil,
        retryPolicy: RetryPolicy = .never,
        eventMonitors: [any RequestEvent.Monitor] = [],
        maximumWait: [RequestPriority: TimeInterval] = [:],
        maximumWaitingPerHost: Int? = nil,
        configure: (inout RequestScheduler.Configuration) -> Void = { _ in },
        _ body: (Fixture) async throws -> Void
    ) async throws {
        let server = try await SocialServer.start()
        let (transport, shutDownTransport) = kind.make()
        var schedulerConfiguration = RequestScheduler.Configuration(
            transport: transport,
            hostBudget: budget,
            eventMonitors: eventMonitors,
            retryPolicy: retryPolicy
        )
        schedulerConfiguration.maximumWait = maximumWait
        schedulerConfiguration.maximumWaitingPerHost = maximumWaitingPerHost
        configure(&schedulerConfiguration)
        let api = SocialAPI(baseURL: server.baseURL, configuration: schedulerConfiguration)
        let fixture = Fixture(server: server, api: api, session: (transport as? URLSessionTransport)?.session,
                              shutDownTransport: shutDownTransport)
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

    /// Logs in, then keeps the host's only slot (a fixture with a budget of one) busy with a
    /// request for `/me` held at the server, so that what is sent next waits in line. Returns
    /// what frees the slot: the request is released, and its answer awaited.
    func logInAndHoldTheOnlySlot() async throws -> @Sendable () async throws -> Void {
        _ = try await logIn()
        server.faults.hold(.me)
        let blocker = Task { [api] in try await api.client.value(for: .me) }
        #expect(await server.arrivals.wait(for: 1, at: .me))
        return { [server] in
            server.faults.release(.me)
            _ = try await blocker.value
        }
    }

    /// Shuts the transport down as an app does when it is done with it: `invalidate()`, or
    /// `shutdown()`. Doing it again when the test ends is harmless.
    func closeTransport() async {
        await shutDownTransport()
    }

    private func shutDown() async {
        await shutDownTransport()
        await server.stop()
    }
}

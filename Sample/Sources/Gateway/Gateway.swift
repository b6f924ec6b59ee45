import Foundation
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import SocialApp
import SocialServer

/// A server in front of SocialServer, as a backend-for-frontend is: it serves many clients at
/// once by calling the upstream API through one scheduler over AsyncHTTPClient. Identical
/// requests in flight become one upstream call, a 429 or 503 with `Retry-After` pauses every
/// call to the upstream, and a deadline bounds each client's wait.
///
/// ```swift
/// let gateway = try await Gateway.start(upstream: server.baseURL, credentials: ada)
/// // GET \(gateway.baseURL)/profiles/1 → the upstream's GET /users/1
/// await gateway.stop()
/// ```
///
/// `GET /profiles/{id}` answers with the upstream's user, and `X-Shared: true` when another
/// client's request shared its upstream call. An upstream that took longer than the deadline
/// is a 504; one that asked to wait (429, 503) a 503 with its `Retry-After`; its 404 a 404; any
/// other failure a 502.
public final class Gateway: Sendable {
    /// The upstream API's client, over the gateway's scheduler.
    public let upstream: SocialAPI
    /// The most seconds a client waits for the upstream.
    public let deadline: TimeInterval
    private let server: LoopbackHTTPServer
    private let transport: AsyncHTTPClientTransport

    /// The gateway's address, `http://127.0.0.1:PORT`.
    public var baseURL: URL { server.baseURL }

    /// Logs in to the upstream at `upstream` as `credentials`, then serves on 127.0.0.1.
    ///
    /// - Parameters:
    ///   - upstream: the SocialServer's base URL.
    ///   - credentials: the account the gateway calls the upstream as.
    ///   - deadline: the most seconds a client waits.
    ///   - port: the port to serve on; 0 picks a free one.
    ///   - configure: changes to the scheduler's configuration (its transport is set).
    public static func start(
        upstream: URL,
        credentials: Credentials,
        deadline: TimeInterval = 2,
        port: Int = 0,
        configure: (inout RequestScheduler.Configuration) -> Void = { _ in }
    ) async throws -> Gateway {
        let transport = AsyncHTTPClientTransport(maximumConnectionsPerHost: 16)
        var configuration = RequestScheduler.Configuration(transport: transport)
        configure(&configuration)
        let api = SocialAPI(baseURL: upstream, configuration: configuration)
        do {
            _ = try await api.auth.logIn(credentials)
            let server = try await LoopbackHTTPServer.start(GatewayRoutes(upstream: api, deadline: deadline).router(),
                                                            port: port, name: "Gateway")
            return Gateway(upstream: api, deadline: deadline, server: server, transport: transport)
        } catch {
            try? await transport.shutdown()
            throw error
        }
    }

    private init(upstream: SocialAPI, deadline: TimeInterval, server: LoopbackHTTPServer, transport: AsyncHTTPClientTransport) {
        self.upstream = upstream
        self.deadline = deadline
        self.server = server
        self.transport = transport
    }

    /// Stops serving, cancels what still waits for the upstream, and shuts the client down.
    public func stop() async {
        await server.stop()
        upstream.scheduler.cancelAll()
        try? await transport.shutdown()
    }
}

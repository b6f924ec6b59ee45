import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// A small social-network REST API, served on 127.0.0.1 at a port chosen at run time.
///
/// ```swift
/// let server = try await SocialServer.start()
/// server.faults[.friends] = .latency(milliseconds: 200)
/// … // send requests to server.baseURL
/// print(server.arrivals.count(.createPost))
/// await server.stop()
/// ```
///
/// `POST /login` returns a bearer token (password `secret` for every user: ada, grace, linus…);
/// every other route needs it. `GET /_stats` returns the arrivals, for clients outside the process.
public final class SocialServer: Sendable {
    /// Faults to inject, per route.
    public let faults: FaultBoard
    /// Every request that arrived, per route and in order.
    public let arrivals: ArrivalLog
    /// The port the server listens on.
    public let port: Int
    private let store: SocialStore
    private let running: NIOLockedValueBox<Serving>

    /// A server being served: the group that runs it, and the task that runs the group.
    private struct Serving: Sendable {
        let group: ServiceGroup
        let task: Task<Void, any Error>
    }

    /// The server's address, `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(store: SocialStore, faults: FaultBoard, arrivals: ArrivalLog, port: Int, serving: Serving) {
        self.store = store
        self.faults = faults
        self.arrivals = arrivals
        self.port = port
        running = NIOLockedValueBox(serving)
    }

    /// Starts a server on 127.0.0.1 and returns once it accepts connections.
    public static func start(port: Int = 0) async throws -> SocialServer {
        let store = SocialStore()
        let faults = FaultBoard()
        let arrivals = ArrivalLog()
        let (serving, bound) = try await serve(SocialRoutes(store: store, faults: faults, arrivals: arrivals), port: port)
        return SocialServer(store: store, faults: faults, arrivals: arrivals, port: bound, serving: serving)
    }

    /// Stops the server and waits until it has: it stops accepting connections, answers the
    /// requests in progress and closes. A graceful shutdown, because cancelling the serving
    /// task traps in SwiftNIO when a connection was accepted but not yet served
    /// ("Deinited NIOAsyncWriter without calling finish()"; apple/swift-nio#3481).
    public func stop() async {
        let serving = running.withLockedValue { $0 }
        await serving.group.triggerGracefulShutdown()
        _ = await serving.task.result
    }

    /// Stops the server, then serves again on the same port with the same data, as a real
    /// server restarting behind its database would. Connections open meanwhile are refused.
    public func restart() async throws {
        await stop()
        let (serving, _) = try await Self.serve(SocialRoutes(store: store, faults: faults, arrivals: arrivals), port: port)
        running.withLockedValue { $0 = serving }
    }

    /// How many posts exist whose text starts with `prefix`: proof that none was created twice.
    public func postCount(withTextPrefix prefix: String) async -> Int {
        await store.postCount(withTextPrefix: prefix)
    }

    /// Forgets every session: requests with the old tokens get 401 until their clients log in again.
    public func expireTokens() async {
        await store.expireSessions()
    }

    /// Runs the routes on 127.0.0.1:`port` (0 for any free port); returns once it listens.
    private static func serve(_ routes: SocialRoutes, port: Int) async throws -> (Serving, port: Int) {
        let bound = PortPromise()
        var logger = Logger(label: "SocialServer")
        // Connections cut by a stop are reported as errors: keep them quiet.
        logger.logLevel = .critical
        let app = Application(
            router: routes.router(),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "SocialServer"),
            onServerRunning: { channel in bound.fulfil(with: .success(channel.localAddress?.port ?? 0)) },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            do {
                try await group.run()
            } catch {
                bound.fulfil(with: .failure(error))
                throw error
            }
        }
        return (Serving(group: group, task: task), try await bound.value)
    }
}

/// The bound port, delivered once, whether it comes or the server fails to start.
private final class PortPromise: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Int, any Error>?)
        case done(Result<Int, any Error>)
    }

    private let state = NIOLockedValueBox(State.waiting(nil))

    func fulfil(with result: Result<Int, any Error>) {
        let waiter: CheckedContinuation<Int, any Error>? = state.withLockedValue { state in
            guard case .waiting(let continuation) = state else { return nil }
            state = .done(result)
            return continuation
        }
        waiter?.resume(with: result)
    }

    var value: Int {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<Int, any Error>? = state.withLockedValue { state in
                    if case .done(let result) = state { return result }
                    state = .waiting(continuation)
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}

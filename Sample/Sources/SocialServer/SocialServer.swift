import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers

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
    private let task: Task<Void, any Error>

    /// The server's address, `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(faults: FaultBoard, arrivals: ArrivalLog, port: Int, task: Task<Void, any Error>) {
        self.faults = faults
        self.arrivals = arrivals
        self.port = port
        self.task = task
    }

    /// Starts a server on 127.0.0.1 and returns once it accepts connections.
    public static func start(port: Int = 0) async throws -> SocialServer {
        let faults = FaultBoard()
        let arrivals = ArrivalLog()
        let router = SocialRoutes(store: SocialStore(), faults: faults, arrivals: arrivals).router()
        let bound = PortPromise()
        var logger = Logger(label: "SocialServer")
        // Stopping cancels the server, which Hummingbird reports as errors: keep them quiet.
        logger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "SocialServer"),
            onServerRunning: { channel in bound.fulfil(with: .success(channel.localAddress?.port ?? 0)) },
            logger: logger
        )
        let task = Task {
            do {
                try await app.runService(gracefulShutdownSignals: [])
            } catch {
                bound.fulfil(with: .failure(error))
                throw error
            }
        }
        let port = try await bound.value
        return SocialServer(faults: faults, arrivals: arrivals, port: port, task: task)
    }

    /// Stops the server and waits until it has.
    public func stop() async {
        task.cancel()
        _ = await task.result
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

import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// A Hummingbird router served on 127.0.0.1, at a port chosen at run time unless given: what
/// the Sample's servers (the social API and the gateway in front of it) run on.
package final class LoopbackHTTPServer: Sendable {
    /// The port it listens on.
    package let port: Int
    /// `http`, or `https` for a server over TLS.
    package let scheme: String
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// `http://127.0.0.1:PORT`, or `https://` for a server over TLS.
    package var baseURL: URL { URL(string: "\(scheme)://127.0.0.1:\(port)")! }

    /// Serves `router` on 127.0.0.1:`port` (0 for any free port) over `server`'s protocol
    /// (HTTP/1.1 unless a test gives HTTP/2 over TLS, `isTLS`); returns once it listens.
    package static func start<Routes: HTTPResponderBuilder>(
        _ router: Routes, port: Int = 0, name: String, server: HTTPServerBuilder = .http1(), isTLS: Bool = false
    ) async throws -> LoopbackHTTPServer
    where Routes.Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
        let bound = PortPromise()
        var logger = Logger(label: name)
        // Connections cut by a stop are reported as errors: keep them quiet.
        logger.logLevel = .critical
        let app = Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: name),
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
        return LoopbackHTTPServer(port: try await bound.value, scheme: isTLS ? "https" : "http", group: group, task: task)
    }

    private init(port: Int, scheme: String, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.scheme = scheme
        self.group = group
        self.task = task
    }

    /// Stops serving and waits until it has: no new connection is accepted, the requests in
    /// progress are answered, and the connections close. A graceful shutdown, because
    /// cancelling the serving task traps in SwiftNIO when a connection was accepted but not yet
    /// served ("Deinited NIOAsyncWriter without calling finish()"; apple/swift-nio#3481).
    package func stop() async {
        await group.triggerGracefulShutdown()
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

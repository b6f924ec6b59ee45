import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NIOCore
import NIOHTTP1

/// A transport over AsyncHTTPClient (SwiftNIO): for servers on Linux, where it runs requests
/// several times faster than FoundationNetworking, and for any server you do not trust.
///
/// - **Budget**: the scheduler starts at most ``maximumConnectionsPerHost`` requests per host,
///   the client's own connection limit, so no request waits inside the client in no useful
///   order. Over HTTP/2 (which the client negotiates with a server that offers it over TLS)
///   they share one connection.
/// - **Deadlines and cancellation**: each request runs under its own deadline, to the
///   nanosecond (FoundationNetworking's are whole seconds of idle time), and the scheduler's
///   cancellation cancels the client's request, which closes its HTTP/1 connection.
/// - **Redirects** are followed here, under each request's ``TransportPolicy/Redirects``: a `Location` that
///   does not make an http(s) URL with a plain host is refused as
///   ``ServiceError/badServerResponse(_:)``, and one to another origin drops the credentials and
///   the client's headers.
/// - **Size**: compressed bodies are inflated with a limit, and the body is read under the
///   request's size limit (a `Content-Length` past it fails at once, a body that grows past it
///   as soon as it does), so a gzip bomb costs about the limit in memory.
///
/// ## Lifecycle
/// A transport made with ``init(maximumConnectionsPerHost:maximumInflatedSize:)`` owns its
/// client: ``shutdown()`` shuts it down, and so does the transport's deinitialisation, should
/// you forget. A transport over a client you give it, with ``init(client:maximumConnectionsPerHost:)``,
/// leaves that client to you: shut it down after the last scheduler using it is done.
///
/// ## Threading
/// Requests run on the client's event loops, as the client's own tasks (no Swift task per
/// request); their completions leave the loops for a Dispatch queue, so that the scheduler's
/// work for one answer never holds up the others, and the scheduler hands results to callers
/// on their callback queues. The transport is `Sendable` and holds
/// no state of its own: one transport may serve many schedulers.
///
/// ```swift
/// let transport = AsyncHTTPClientTransport(maximumConnectionsPerHost: 16)
/// let scheduler = RequestScheduler { $0.transport = transport }
/// …
/// try await transport.shutdown()
/// ```
public final class AsyncHTTPClientTransport: HTTPTransport {
    /// The client that sends the requests.
    public let client: HTTPClient
    /// How many requests to one host the scheduler starts at once: the client's connection
    /// limit per host.
    public let maximumConnectionsPerHost: Int
    /// Whether the transport made its client, and so shuts it down.
    private let ownsClient: Bool
    /// Open until ``shutdown()``: the schedulers using the transport end their callers when it
    /// closes, and a request sent afterwards ends with `ServiceError.transportClosed`.
    public let lifecycle = TransportLifecycle()

    /// Redirects one request follows at most, as browsers do.
    static let maximumRedirects = 20

    /// A transport over a client of its own, on the shared event loop group, which
    /// ``shutdown()`` (or the transport's deinitialisation) shuts down.
    ///
    /// - Parameters:
    ///   - maximumConnectionsPerHost: the connections it keeps per host, and so the budget.
    ///   - maximumInflatedSize: the most bytes any compressed body may inflate to, whatever
    ///     its request's own limit (which is checked too, as the body is read).
    public convenience init(maximumConnectionsPerHost: Int = 8, maximumInflatedSize: Int = 256 * 1_024 * 1_024) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            decompression: .enabled(limit: .size(maximumInflatedSize))
        )
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = maximumConnectionsPerHost
        self.init(client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration),
                  maximumConnectionsPerHost: maximumConnectionsPerHost, ownsClient: true)
    }

    /// A transport over `client`, which you shut down when you are done with it.
    ///
    /// - Parameters:
    ///   - client: a client that does not follow redirects itself (`redirectConfiguration:
    ///     .disallow`): the transport does, under each request's policy.
    ///   - maximumConnectionsPerHost: the client's `concurrentHTTP1ConnectionsPerHostSoftLimit`
    ///     (8 unless you changed it): the scheduler's budget per host.
    public convenience init(client: HTTPClient, maximumConnectionsPerHost: Int = 8) {
        self.init(client: client, maximumConnectionsPerHost: maximumConnectionsPerHost, ownsClient: false)
    }

    private init(client: HTTPClient, maximumConnectionsPerHost: Int, ownsClient: Bool) {
        self.client = client
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
        self.ownsClient = ownsClient
    }

    deinit {
        // The client keeps itself alive until it is shut down.
        if ownsClient { _ = client.shutdown() }
    }

    /// Shuts down the client the transport made: every scheduler using the transport ends the
    /// callers it holds (waiting, backing off or on the wire) with `ServiceError.cancelled`,
    /// and a request sent afterwards ends with `ServiceError.transportClosed`. A client you gave
    /// it is yours to shut down, and this does nothing.
    public func shutdown() async throws {
        guard ownsClient else { return }
        lifecycle.close()
        try await client.shutdown()
    }

    /// Sends `request` as a task of the client's own; a body file is read from disk a chunk at
    /// a time as the connection takes it.
    ///
    /// - Parameters:
    ///   - request: the request to send.
    ///   - policy: the redirects to follow, the response size limit and the priority.
    ///   - progress: told how much of the body has gone out; nil when nobody asked.
    ///   - completion: called exactly once with the response or the error, on a Dispatch queue
    ///     (never on the client's event loops).
    public func startTask(
        for request: TransportRequest,
        policy: TransportPolicy,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        // The whole exchange, redirects included, as the scheduler's own attempt deadline; but
        // a transfer (an upload from a file, a download to one) has a deadline on stalling,
        // which the scheduler keeps and moves as the body goes (it cancels the task then).
        guard !lifecycle.isClosed else {
            completion(.failure(ServiceError.transportClosed))
            return Unsent()
        }
        let timeout = request.timeoutInterval > 0 ? request.timeoutInterval : 3_600
        let isTransfer = request.bodyFile != nil || request.responseSink != nil
        let deadline: NIODeadline? = isTransfer ? nil : .now() + .nanoseconds(Int64(timeout * 1_000_000_000))
        let exchange = Exchange(client: client, policy: policy, deadline: deadline, progress: progress, completion: completion)
        exchange.send(request, redirectsLeft: Self.maximumRedirects)
        return exchange
    }
}

extension AsyncHTTPClientTransport {
    /// What a shut-down transport returns for a request it did not send: nothing to cancel.
    struct Unsent: TransportTask {
        func cancel() {}
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response as it came off the wire.
public struct TransportResponse: Sendable {
    /// The body, empty when the server sent none.
    public let data: Data
    /// The status line and headers.
    public let response: HTTPURLResponse

    /// A response with its body.
    public init(data: Data, response: HTTPURLResponse) {
        self.data = data
        self.response = response
    }
}

/// A task started by a transport, which the scheduler may cancel.
public protocol TransportTask: Sendable {
    /// Stops the task; its completion then reports `URLError.cancelled`.
    func cancel()
}

/// What sends one request over the network. ``URLSessionTransport`` is the default; tests plug
/// in a stub behind the same protocol.
public protocol HTTPTransport: Sendable {
    /// How many requests to one host this transport runs at once. The scheduler never starts
    /// more, because a task resumed beyond it waits inside the transport in no useful order.
    var maximumConnectionsPerHost: Int { get }

    /// Starts sending `request` and calls `completion` exactly once, on any thread.
    func startTask(
        for request: URLRequest,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask
}

/// The default transport: a `URLSession` data task per request.
///
/// On Linux it never sends through a session with a `URLCache`. FoundationNetworking looks a
/// task up in the cache on another queue before it starts loading, and a task cancelled in that
/// window reports its failure after it has left the session's registry, which traps the process
/// ("Trying to access a behaviour for a task that in not in the registry"): 200 tasks cancelled
/// as they start were enough, every time. The scheduler cancels a running task whenever its
/// last caller leaves, so a session with a cache (`.default` and `.ephemeral` both have one
/// there) is replaced by one with the same configuration, delegate and delegate queue, without
/// the cache. Pass a session whose `urlCache` is nil to have it used as it is (and to be the
/// one that invalidates it: the transport has no end of life to invalidate a copy).
public struct URLSessionTransport: HTTPTransport {
    /// The session that runs the tasks: the one given, or on Linux its copy without a cache.
    public let session: URLSession

    /// A transport over `session`; the shared session by default (on Linux, a shared one
    /// without a cache).
    public init(session: URLSession = .shared) {
        #if canImport(FoundationNetworking)
        self.session = session === URLSession.shared ? Self.sharedWithoutCache : Self.withoutCache(session)
        #else
        self.session = session
        #endif
    }

    /// The session's `httpMaximumConnectionsPerHost`; on Linux, at most 4.
    ///
    /// FoundationNetworking runs tasks on libcurl, which keeps at most four idle connections
    /// per transfer in progress in the session: when a transfer ends while fewer run, it closes
    /// the oldest idle connection, and the next transfer opens a new one. Six at once to one
    /// host made hundreds of connections per 10,000 requests; four never lose theirs.
    public var maximumConnectionsPerHost: Int {
        #if canImport(FoundationNetworking)
        min(session.configuration.httpMaximumConnectionsPerHost, Self.connectionsKeptPerTransfer)
        #else
        session.configuration.httpMaximumConnectionsPerHost
        #endif
    }

    /// The idle connections libcurl keeps per transfer in progress (its connection cache is
    /// four times the number of transfers, unless the multi handle sets `MAXCONNECTS`, which
    /// FoundationNetworking does not).
    static let connectionsKeptPerTransfer = 4

    /// Creates and resumes a data task for `request`.
    public func startTask(
        for request: URLRequest,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        let task = session.dataTask(with: Self.prepared(request)) { data, response, error in
            if let error {
                completion(.failure(error))
            } else if let response = response as? HTTPURLResponse {
                completion(.success(TransportResponse(data: data ?? Data(), response: response)))
            } else {
                completion(.failure(URLError(.badServerResponse)))
            }
        }
        task.resume()
        return task
    }
}

extension URLSessionTransport {
    #if canImport(FoundationNetworking)
    /// `URLSession.shared`, but without its `URLCache`.
    private static let sharedWithoutCache = withoutCache(.shared)

    /// `session` if it has no `URLCache`; otherwise a session like it, without one.
    static func withoutCache(_ session: URLSession) -> URLSession {
        guard session.configuration.urlCache != nil,
              let configuration = session.configuration.copy() as? URLSessionConfiguration else { return session }
        configuration.urlCache = nil
        return URLSession(configuration: configuration, delegate: session.delegate, delegateQueue: session.delegateQueue)
    }
    #endif

    /// The request as this platform's URLSession needs it. FoundationNetworking hands libcurl
    /// the timeout in whole seconds, so 0.5 s would fire at once and 1.5 s at 1 s: round up.
    static func prepared(_ request: URLRequest) -> URLRequest {
        #if canImport(FoundationNetworking)
        let timeout = request.timeoutInterval
        guard timeout > 0, timeout.rounded(.up) != timeout else { return request }
        var rounded = request
        rounded.timeoutInterval = timeout.rounded(.up)
        return rounded
        #else
        return request
        #endif
    }
}

extension URLSessionTask: TransportTask {}

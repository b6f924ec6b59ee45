import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response as it came off the wire.
public struct TransportResponse: Sendable, Equatable {
    /// The body, empty when the server sent none.
    public let data: Data
    /// The status and headers.
    public let head: ResponseHead
    /// Set by the scheduler's cache when it answered, or had a hand in the answer.
    var cacheUse = CacheUse.none

    /// A response with its body.
    ///
    /// - Parameters:
    ///   - data: the body.
    ///   - head: the status and headers.
    public init(data: Data, head: ResponseHead) {
        self.data = data
        self.head = head
    }

    /// A response with its body, as URLSession reads one.
    ///
    /// - Parameters:
    ///   - data: the body.
    ///   - response: the status and headers.
    public init(data: Data, response: HTTPURLResponse) {
        self.init(data: data, head: ResponseHead(response))
    }

    /// The response's status code.
    public var statusCode: Int { head.statusCode }
}

/// A task started by a transport, which the scheduler may cancel.
public protocol TransportTask: Sendable {
    /// Stops the task; its completion then reports `URLError.cancelled`.
    func cancel()

    /// Tells the task how urgent its request now is: its call's callers changed their
    /// priorities while it ran. A hint, which a transport may ignore (the default does).
    ///
    /// - Parameter priority: the priority its call now has.
    func reprioritize(to priority: RequestPriority)
}

extension TransportTask {
    /// Ignores the hint.
    ///
    /// - Parameter priority: the priority its call now has.
    public func reprioritize(to priority: RequestPriority) {}
}

/// What sends one request over the network. ``URLSessionTransport`` is the default; tests plug
/// in a stub behind the same protocol.
public protocol HTTPTransport: Sendable {
    /// How many requests to one host this transport runs at once. The scheduler never starts
    /// more, because a task resumed beyond it waits inside the transport in no useful order.
    var maximumConnectionsPerHost: Int { get }

    /// How many requests to a distant host (one whose quickest answer took 5 ms or more:
    /// across a network, not loopback) this transport runs at once; by default
    /// ``maximumConnectionsPerHost``. A transport that runs fewer than it could near by,
    /// because connections opened again between bursts cost more there than they carry,
    /// says its whole count here.
    var maximumConnectionsPerDistantHost: Int { get }

    /// Starts sending `request` under `policy` (its redirects and its response size limit), and
    /// calls `completion` exactly once, on any thread. The scheduler does not rely on that
    /// call to end the attempt: it ends it itself at its deadline.
    ///
    /// A body in ``TransportRequest/bodyFile`` is read from its file as it is sent, never whole
    /// into memory, and goes out with its length as `Content-Length`.
    ///
    /// - Parameters:
    ///   - request: the request to send.
    ///   - policy: the redirects to follow, the response size limit and the priority.
    ///   - progress: told how much of the body has gone out, as it goes, in order and before
    ///     `completion`, on any thread; nil when nobody asked.
    ///   - completion: called exactly once with the response or the error, on any thread.
    func startTask(
        for request: TransportRequest,
        policy: TransportPolicy,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask

    /// Whether it is open: a scheduler ends every caller it holds when it closes. A transport
    /// that can be shut down closes it first, and makes no task once it is closed (it completes
    /// a request with ``ServiceError/transportClosed`` instead).
    var lifecycle: TransportLifecycle { get }
}

extension HTTPTransport {
    /// A lifecycle of its own that nobody closes: for a transport that is never shut down.
    public var lifecycle: TransportLifecycle { TransportLifecycle() }
}

extension HTTPTransport {
    /// Starts sending `request`, whose body (if any) is in memory, without reporting progress.
    ///
    /// - Parameters:
    ///   - request: the request to send.
    ///   - policy: the redirects to follow, the response size limit and the priority.
    ///   - completion: called exactly once with the response or the error, on any thread.
    public func startTask(
        for request: URLRequest,
        policy: TransportPolicy = TransportPolicy(),
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        startTask(for: TransportRequest(request), policy: policy, progress: nil, completion: completion)
    }
}

extension HTTPTransport {
    /// ``maximumConnectionsPerHost``, at every distance.
    public var maximumConnectionsPerDistantHost: Int { maximumConnectionsPerHost }
}

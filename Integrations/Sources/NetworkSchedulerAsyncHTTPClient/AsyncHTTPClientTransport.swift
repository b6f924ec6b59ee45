import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NIOCore
import NIOHTTP1

/// A transport over AsyncHTTPClient (SwiftNIO), for servers on Linux and for any server you
/// do not trust.
///
/// It follows redirects itself, under each request's ``RedirectPolicy``: a `Location` that does
/// not make an http(s) URL with a plain host is refused as ``ServiceError/badServerResponse(_:)``
/// (FoundationNetworking traps the process on some, before any delegate is asked), and one to
/// another origin drops the credentials and the client's headers. It inflates compressed bodies
/// with a limit, and reads the body under the request's size limit with backpressure, so a gzip
/// bomb costs about the limit in memory (FoundationNetworking inflates it whole first).
///
/// ```swift
/// let transport = AsyncHTTPClientTransport()
/// let scheduler = RequestScheduler { $0.transport = transport }
/// …
/// try await transport.shutdown()
/// ```
public final class AsyncHTTPClientTransport: HTTPTransport {
    /// The client that sends the requests.
    public let client: HTTPClient
    /// How many requests to one host the scheduler starts at once.
    public let maximumConnectionsPerHost: Int

    /// Redirects one request follows at most, as browsers do.
    static let maximumRedirects = 20

    /// A transport over a client of its own, on the shared event loop group.
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
                  maximumConnectionsPerHost: maximumConnectionsPerHost)
    }

    /// A transport over `client`, which must not follow redirects itself
    /// (`redirectConfiguration: .disallow`): the transport does, under each request's policy.
    public init(client: HTTPClient, maximumConnectionsPerHost: Int = 8) {
        self.client = client
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
    }

    /// Shuts the client down; call it before the transport goes away.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    public func startTask(
        for request: URLRequest,
        policy: TransportPolicy,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        let task = Task {
            do {
                completion(.success(try await send(request, policy: policy)))
            } catch {
                completion(.failure(Self.mapped(error, limit: policy.maximumResponseSize)))
            }
        }
        return CancellableTask(task: task)
    }

    /// Sends `request`, following redirects as `policy` says, and reads the final body.
    private func send(_ request: URLRequest, policy: TransportPolicy) async throws -> TransportResponse {
        var current = request
        for _ in 0...Self.maximumRedirects {
            guard let url = current.url else { throw URLError(.badURL) }
            // The scheduler ends the attempt at its own deadline; this one only bounds the client.
            let timeout = current.timeoutInterval > 0 ? current.timeoutInterval + 1 : 3_600
            let response = try await client.execute(Self.clientRequest(current), deadline: .now() + .seconds(Int64(timeout.rounded(.up))))
            if let next = try Redirect.next(after: response, of: current, policy: policy) {
                current = next
                continue
            }
            let body = try await Self.read(response.body, limit: policy.maximumResponseSize)
            var headers: [String: String] = [:]
            for (name, value) in response.headers {
                headers[name] = headers[name].map { "\($0), \(value)" } ?? value
            }
            guard let httpResponse = HTTPURLResponse(url: url, statusCode: Int(response.status.code),
                                                     httpVersion: "HTTP/\(response.version.major).\(response.version.minor)",
                                                     headerFields: headers) else {
                throw URLError(.badServerResponse)
            }
            return TransportResponse(data: body, response: httpResponse)
        }
        throw URLError(.httpTooManyRedirects)
    }

    /// The body, chunk by chunk, until it passes `limit`.
    private static func read(_ body: HTTPClientResponse.Body, limit: Int) async throws -> Data {
        var data = Data()
        for try await chunk in body {
            guard data.count + chunk.readableBytes <= limit else { throw ServiceError.responseTooLarge(limit: limit) }
            data.append(contentsOf: chunk.readableBytesView)
        }
        return data
    }

    private static func clientRequest(_ request: URLRequest) -> HTTPClientRequest {
        var clientRequest = HTTPClientRequest(url: request.url?.absoluteString ?? "")
        clientRequest.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            clientRequest.headers.add(name: name, value: value)
        }
        if let body = request.httpBody {
            clientRequest.body = .bytes(ByteBuffer(bytes: body))
        }
        return clientRequest
    }
}

/// A task that cancellation of its Swift task stops.
private struct CancellableTask: TransportTask {
    let task: Task<Void, Never>

    func cancel() {
        task.cancel()
    }
}

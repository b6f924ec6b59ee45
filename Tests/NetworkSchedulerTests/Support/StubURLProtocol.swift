import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Answers requests inside URLSession, with no sockets. Each test registers its handler under a
/// host of its own, because tests run in parallel.
final class StubURLProtocol: URLProtocol {
    typealias Handler = @Sendable (URLRequest, Data?) -> StubResponse

    private static let handlers = Locked<[String: Handler]>([:])
    private static let stopped = Locked<[String: EventLog<Void>]>([:])

    /// Each time URLSession stopped loading a request to `host` (a cancellation).
    static func stops(of host: String) -> EventLog<Void> {
        stopped.withLock { stopped in
            if let log = stopped[host] { return log }
            let log = EventLog<Void>()
            stopped[host] = log
            return log
        }
    }

    /// A session configuration whose requests to `host` are answered by `handler`; without a
    /// `URLCache` unless `cached`.
    static func configuration(host: String, cached: Bool = false, handler: @escaping Handler) -> URLSessionConfiguration {
        handlers.withLock { $0[host] = handler }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubURLProtocol.self]
        if !cached { configuration.urlCache = nil }
        return configuration
    }

    /// A transport whose requests to `host` are answered by `handler`.
    static func transport(host: String, cached: Bool = false, handler: @escaping Handler) -> URLSessionTransport {
        URLSessionTransport(configuration: configuration(host: host, cached: cached, handler: handler))
    }

    /// A client of `https://HOST/v1` over a transport whose requests to `host` are answered by
    /// `handler`, and that transport, to invalidate.
    static func client(host: String, handler: @escaping Handler) -> (APIClient, URLSessionTransport) {
        let transport = transport(host: host, handler: handler)
        let scheduler = RequestScheduler(configuration: .init(transport: transport))
        return (APIClient(baseURL: URL(string: "https://\(host)/v1")!, scheduler: scheduler), transport)
    }

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host.map { host in handlers.withLock { $0[host] != nil } } ?? false
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url, let handler = Self.handlers.withLock({ $0[url.host ?? ""] }) else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        switch handler(request, Self.body(of: request)) {
        case let .respond(status, body, headers):
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers.dictionary)!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocol(self, didLoad: body)
            client?.urlProtocolDidFinishLoading(self)
        case let .streams(status, headers, chunks, then):
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers.dictionary)!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            for chunk in chunks { client?.urlProtocol(self, didLoad: chunk) }
            if then == nil { client?.urlProtocolDidFinishLoading(self) }
        case .fail(let error):
            client?.urlProtocol(self, didFailWithError: error)
        case .hold, .never, .delayed, .progress, .breaks:
            break // answered by cancellation: URLSession calls stopLoading
        }
    }

    override func stopLoading() {
        Self.stops(of: request.url?.host ?? "").append(())
    }

    /// A POST's body arrives as `httpBody` or as `httpBodyStream`, depending on the platform.
    private static func body(of request: URLRequest) -> Data? {
        if let body = request.httpBody { return body }
        guard let stream = request.httpBodyStream else { return nil }
        stream.open()
        defer { stream.close() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while stream.hasBytesAvailable {
            let read = stream.read(&buffer, maxLength: buffer.count)
            if read <= 0 { break }
            data.append(buffer, count: read)
        }
        return data
    }
}

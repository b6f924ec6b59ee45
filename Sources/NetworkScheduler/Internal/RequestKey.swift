import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What makes two requests the same call: compared in full, never by a digest that could collide.
/// ``PreparedRequest/key(_:)`` makes it.
///
/// A class, hashed once: a call and the registry share one key of a word each, instead of two
/// copies of its ~120 bytes, and a lookup hashes a word instead of the URL, body and headers.
final class RequestKey: Hashable, Sendable {
    private enum Identity: Hashable, Sendable {
        case request(method: String, url: String, body: Data?, headers: MeaningfulHeaders)
        case custom(String)
    }

    private let identity: Identity
    private let hash: Int

    private init(_ identity: Identity) {
        self.identity = identity
        hash = identity.hashValue
    }

    convenience init(method: String, url: String, body: Data?, headers: MeaningfulHeaders) {
        self.init(.request(method: method, url: url, body: body, headers: headers))
    }

    convenience init(custom key: String) {
        self.init(.custom(key))
    }

    static func == (lhs: RequestKey, rhs: RequestKey) -> Bool {
        lhs === rhs || (lhs.hash == rhs.hash && lhs.identity == rhs.identity)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}

/// The headers that change what a request means (the rest, such as User-Agent or tracing ids,
/// do not), whatever their spelling.
struct MeaningfulHeaders: Hashable, Sendable {
    var authorization: String?
    var accept: String?
    var contentType: String?
    var idempotencyKey: String?

    /// Found in a `URLRequest`'s headers.
    init(of request: URLRequest) {
        self.init(of: HeaderFields(request.allHTTPHeaderFields ?? [:]))
    }

    /// Found in headers, whatever their spelling.
    init(of headers: HeaderFields) {
        authorization = headers["authorization"]
        accept = headers["accept"]
        contentType = headers["content-type"]
        idempotencyKey = headers["idempotency-key"]
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What makes two requests the same call: compared in full, never by a digest that could collide.
/// ``PreparedRequest/key(_:)`` makes it.
struct RequestKey: Hashable, Sendable {
    private enum Identity: Hashable, Sendable {
        case request(method: String, url: String, body: Data?, headers: MeaningfulHeaders)
        case custom(String)
    }

    private let identity: Identity

    init(method: String, url: String, body: Data?, headers: MeaningfulHeaders) {
        identity = .request(method: method, url: url, body: body, headers: headers)
    }

    init(custom key: String) {
        identity = .custom(key)
    }
}

/// The headers that change what a request means (the rest, such as User-Agent or tracing ids,
/// do not), whatever their spelling.
struct MeaningfulHeaders: Hashable, Sendable {
    var authorization: String?
    var accept: String?
    var contentType: String?
    var idempotencyKey: String?

    /// Found in one pass over a `URLRequest`'s headers.
    init(of request: URLRequest) {
        guard let fields = request.allHTTPHeaderFields else { return }
        for (name, value) in fields {
            // Most names are ruled out by their length alone, without lowercasing them.
            switch name.utf8.count {
            case 13 where name.lowercased() == "authorization": authorization = value
            case 6 where name.lowercased() == "accept": accept = value
            case 12 where name.lowercased() == "content-type": contentType = value
            case 15 where name.lowercased() == "idempotency-key": idempotencyKey = value
            default: break
            }
        }
    }

    /// Looked up in headers whose names are already case-insensitive.
    init(of headers: HeaderFields) {
        authorization = headers[lowercased: "authorization"]
        accept = headers[lowercased: "accept"]
        contentType = headers[lowercased: "content-type"]
        idempotencyKey = headers[lowercased: "idempotency-key"]
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What makes two requests the same call: compared in full, never by a digest that could collide.
struct RequestKey: Hashable, Sendable {
    private enum Identity: Hashable, Sendable {
        case request(method: String, url: String, body: Data?, headers: MeaningfulHeaders)
        case custom(String)
    }

    private let identity: Identity

    /// The key for a request, or nil when it must not be shared.
    init?(_ request: URLRequest, headers: MeaningfulHeaders, deduplication: Deduplication) {
        switch deduplication {
        case .disabled:
            return nil
        case .key(let key):
            identity = .custom(key)
        case .automatic:
            // A streamed body cannot be compared, so such a request is never shared.
            guard let url = request.url, request.httpBodyStream == nil else { return nil }
            identity = .request(method: request.httpMethod ?? "GET", url: url.absoluteString,
                                body: request.httpBody, headers: headers)
        }
    }
}

/// The headers that change what a request means (the rest, such as User-Agent or tracing ids,
/// do not), found in one pass over the request's headers, whatever their spelling.
struct MeaningfulHeaders: Hashable, Sendable {
    var authorization: String?
    var accept: String?
    var contentType: String?
    var idempotencyKey: String?

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
}

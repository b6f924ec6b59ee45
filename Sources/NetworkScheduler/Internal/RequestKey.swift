import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What makes two requests the same call: compared in full, never by a digest that could collide.
struct RequestKey: Hashable, Sendable {
    private enum Identity: Hashable, Sendable {
        case request(method: String, url: String, body: Data?, headers: [String?])
        case custom(String)
    }

    private let identity: Identity

    /// Headers that change what a request means; the rest (User-Agent, tracing ids) do not.
    static let meaningfulHeaders = ["Authorization", "Accept", "Content-Type", "Idempotency-Key"]

    /// The key for a request, or nil when it must not be shared.
    init?(_ request: URLRequest, deduplication: Deduplication) {
        switch deduplication {
        case .disabled:
            return nil
        case .key(let key):
            identity = .custom(key)
        case .automatic:
            // A streamed body cannot be compared, so such a request is never shared.
            guard let url = request.url, request.httpBodyStream == nil else { return nil }
            identity = .request(
                method: request.httpMethod ?? "GET",
                url: url.absoluteString,
                body: request.httpBody,
                headers: Self.meaningfulHeaders.map { request.value(forHTTPHeaderField: $0) }
            )
        }
    }
}

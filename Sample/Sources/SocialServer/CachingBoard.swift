import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// What the server says about caching its answers, per route: the `Cache-Control` a cacheable
/// route sends with an `ETag`, and a 304 when a request's `If-None-Match` names that `ETag`.
/// Tests change it to make an answer stale at once, or allowed to be served stale.
public final class CachingBoard: Sendable {
    /// A profile is one user's; a user's public card and a post are anyone's, for a minute.
    public static let defaults: [Route: String] = [.me: "private, max-age=60", .user: "max-age=60", .post: "max-age=60"]

    private let controls = NIOLockedValueBox(CachingBoard.defaults)

    /// The `Cache-Control` of `route`'s answers; nil for a route whose answers say nothing of caching.
    public subscript(route: Route) -> String? {
        get { controls.withLockedValue { $0[route] } }
        set { controls.withLockedValue { $0[route] = newValue } }
    }
}

extension Reply {
    /// `value` as JSON with `route`'s `Cache-Control` and an `ETag` of its bytes; a 304 without
    /// a body when the request's `If-None-Match` names that `ETag`.
    static func cacheable(_ value: some Encodable, route: Route, request: Request, caching: CachingBoard) -> Response {
        // Keys sorted: the same value must give the same bytes, and so the same ETag (a
        // dictionary's order changes from one encoding to the next).
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        var response = raw(body, status: .ok, contentType: "application/json")
        guard let control = caching[route] else { return response }
        let tag = "\"\(String(body.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }, radix: 16))\""
        if let asked = request.headers[.ifNoneMatch], asked.split(separator: ",").contains(where: {
            $0.trimmingCharacters(in: .whitespaces) == tag
        }) {
            response = Response(status: .notModified)
        }
        response.headers[.eTag] = tag
        response.headers[.cacheControl] = control
        return response
    }
}

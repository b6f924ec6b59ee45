import Foundation

/// What makes two requests the same call: compared in full, never by a digest that could collide.
/// ``PreparedRequest/key(_:)`` makes it.
///
/// A class, hashed once: a call keeps its key in one word, and the ``CallRegistry`` files the
/// call under the key's `hash`, so that no lookup hashes the URL, body and headers again. It
/// keeps the request's own strings, body and header dictionary (shared, not copied) and reads
/// the meaningful headers from them.
final class RequestKey: Equatable, Sendable {
    private enum Identity: Sendable {
        case request(method: String, url: String, body: Data?, headers: HeaderFields)
        case custom(String)
    }

    /// The headers that change what a request means (the rest, such as User-Agent or tracing
    /// ids, do not), whatever their spelling.
    private static let meaningfulHeaders = ["authorization", "accept", "content-type", "idempotency-key"]

    private let identity: Identity
    /// Made once, from what the key compares.
    let hash: Int

    init(method: String, url: String, body: Data?, headers: HeaderFields) {
        identity = .request(method: method, url: url, body: body, headers: headers)
        var hasher = Hasher()
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(body)
        for name in Self.meaningfulHeaders { hasher.combine(headers[name]) }
        hash = hasher.finalize()
    }

    convenience init(custom key: String) {
        self.init(custom: key, hash: key.hashValue)
    }

    /// A custom key with the hash given: for tests of keys whose hashes collide.
    init(custom key: String, hash: Int) {
        identity = .custom(key)
        self.hash = hash
    }

    static func == (lhs: RequestKey, rhs: RequestKey) -> Bool {
        guard lhs !== rhs else { return true }
        guard lhs.hash == rhs.hash else { return false }
        switch (lhs.identity, rhs.identity) {
        case let (.request(method, url, body, headers), .request(otherMethod, otherURL, otherBody, otherHeaders)):
            return method == otherMethod && url == otherURL && body == otherBody
                && meaningfulHeaders.allSatisfy { headers[$0] == otherHeaders[$0] }
        case let (.custom(key), .custom(otherKey)):
            return key == otherKey
        default:
            return false
        }
    }
}

import Foundation

/// What makes two requests the same call (``RequestIdentity``): compared in full, never by a
/// digest that could collide. ``PreparedRequest/key(_:ignoring:adapter:destination:)`` makes it.
///
/// Every header counts, whatever its spelling, except the few that never change the answer
/// (``RequestScheduler/Configuration-swift.struct/headersIgnoredByDeduplication``): requests
/// of two users differ in their `Authorization` or `Cookie`, and one in `Accept-Language`,
/// `Range` or `If-None-Match` asks for another answer, so none of them share a call.
///
/// A class, hashed once: a call keeps its key in one word, and the machine's registry files
/// the call under the key's `hash`, so that no lookup hashes the URL, body and headers again. It
/// keeps the request's own strings, body and header dictionary (shared, not copied).
final class CallKey: Equatable, Sendable {
    private enum Identity: Sendable {
        case request(method: String, url: String, body: Data?, headers: HeaderFields, ignoring: HeaderNames,
                     adapter: ObjectIdentifier?)
        case custom(String)
    }

    private let identity: Identity
    /// Made once, from what the key compares.
    let hash: Int

    /// - Parameter adapter: the ``RequestAdapter`` that changes the request as it is sent, if
    ///   any: requests of different adapters may go out with different headers.
    init(method: String, url: String, body: Data?, headers: HeaderFields, ignoring ignored: HeaderNames,
         adapter: ObjectIdentifier? = nil) {
        identity = .request(method: method, url: url, body: body, headers: headers, ignoring: ignored, adapter: adapter)
        var hasher = Hasher()
        hasher.combine(adapter)
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(body)
        // Summed, so that the order of a dictionary's headers does not matter.
        var headersHash = 0
        for (name, value) in headers.dictionary where !ignored.contains(name) {
            var header = Hasher()
            for byte in name.utf8 { header.combine(HeaderFields.foldedCase(byte)) }
            header.combine(value)
            headersHash &+= header.finalize()
        }
        hasher.combine(headersHash)
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

    static func == (lhs: CallKey, rhs: CallKey) -> Bool {
        guard lhs !== rhs else { return true }
        guard lhs.hash == rhs.hash else { return false }
        switch (lhs.identity, rhs.identity) {
        case let (.request(method, url, body, headers, ignored, adapter),
                  .request(otherMethod, otherURL, otherBody, otherHeaders, _, otherAdapter)):
            return adapter == otherAdapter && method == otherMethod && url == otherURL && body == otherBody
                && sameHeaders(headers, otherHeaders, ignoring: ignored)
        case let (.custom(key), .custom(otherKey)):
            return key == otherKey
        default:
            return false
        }
    }

    /// Whether both have the same headers, but for the ignored ones.
    private static func sameHeaders(_ lhs: HeaderFields, _ rhs: HeaderFields, ignoring ignored: HeaderNames) -> Bool {
        var counted = 0
        for (name, value) in lhs.dictionary where !ignored.contains(name) {
            guard rhs[name] == value else { return false }
            counted += 1
        }
        return counted == rhs.dictionary.keys.count { !ignored.contains($0) }
    }
}

/// A set of header names, matched whatever their case, filed by length so that a lookup
/// compares a name with the few of its length only (and allocates nothing).
final class HeaderNames: Sendable {
    private let namesByLength: [Int: [String]]

    init(_ names: some Sequence<String>) {
        namesByLength = Dictionary(grouping: Set(names.map { $0.lowercased() }), by: \.utf8.count)
    }

    func contains(_ name: String) -> Bool {
        namesByLength[name.utf8.count]?.contains { HeaderFields.isSameName($0, name) } ?? false
    }
}

import Foundation

/// What makes two requests one call: the same ``RequestIdentity`` (and, for a download, the
/// same file to write), or the same key its resource gave, under the same ``CallTerms``.
/// ``PreparedRequest/key(_:ignoring:terms:destination:)`` makes it.
///
/// Hashed once, as it is made: the machine's registry files a call under the key's hash, so
/// that no lookup hashes the URL, body and headers again. A value, kept inline in its call.
struct CallKey: Hashable, Sendable {
    private enum Kind: Sendable {
        /// A download writes its file at `destination`: one call writes one file.
        case request(RequestIdentity, destination: String?)
        case custom(String)
    }

    private let kind: Kind
    /// What its callers accept: a resource's own key says which requests are the same, not
    /// which terms are.
    private let terms: CallTerms?
    /// Made once, from what the key compares.
    let hash: Int

    init(_ identity: RequestIdentity, terms: CallTerms? = nil, destination: URL? = nil) {
        let path = destination?.claimablePath
        kind = .request(identity, destination: path)
        self.terms = terms
        var hasher = Hasher()
        hasher.combine(identity.hash)
        hasher.combine(path)
        hasher.combine(terms)
        hash = hasher.finalize()
    }

    init(custom key: String, terms: CallTerms? = nil) {
        var hasher = Hasher()
        hasher.combine(key)
        hasher.combine(terms)
        self.init(custom: key, terms: terms, hash: hasher.finalize())
    }

    /// A custom key with the hash given: for tests of keys whose hashes collide.
    init(custom key: String, terms: CallTerms? = nil, hash: Int) {
        kind = .custom(key)
        self.terms = terms
        self.hash = hash
    }

    static func == (lhs: CallKey, rhs: CallKey) -> Bool {
        guard lhs.hash == rhs.hash, lhs.terms == rhs.terms else { return false }
        switch (lhs.kind, rhs.kind) {
        case let (.request(identity, destination), .request(otherIdentity, otherDestination)):
            return destination == otherDestination && identity.isSame(as: otherIdentity)
        case let (.custom(key), .custom(otherKey)):
            return key == otherKey
        default:
            return false
        }
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
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

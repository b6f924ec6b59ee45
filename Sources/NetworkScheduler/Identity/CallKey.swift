import Foundation

/// What makes two requests one call: the same ``RequestIdentity`` (and, for a download, the
/// same file to write), or the same key its resource gave. ``PreparedRequest/key(_:ignoring:destination:)``
/// makes it.
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
    /// Made once, from what the key compares.
    let hash: Int

    init(_ identity: RequestIdentity, destination: URL? = nil) {
        let path = destination?.standardizedFileURL.path
        kind = .request(identity, destination: path)
        var hasher = Hasher()
        hasher.combine(identity.hash)
        hasher.combine(path)
        hash = hasher.finalize()
    }

    init(custom key: String) {
        self.init(custom: key, hash: key.hashValue)
    }

    /// A custom key with the hash given: for tests of keys whose hashes collide.
    init(custom key: String, hash: Int) {
        kind = .custom(key)
        self.hash = hash
    }

    static func == (lhs: CallKey, rhs: CallKey) -> Bool {
        guard lhs.hash == rhs.hash else { return false }
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

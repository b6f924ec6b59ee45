import Foundation

/// What a stored answer is found by: its method and URL, and the credentials of whoever asked,
/// so that an answer to one user's token or cookies is never found with another's.
struct CacheKey: Hashable, Sendable {
    /// `GET` or `HEAD`.
    let method: String
    /// The absolute URL, without its fragment.
    let url: String
    /// The request's `Authorization`, `Proxy-Authorization` and `Cookie`, as sent; nil when it
    /// carried none. Kept in memory only: on disk it is a digest (``credentialDigest``).
    let credential: String?

    /// The fields whose values make an answer one user's.
    static let credentialFields = ["authorization", "proxy-authorization", "cookie"]

    /// The key of `request`; nil for a method the cache does not store.
    init?(_ request: PreparedRequest) {
        let method = request.method
        guard method == "GET" || method == "HEAD", let url = request.urlString else { return nil }
        self.method = method
        self.url = Self.withoutFragment(url)
        var credential: String?
        for name in Self.credentialFields {
            guard let value = request.header(name) else { continue }
            credential = (credential ?? "") + name + ":" + value + "\n"
        }
        self.credential = credential
    }

    init(method: String, url: String, credential: String?) {
        (self.method, self.url, self.credential) = (method, url, credential)
    }

    /// `url` as the cache names it: without its fragment, which never reaches a server.
    static func withoutFragment(_ url: String) -> String {
        // By its bytes: looking for a Character walks grapheme clusters, which cost a hit 0.5 µs.
        guard let fragment = url.utf8.firstIndex(of: UInt8(ascii: "#")) else { return url }
        return String(url[..<fragment])
    }

    /// The folder of `url`'s answers on disk, for any method and user: hashed, so that no URL
    /// or user shows in a file name.
    static func folderName(of url: String) -> String { SHA256.hex(url) }

    /// The credentials' SHA-256, which the disk keeps instead of the credentials themselves.
    var credentialDigest: String? { credential.map(SHA256.hex) }

    /// The folder of its URL's answers on disk.
    var folderName: String { Self.folderName(of: url) }

    /// The file of this method's and user's answer in ``folderName``.
    var fileName: String { SHA256.hex(method + "\n" + (credentialDigest ?? "")) }
}

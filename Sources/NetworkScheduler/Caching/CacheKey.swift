import Foundation

/// What a stored answer is found by: its method and URL, and the request's identity (who asked,
/// and for what), so that an answer to one user is never found with another's.
struct CacheKey: Hashable, Sendable {
    /// `GET` or `HEAD`.
    let method: String
    /// The absolute URL, without its fragment.
    let url: String
    /// Who asked (``RequestIdentity/whoAsked``): the headers that tell this request from others,
    /// and the identity its adapter stated, as text; nil when it carried none. Kept in memory only: on disk it is a digest (``identityDigest``).
    let identity: String?

    /// The key of `request`, from its ``RequestIdentity`` when it ignores `ignored`; nil for a
    /// method the cache does not store, or a request that has no identity (its adapter states none).
    init?(_ request: PreparedRequest, ignoring ignored: HeaderNames) {
        let method = request.method
        guard method == "GET" || method == "HEAD", let identity = RequestIdentity(request, ignoring: ignored) else {
            return nil
        }
        self.method = method
        url = Self.withoutFragment(identity.url)
        self.identity = identity.whoAsked
    }

    init(method: String, url: String, identity: String?) {
        (self.method, self.url, self.identity) = (method, url, identity)
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

    /// The identity's SHA-256, which the disk keeps instead of the headers themselves.
    var identityDigest: String? { identity.map(SHA256.hex) }

    /// The folder of its URL's answers on disk.
    var folderName: String { Self.folderName(of: url) }

    /// The file of this method's and user's answer in ``folderName``.
    var fileName: String { SHA256.hex(method + "\n" + (identityDigest ?? "")) }
}

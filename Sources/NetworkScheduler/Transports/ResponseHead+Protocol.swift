import Foundation

extension ResponseHead {
    /// What the answer came over, for its host's budget: HTTP/1.x, or a protocol that carries
    /// many answers over one connection (HTTP/2, HTTP/3, and URLSession's `h2`, `h2c`, `h3`).
    /// When its transport did not say (URLSession on Linux never does), what the answer shows
    /// (``shownProtocol``); nil when it said something else.
    var hostProtocol: HostProtocol? {
        guard let version = httpVersion else { return shownProtocol }
        if Self.version(version, startsWith: "http/1") { return .http1 }
        let multiplexed = Self.version(version, startsWith: "http/2") || Self.version(version, startsWith: "http/3")
            || Self.version(version, startsWith: "h2") || Self.version(version, startsWith: "h3")
        return multiplexed ? .multiplexed(maximumStreams: nil) : nil
    }

    /// What an answer whose transport did not name its protocol shows of it:
    /// - over cleartext `http`, HTTP/1.x: clients (libcurl, URLSession, AsyncHTTPClient) speak
    ///   HTTP/2 only where TLS's ALPN agreed on it;
    /// - over `https`, HTTP/1.x if it carries a field that belongs to one connection
    ///   (`Connection`, `Keep-Alive`, `Transfer-Encoding`, …), which HTTP/2 and HTTP/3 forbid
    ///   (RFC 9113 §8.2.2, RFC 9114 §4.2) and their clients reject; otherwise multiplexed, as
    ///   libcurl (under FoundationNetworking) and URLSession speak HTTP/2 wherever the server
    ///   offers it.
    ///
    /// An HTTPS server that speaks only HTTP/1.1 and sends none of those fields is taken for a
    /// multiplexed one: the transport then queues what its connections cannot carry yet, as
    /// it would with no scheduler, and the order of priorities holds only up to it.
    var shownProtocol: HostProtocol? {
        switch url.scheme?.lowercased() {
        case "http":
            return .http1
        case "https":
            let isHTTP1 = Self.fieldsOfOneConnection.contains { value(forHTTPHeaderField: $0) != nil }
            return isHTTP1 ? .http1 : .multiplexed(maximumStreams: nil)
        default:
            return nil
        }
    }

    /// ``hostProtocol``, for the budget of the host `requested` names, if the answer came from
    /// that host: one a redirect led elsewhere tells of the other host (an `http` URL sent on
    /// to `https` would otherwise make its cleartext host look multiplexed).
    ///
    /// - Parameter requested: the URL the attempt asked for, as text.
    func hostProtocol(answering requested: String?) -> HostProtocol? {
        guard let requested, comes(fromOriginOf: requested) else { return nil }
        return hostProtocol
    }

    /// Whether the answer came from the scheme, host and port of `requested`: at once when its
    /// URL is the one asked for (no redirect, which is most answers), else by their host keys.
    func comes(fromOriginOf requested: String) -> Bool {
        switch location {
        case .text(let text) where text == requested: true
        case .url(let answered) where answered.absoluteString == requested: true
        default: url.hostKey.map { $0 == URL(string: requested)?.hostKey } ?? false
        }
    }

    /// The fields that belong to one HTTP/1.x connection, which HTTP/2 and HTTP/3 forbid.
    private static let fieldsOfOneConnection = ["Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Proxy-Connection"]

    /// Whether `version` starts with `prefix`, whatever the case of its letters, without making
    /// a string (this is read for every answer).
    private static func version(_ version: String, startsWith prefix: StaticString) -> Bool {
        let prefix = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        var characters = version.utf8.makeIterator()
        for expected in prefix {
            guard let character = characters.next(), character | 0x20 == expected | 0x20 else { return false }
        }
        return true
    }
}

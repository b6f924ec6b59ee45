/// The one definition of "the same request, for the same user", which deduplication
/// (``CallKey``) and the cache (``CacheKey``) both use: the method, the absolute URL, the body,
/// and every header as the request goes on the wire but those of a short list that never tells
/// users apart (``RequestScheduler/Configuration-swift.struct/headersIgnoredByDeduplication``:
/// tracing and request IDs, `User-Agent`).
///
/// What goes on the wire is what the scheduler sees: a client's default headers and token are
/// in the request before it is matched; the transports keep no cookie store of their own (a
/// `URLSessionTransport`'s session sets no cookies), so a cookie is a `Cookie` header the
/// identity counts; and a request that a ``RequestAdapter`` changes as it is sent shares a
/// call only with requests of the same adapter, and is not cached, since who it is for is
/// known only once it has gone.
enum RequestIdentity {
    /// The request's own directives to a cache (RFC 9111 §5.2.1): they say how to answer, not
    /// for whom, so the cache does not count them (deduplication does: such a request asks for
    /// another answer than a plain one in flight).
    static let cacheDirectives = ["cache-control", "pragma"]

    /// The headers that count, but for `ignored`, as lines `name:value` sorted by their
    /// lowercased name; nil when none counts.
    static func text(of headers: [String: String], ignoring ignored: HeaderNames) -> String? {
        let lines = headers.compactMap { name, value in ignored.contains(name) ? nil : name.lowercased() + ":" + value }
        return lines.isEmpty ? nil : lines.sorted().joined(separator: "\n")
    }
}

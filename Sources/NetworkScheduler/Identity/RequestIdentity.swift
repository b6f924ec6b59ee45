import Foundation

/// The one definition of "the same request, for the same user": two requests are the same
/// exactly when they would put the same method, URL, header fields and body on the wire, for
/// the same credentials. Deduplication (``CallKey``) and the cache (``CacheKey``) are both made
/// from it, and the outbox's "same write" is the same bytes (``CanonicalJSON``).
///
/// - The request is the one that goes on the wire: the client's default headers, token and
///   context fields are in it; the transports keep no cookie store of their own, so a cookie is
///   a `Cookie` header, which counts.
/// - Every header counts, whatever its case and the order of different names (a repeated
///   name's values in their order, as the wire has them), but those of a short list that never
///   tells users apart nor changes the answer
///   (``RequestScheduler/Configuration-swift.struct/headersIgnoredByDeduplication``: tracing and
///   request IDs, `User-Agent`); a credential header
///   (``RequestScheduler/Configuration-swift.struct/credentialHeaders``) counts even if the app
///   lists it there.
/// - The body counts by value: the bytes in memory (a JSON value is written in one order
///   whatever its sets' and dictionaries', by the app's own encoder), a file by its content's
///   SHA-256.
/// - A ``RequestAdapter`` adds what it adds only as the request goes, so a request it adapts
///   counts the adapter and the identity it states (the current user's ID, say), read as the
///   request is built; one that states none is the same as no other request.
///
/// Compared in full, never by a digest that could collide: the headers and body are kept (shared
/// with the request, not copied), and hashed once.
struct RequestIdentity: Sendable {
    let method: String
    /// The absolute URL, as sent.
    let url: String
    /// The headers as the request has them; those in `ignored` do not count.
    let headers: HeaderFields
    let ignored: HeaderNames
    /// The body's identity (``RequestBody/identity``), if it has one.
    let body: Data?
    /// The adapter that changes the request as it goes, and who it says it adapts for.
    let adaptation: PreparedRequest.Adaptation?
    /// Made once, from all of the above.
    let hash: Int

    /// The identity of `request`, or nil when nothing can be the same request: its body is a
    /// stream that cannot be compared, or its adapter states no identity.
    init?(_ request: PreparedRequest, ignoring ignored: HeaderNames) {
        guard request.adaptation?.identity != .unstated, let url = request.urlString,
              let body = request.bodyIdentity else { return nil }
        self.init(method: request.method, url: url, headers: request.headerFields, ignored: ignored, body: body,
                  adaptation: request.adaptation)
    }

    init(method: String, url: String, headers: HeaderFields, ignored: HeaderNames, body: Data?,
         adaptation: PreparedRequest.Adaptation? = nil) {
        (self.method, self.url, self.headers, self.ignored, self.body, self.adaptation) =
            (method, url, headers, ignored, body, adaptation)
        var hasher = Hasher()
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(body)
        hasher.combine(adaptation)
        hasher.combine(headers.orderlessHash(ignoring: ignored.contains))
        hash = hasher.finalize()
    }

    /// Whether both are the same request for the same user. `other`'s ignored headers are
    /// taken to be these (one scheduler's).
    func isSame(as other: RequestIdentity) -> Bool {
        hash == other.hash && method == other.method && url == other.url && adaptation == other.adaptation
            && body == other.body && sameHeaders(as: other)
    }

    private func sameHeaders(as other: RequestIdentity) -> Bool {
        headers.isSame(as: other.headers, ignoring: ignored.contains)
    }

    /// Who asked, as text a cache can keep: the counted headers as lines `name:value`, sorted
    /// by lowercased name (a repeated name's values in their order), and the identity the
    /// adapter stated; nil when there is none of it.
    /// (The adapter itself lives only as long as its process, so a stored answer is kept by the
    /// identity it stated.)
    var whoAsked: String? {
        var lines = headers.enumerated().compactMap { place, field in
            ignored.contains(field.name) ? nil : (name: field.name.lowercased(), place: place, value: field.value)
        }
        .sorted { ($0.name, $0.place) < ($1.name, $1.place) }
        .map { $0.name + ":" + $0.value }
        if case .stated(let identity)? = adaptation?.identity { lines.append("\u{0}adapted for:" + identity) }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    /// The request's own directives to a cache (RFC 9111 §5.2.1): they say how to answer, not
    /// for whom, so the cache does not count them (deduplication does: such a request asks for
    /// another answer than a plain one in flight).
    static let cacheDirectives = ["cache-control", "pragma"]

    /// The header names that never count, from the configuration's list less the credential
    /// headers, which always do.
    static func ignoredNames(_ configured: Set<String>, credentials: Set<String>) -> Set<String> {
        let credentialNames = Set(credentials.map { $0.lowercased() })
        return configured.filter { !credentialNames.contains($0.lowercased()) }
    }
}

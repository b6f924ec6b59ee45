import Foundation

/// An answer as the cache keeps it: immutable, with what its freshness needs read once when it
/// is stored, so that a hit costs arithmetic, not parsing.
final class CachedResponse: Sendable {
    let key: CacheKey
    /// The URL that answered, after redirects.
    let url: URL
    let statusCode: Int
    /// Its fields, without those that describe one connection.
    let fields: HeaderFields
    let body: Data
    /// When the request that brought it was sent, and when the answer arrived (§4.2.3).
    let requested: Date
    let received: Date
    /// For each field its `Vary` names (lowercased), the value the request had, or nil if it
    /// had none.
    let varied: [String: String?]

    let control: CacheControl
    let freshness: CacheFreshness
    /// Its age when it arrived (§4.2.3's corrected initial age).
    let initialAge: TimeInterval

    /// Fields that describe one connection or one transfer, never stored (§3.1).
    static let unstoredFields: Set<String> = ["connection", "keep-alive", "proxy-connection", "te", "trailer",
                                             "transfer-encoding", "upgrade", "proxy-authenticate"]
    /// Fields a 304 does not replace (§3.2): they describe the stored body.
    static let keptOn304: Set<String> = ["content-length", "content-encoding", "content-range"]

    init(key: CacheKey, url: URL, statusCode: Int, fields: HeaderFields, body: Data,
         requested: Date, received: Date, varied: [String: String?]) {
        self.key = key
        self.url = url
        self.statusCode = statusCode
        let control = CacheControl(fields["cache-control"])
        // A `no-cache` or `private` that names fields keeps those fields out, and the rest may be
        // used (§5.2.2.4, §5.2.2.7).
        let named = ["no-cache", "private"].flatMap { (control.directives[$0] ?? nil)?.split(separator: ",") ?? [] }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        self.fields = HeaderFields(fields.filter { field in
            let name = field.name.lowercased()
            return !Self.unstoredFields.contains(name) && !named.contains(name)
        })
        self.body = body
        self.requested = requested
        self.received = received
        self.varied = varied
        self.control = control
        freshness = CacheFreshness(status: statusCode, fields: fields)
        initialAge = CacheFreshness.age(fields: fields, requested: requested, received: received, now: received)
    }

    /// The bytes it costs in a store, roughly.
    var cost: Int { body.count + fields.reduce(256) { $0 + $1.name.utf8.count + $1.value.utf8.count } }

    /// Its age at `now`.
    func age(at now: Date) -> TimeInterval { initialAge + max(0, now.timeIntervalSince(received)) }

    /// Seconds past its freshness at `now`: negative while it is fresh.
    func staleness(at now: Date) -> TimeInterval { age(at: now) - freshness.lifetime }

    /// Whether it may be used without asking the server (§4.2), by its own directives alone:
    /// not with a `no-cache` that names no field.
    var mayServeUnchecked: Bool { control.directives["no-cache"] != .some(nil) }

    /// Whether a stale copy may be handed over at all (`must-revalidate` forbids it, §5.2.2.2).
    var mayServeStale: Bool { !control.has("must-revalidate") && mayServeUnchecked }

    var entityTag: String? { fields["etag"] }
    var lastModified: String? { fields["last-modified"] }
    var hasValidators: Bool { entityTag != nil || lastModified != nil }

    /// Whether a caller with `terms` may be given it, for a request to `asked`: it came through
    /// no redirect the caller would not follow, and is no larger than the caller's limit. The
    /// cache is keyed by the URL asked, so an answer a redirect led to is found by callers who
    /// would not have followed it.
    func isAllowed(by terms: CallTerms, asked: String) -> Bool {
        guard body.count <= terms.maximumResponseSize else { return false }
        let answered = CacheKey.withoutFragment(url.absoluteString)
        guard answered != asked else { return true }
        switch terms.redirects {
        case .follow: return true
        case .sameOrigin: return ResponseCache.isSameOrigin(url, asked)
        case .never: return false
        }
    }

    /// Whether `request` selects it: each field its `Vary` names has the value it had (§4.1).
    func isSelected(by request: PreparedRequest) -> Bool {
        varied.allSatisfy { name, value in Self.normalized(request.header(name)) == value }
    }

    /// The values of `request`'s fields that `varyField` names; nil for `Vary: *`, which
    /// nothing matches.
    static func varied(by varyField: String?, in request: PreparedRequest) -> [String: String?]? {
        guard let varyField else { return [:] }
        var varied: [String: String?] = [:]
        for name in varyField.split(separator: ",") {
            let name = name.trimmingCharacters(in: .whitespaces).lowercased()
            if name == "*" { return nil }
            if !name.isEmpty { varied[name] = normalized(request.header(name)) }
        }
        return varied
    }

    /// A field's value with its spaces around commas and at its ends taken away (§4.1 allows
    /// a cache to normalise what does not change meaning).
    private static func normalized(_ value: String?) -> String? {
        value.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ",") }
    }

    /// The answer as a caller gets it, with its `Age` (§5.1).
    func response(at now: Date) -> TransportResponse {
        var fields = fields
        fields["Age"] = String(Int(max(0, age(at: now)).rounded(.down)))
        return TransportResponse(data: key.method == "HEAD" ? Data() : body,
                                 head: ResponseHead(url: url, statusCode: statusCode, headerFields: fields))
    }

    /// This answer updated by a 304 to a request sent at `requested` (§4.3.4): its fields
    /// replaced by the 304's, but for its length and encoding; its body kept.
    func updated(by notModified: ResponseHead, requested: Date, received: Date) -> CachedResponse {
        var merged = fields
        // The 304 is the server's word now: an old Date or Age would make it look older.
        merged["date"] = nil
        merged["age"] = nil
        merged.merge(HeaderFields(notModified.headerFields.filter { !Self.keptOn304.contains($0.name.lowercased()) }))
        return CachedResponse(key: key, url: url, statusCode: statusCode, fields: merged, body: body,
                              requested: requested, received: received, varied: varied)
    }
}

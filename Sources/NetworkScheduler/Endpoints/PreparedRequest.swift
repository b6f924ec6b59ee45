import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request as the scheduler keeps it from `send` until its call starts.
///
/// On Linux a `URLRequest` costs about 1.2 KB in ten allocations (its URL alone ~430 bytes),
/// so a request an ``APIClient`` builds waits as its parts (method, URL string, headers,
/// body), which are all the dedup key needs, and becomes a `URLRequest` only when its call
/// gets a budget slot, on the operation's thread. A `URLRequest` a caller built itself is
/// kept as it is, so none of its other settings (cache policy, a body stream…) are lost.
struct PreparedRequest: Sendable, Equatable {
    /// A request by its parts, as a client makes it.
    struct Parts: Sendable, Equatable {
        var method: String
        /// An absolute URL that `URL(string:)` accepts.
        var url: String
        var headers: HeaderFields
        var body: RequestBody?
        var timeout: TimeInterval
    }

    private enum Form: Sendable, Equatable {
        case parts(Parts)
        case built(URLRequest)
    }

    /// The request in one immutable box, so that a copy (into its call, into the operation
    /// that sends it) retains one object, not each of its strings and its headers, which by
    /// then are cold in memory. A change makes a new box.
    private final class Storage: Sendable {
        let form: Form
        let host: String
        let cache: CacheContext?
        let adaptation: Adaptation?

        init(form: Form, host: String, cache: CacheContext? = nil, adaptation: Adaptation? = nil) {
            self.form = form
            self.host = host
            self.cache = cache
            self.adaptation = adaptation
        }
    }

    /// The ``RequestAdapter`` that changes the request as each attempt starts, and the identity
    /// it stated as the request was built: what the adapter will add counts in the request's
    /// identity by these, since it is not in the request yet.
    struct Adaptation: Sendable, Hashable {
        let adapter: ObjectIdentifier
        let identity: RequestAdapter.StatedIdentity
    }

    /// Who adapts it, if anything does.
    var adaptation: Adaptation? { storage.adaptation }

    /// The same request, adapted by `adapter` as each attempt starts, for `identity`: the one
    /// it states now unless given (a rebuilt request keeps the one its call was matched by).
    func adapted(by adapter: RequestAdapter, for identity: RequestAdapter.StatedIdentity? = nil) -> PreparedRequest {
        var request = self
        request.storage = Storage(form: form, host: host, cache: cache,
                                  adaptation: Adaptation(adapter: adapter.id, identity: identity ?? adapter.statedIdentity()))
        return request
    }

    /// What the scheduler's cache needs of the answer: where to store it, and the stored
    /// answer it was made conditional on (or that stands in for an outage).
    struct CacheContext: Sendable {
        let key: CacheKey
        let validating: CachedResponse?
        let policy: CachePolicy
    }

    /// Set when the cache sends it; nil when the cache leaves it alone.
    var cache: CacheContext? { storage.cache }

    /// Hands it to the cache: conditional on `validating`'s validators, if it has any.
    mutating func send(for cache: CacheContext) {
        var request = self
        if let stored = cache.validating {
            if let tag = stored.entityTag { request.setValue(tag, forHTTPHeaderField: "If-None-Match") }
            if let date = stored.lastModified { request.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        }
        storage = Storage(form: request.form, host: host, cache: cache, adaptation: adaptation)
    }

    private var storage: Storage
    private var form: Form { storage.form }
    /// The scheme, host and port, which name the budget and the waiting line the request uses.
    var host: String { storage.host }

    /// A request by its parts, for `host` (see `URL.hostKey`).
    init(_ parts: Parts, host: String) {
        storage = Storage(form: .parts(parts), host: host)
    }

    /// A request a caller built, kept as it is.
    init(_ request: URLRequest) {
        storage = Storage(form: .built(request), host: request.url?.hostKey ?? "")
    }

    /// A request a caller built, for the scheduler, which needs an absolute http(s) URL with
    /// a host, and a method and headers that cannot add lines to the request.
    static func checked(_ request: URLRequest) throws(ServiceError) -> PreparedRequest {
        try HTTPSyntax.checkScheme(request.url?.scheme)
        try HTTPSyntax.checkMethod(request.httpMethod ?? "GET")
        try HTTPSyntax.checkHeaders(HeaderFields(request.allHTTPHeaderFields ?? [:]))
        let prepared = PreparedRequest(request)
        guard !prepared.host.isEmpty else {
            throw .invalidRequest(reason: "\(request.url?.absoluteString ?? "a request without a URL") has no host")
        }
        return prepared
    }

    /// The `URLRequest` to send, with its body if that is in memory.
    var urlRequest: URLRequest {
        switch form {
        case .built(let request):
            return request
        case .parts(let parts):
            // `Parts.url` came from a valid URL, or was checked to need no escaping.
            var request = URLRequest(url: URL(string: parts.url)!)
            // Set, not passed to the initialiser: FoundationNetworking then ignores it and
            // applies the session's timeout (a 1 s request waited on a 1.5 s server).
            request.timeoutInterval = parts.timeout
            if parts.method != "GET" {
                // GET is a new request's method; setting it anyway costs two allocations on Linux.
                request.httpMethod = parts.method
            }
            request.allHTTPHeaderFields = parts.headers.dictionary
            request.httpBody = parts.body?.data
            return request
        }
    }

    /// The body an attempt starting now sends, if it is not in memory: a file measured now, or
    /// a form written to a temporary file. Nil for a body in memory, or none.
    func stagedBody() throws(ServiceError) -> RequestBody.Staged? {
        guard case .parts(let parts) = form, let body = parts.body, body.data == nil else { return nil }
        return try body.staged()
    }

    /// Why an attempt of it failed, if it is that its body file changed after it was made.
    var bodyFileChange: ServiceError? {
        guard case .parts(let parts) = form else { return nil }
        return parts.body?.fileChange
    }

    /// Whether it has a body to send.
    var hasBody: Bool {
        switch form {
        case .built(let request): request.httpBody != nil
        case .parts(let parts): parts.body != nil
        }
    }

    var method: String {
        switch form {
        case .built(let request): request.httpMethod ?? "GET"
        case .parts(let parts): parts.method
        }
    }

    /// Whether it is kept by its parts, as a client built it (not as a `URLRequest`).
    var isByParts: Bool {
        if case .parts = form { return true }
        return false
    }

    /// Its absolute URL, made on each read.
    var url: URL? {
        switch form {
        case .built(let request): request.url
        // `Parts.url` came from a valid URL, or was checked to need no escaping.
        case .parts(let parts): URL(string: parts.url)
        }
    }

    /// Its body, if that is in memory.
    var bodyInMemory: Data? {
        switch form {
        case .built(let request): request.httpBody
        case .parts(let parts): parts.body?.data
        }
    }

    /// Its absolute URL, as text.
    var urlString: String? {
        switch form {
        case .built(let request): request.url?.absoluteString
        case .parts(let parts): parts.url
        }
    }

    /// Seconds an attempt of it may take, from its start to its end.
    var timeout: TimeInterval {
        switch form {
        case .built(let request): request.timeoutInterval
        case .parts(let parts): parts.timeout
        }
    }

    /// The key that makes identical requests one call (``RequestIdentity``), or nil when it
    /// must not be shared. Its callers' `terms` count too, and a download's `destination`, so
    /// that one call writes one file.
    func key(_ deduplication: Deduplication, ignoring ignored: HeaderNames, terms: CallTerms? = nil,
             destination: URL? = nil) -> CallKey? {
        switch deduplication {
        case .disabled: nil
        case .key(let key): CallKey(custom: key, terms: terms)
        case .automatic: RequestIdentity(self, ignoring: ignored).map { CallKey($0, terms: terms, destination: destination) }
        }
    }

    /// What its body counts as in its identity (``RequestBody/identity``): `.some(nil)` for no
    /// body; nil for a body stream a caller built, which cannot be compared.
    var bodyIdentity: Data?? {
        switch form {
        case .built(let request): request.httpBodyStream == nil ? .some(request.httpBody) : nil
        case .parts(let parts): .some(parts.body?.identity)
        }
    }

    /// Its header fields.
    var headerFields: HeaderFields {
        switch form {
        case .built(let request): HeaderFields(request.allHTTPHeaderFields ?? [:])
        case .parts(let parts): parts.headers
        }
    }

    /// The value of the header `name`, whatever its spelling in the request.
    func header(_ name: String) -> String? {
        switch form {
        case .built(let request): request.value(forHTTPHeaderField: name)
        case .parts(let parts): parts.headers[name]
        }
    }

    mutating func setValue(_ value: String, forHTTPHeaderField name: String) {
        switch form {
        case .built(var request):
            request.setValue(value, forHTTPHeaderField: name)
            storage = Storage(form: .built(request), host: host, cache: cache, adaptation: adaptation)
        case .parts(var parts):
            parts.headers[name] = value
            storage = Storage(form: .parts(parts), host: host, cache: cache, adaptation: adaptation)
        }
    }

    /// The name alone of its host, in lower case (`api.example.com`), by which rate limits are
    /// set; nil if `host` has none.
    var hostName: String? {
        URL(string: host)?.host?.lowercased()
    }
}

extension PreparedRequest {
    /// The same request: the same host, and the same parts or `URLRequest`.
    static func == (lhs: PreparedRequest, rhs: PreparedRequest) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.host == rhs.host && lhs.form == rhs.form && lhs.adaptation == rhs.adaptation)
    }
}

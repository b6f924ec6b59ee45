import Foundation

// What the cache does with a request before it is sent, and with its answer after: the rules
// of RFC 9111 for a private cache, read beside the transport. The scheduler's machine never
// sees them; it sees a caller served, or a request sent.
extension ResponseCache {
    /// What to do with a request.
    enum Decision {
        /// Send it as if there were no cache: not a GET or HEAD, a range, a request the app
        /// made conditional itself, or ``CachePolicy/bypass``.
        case bypass
        /// Hand the caller this answer without a network call; with a revalidation in the
        /// background when the answer is stale and this caller claimed it.
        case serve(CachedResponse, CacheUse, revalidatesInBackground: Bool)
        /// Send it, made conditional on the stored answer if there is one with validators; the
        /// stored answer is merged with a 304, or stands in for an outage if it allows.
        case send(CacheKey, validating: CachedResponse?)
        /// ``CachePolicy/onlyCache`` found nothing.
        case notCached
    }

    /// Fields with which an app asks for part of an answer or makes its request conditional
    /// itself: the cache leaves such requests, and their answers, alone.
    private static let appConditionalFields = ["range", "if-none-match", "if-modified-since", "if-match",
                                               "if-unmodified-since", "if-range"]

    /// The answers that count as an outage for `stale-if-error` (RFC 5861 §4).
    private static let outageStatuses: Set<Int> = [500, 502, 503, 504]

    /// What to do with `request`, whose identity counts every header but `ignored`
    /// (``RequestIdentity``), for a caller whose `terms` say which stored answers it may have.
    func decide(for request: PreparedRequest, ignoring ignored: HeaderNames, policy: CachePolicy, terms: CallTerms,
                now: Date) -> Decision {
        guard policy != .bypass, let key = CacheKey(request, ignoring: ignored), !request.hasBody,
              !Self.appConditionalFields.contains(where: { request.header($0) != nil }) else {
            return policy == .onlyCache ? .notCached : .bypass
        }
        let asked = RequestDirectives(request)
        let found = policy.reads || policy == .revalidate
            ? stored(key).flatMap { $0.isSelected(by: request) && $0.isAllowed(by: terms, asked: key.url) ? $0 : nil } : nil
        switch policy {
        case .bypass, .reload:
            return .send(key, validating: nil)
        case .revalidate:
            // `immutable`: it will not change while fresh, so asking again is a round trip for nothing.
            if let found, found.control.has("immutable"), found.mayServeUnchecked, found.staleness(at: now) < 0 {
                return .serve(found, .fresh, revalidatesInBackground: false)
            }
            return .send(key, validating: found)
        case .onlyCache:
            return found.map { .serve($0, .onlyCache, revalidatesInBackground: false) } ?? .notCached
        case .useCache:
            guard let found else { return asked.onlyIfCached ? .notCached : .send(key, validating: nil) }
            let staleness = found.staleness(at: now)
            if found.mayServeUnchecked, !asked.noCache, staleness + asked.minFresh < 0,
               asked.maxAge.map({ found.age(at: now) <= $0 }) ?? true {
                return .serve(found, .fresh, revalidatesInBackground: false)
            }
            if asked.onlyIfCached { return .serve(found, .onlyCache, revalidatesInBackground: false) }
            if found.mayServeStale, !asked.noCache, let window = found.control.seconds("stale-while-revalidate"),
               staleness <= window {
                return .serve(found, .staleWhileRevalidating, revalidatesInBackground: claimRevalidation(of: key))
            }
            return .send(key, validating: found)
        }
    }

    /// The answer a caller gets for `outcome`, the result of `request` sent after `decision`,
    /// having stored what may be kept: a 304 merged into the stored answer, a new answer
    /// stored. An error, or an outage, is left as it is (see ``staleAnswer(after:validating:now:)``
    /// once no retry follows). An unsafe request that succeeded drops what is stored for its URL.
    func absorb(
        _ outcome: Result<TransportResponse, ServiceError>,
        of request: PreparedRequest,
        key: CacheKey,
        validating stored: CachedResponse?,
        policy: CachePolicy,
        requested: Date,
        now: Date
    ) -> Result<TransportResponse, ServiceError> {
        guard case .success(var response) = outcome, !Self.outageStatuses.contains(response.statusCode) else { return outcome }
        let asked = RequestDirectives(request)
        if response.statusCode == 304, let stored {
            let updated = stored.updated(by: response.head, requested: requested, received: now)
            if policy.stores, !asked.noStore, !updated.control.has("no-store") { store(updated) } else { remove(key) }
            response = updated.response(at: now)
            response.cacheUse = .revalidated
            return .success(response)
        }
        guard policy.stores else { return outcome }
        let fields = response.head.headerFields
        let control = CacheControl(fields["cache-control"])
        guard !asked.noStore, !control.has("no-store"), Self.isStorable(response, fields: fields, control: control),
              Self.isSameOrigin(response.head.url, key.url),
              let varied = CachedResponse.varied(by: fields["vary"], in: request) else {
            // What is stored stays: an answer not to be kept says nothing of the one before.
            return outcome
        }
        store(CachedResponse(key: key, url: response.head.url, statusCode: response.statusCode, fields: fields,
                             body: response.data, requested: requested, received: now, varied: varied))
        return outcome
    }

    /// What the callers get for `outcome`, a failure no retry follows, of a request that
    /// revalidated `stored`: that stored answer, if it allows serving stale after an error
    /// (`stale-if-error`, RFC 5861) and the failure is an outage (an error, or an outage status);
    /// `outcome` otherwise.
    static func staleAnswer(
        after outcome: Result<TransportResponse, ServiceError>,
        validating stored: CachedResponse?,
        now: Date
    ) -> Result<TransportResponse, ServiceError> {
        switch outcome {
        case .failure(.cancelled): return outcome
        case .success(let response) where !outageStatuses.contains(response.statusCode): return outcome
        case .success, .failure: break
        }
        guard let stored, stored.mayServeStale, let window = stored.control.seconds("stale-if-error"),
              stored.staleness(at: now) <= window else { return outcome }
        var stale = stored.response(at: now)
        stale.cacheUse = .staleAfterError
        return .success(stale)
    }

    /// After an unsafe request (anything but GET, HEAD, OPTIONS and TRACE) succeeded: drops
    /// what is stored for its URL, and for its `Location` and `Content-Location` on the same
    /// origin (§4.4).
    func invalidate(after response: TransportResponse, to request: PreparedRequest) {
        guard !["GET", "HEAD", "OPTIONS", "TRACE"].contains(request.method), (200..<400).contains(response.statusCode),
              let url = request.urlString else { return }
        var targets = [url]
        for field in ["location", "content-location"] {
            guard let value = response.head.value(forHTTPHeaderField: field),
                  let target = URL(string: value, relativeTo: URL(string: url))?.absoluteURL,
                  Self.isSameOrigin(target, url) else { continue }
            targets.append(target.absoluteString)
        }
        for target in targets { invalidate(url: CacheKey.withoutFragment(target)) }
    }

    /// Whether a private cache may keep a final answer (§3): one whose status is cacheable by
    /// default, or another with an explicit lifetime; not a partial answer, nor one that says
    /// nothing worth keeping (no lifetime, no validators, no `no-cache`).
    private static func isStorable(_ response: TransportResponse, fields: HeaderFields, control: CacheControl) -> Bool {
        let status = response.statusCode
        guard (200..<600).contains(status), status != 206, status != 304 else { return false }
        let isExplicit = control.seconds("max-age") != nil || fields["expires"] != nil
        guard CacheFreshness.heuristicallyCacheable.contains(status) || isExplicit || control.has("public") else { return false }
        return isExplicit || control.has("no-cache") || fields["etag"] != nil || fields["last-modified"] != nil
            || CacheFreshness(status: status, fields: fields).lifetime > 0
    }

    static func isSameOrigin(_ url: URL, _ other: String) -> Bool {
        guard let other = URL(string: other) else { return false }
        return url.hostKey == other.hostKey
    }
}

/// The request's own `Cache-Control` (§5.2.1), read only when it has one.
private struct RequestDirectives {
    var noCache = false
    var noStore = false
    var onlyIfCached = false
    var maxAge: TimeInterval?
    var minFresh: TimeInterval = 0

    init(_ request: PreparedRequest) {
        guard let field = request.header("cache-control") else {
            noCache = request.header("pragma")?.lowercased().contains("no-cache") == true
            return
        }
        let control = CacheControl(field)
        noCache = control.has("no-cache")
        noStore = control.has("no-store")
        onlyIfCached = control.has("only-if-cached")
        maxAge = control.seconds("max-age")
        minFresh = control.seconds("min-fresh") ?? 0
    }
}

import Foundation

/// What the cache makes of one caller's request before the scheduler lines it up: the one
/// question the scheduler asks its cache, answered in full here so that the scheduler only
/// performs it.
enum CacheConsultation {
    /// End the caller with this stored answer, without a network call; and when `revalidating`
    /// names a key, send a revalidation of it in the background.
    case answer(TransportResponse, revalidating: CacheKey?)
    /// End the caller with ``ServiceError/notCached``: ``CachePolicy/onlyCache`` found nothing.
    case notCached
    /// Send the request, for the cache to store or merge its answer as the context says
    /// (conditional on a stored answer, if the context has one); nil when the cache leaves it alone.
    case send(PreparedRequest.CacheContext?)

    /// Consults `cache` (nil: the scheduler has none) for `request`, sent with `policy` by a
    /// caller whose `terms` say which stored answers it may be given.
    ///
    /// A request without an identity (its ``RequestAdapter`` states none) is left alone: who it
    /// is for is known only once it has gone (``RequestIdentity``).
    ///
    /// - Parameter ignored: the headers the request's identity leaves out.
    init(_ cache: ResponseCache?, for request: PreparedRequest, policy: CachePolicy, terms: CallTerms,
         ignoring ignored: HeaderNames, now: Date) {
        guard let cache else {
            self = policy == .onlyCache ? .notCached : .send(nil)
            return
        }
        switch cache.decide(for: request, ignoring: ignored, policy: policy, terms: terms, now: now) {
        case .bypass:
            self = .send(nil)
        case .notCached:
            self = .notCached
        case .send(let key, let validating):
            self = .send(PreparedRequest.CacheContext(key: key, validating: validating, policy: policy))
        case .serve(let stored, let use, let revalidates):
            var response = stored.response(at: now)
            response.cacheUse = use
            self = .answer(response, revalidating: revalidates ? stored.key : nil)
        }
    }
}

extension ResponseCache {
    /// What the callers of `request` get for `outcome`: the cache's answer if it sent the
    /// request (a 304 merged), the outcome otherwise; the cache stores what it may and forgets
    /// what an unsafe request changed.
    func answer(
        to request: PreparedRequest,
        _ outcome: Result<TransportResponse, ServiceError>,
        requested: Date,
        now: Date
    ) -> Result<TransportResponse, ServiceError> {
        guard let context = request.cache else {
            if case .success(let response) = outcome { invalidate(after: response, to: request) }
            return outcome
        }
        return absorb(outcome, of: request, key: context.key, validating: context.validating, policy: context.policy,
                      requested: requested, now: now)
    }
}

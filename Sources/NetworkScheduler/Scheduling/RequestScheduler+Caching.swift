import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The scheduler's side of its cache (``ResponseCache``): a caller the cache answers never
// enters a host's line, and the answer of a request the cache sent goes through the cache
// before its callers get it. The rules themselves are the cache's: see
// `ResponseCache+Decisions.swift`.
extension RequestScheduler {
    /// What the cache made of a caller.
    enum CacheConsultation {
        /// It ended the caller: with its answer, or with ``ServiceError/notCached``.
        case answered
        /// The caller's request goes to the network, for the cache to store or merge its answer
        /// as the context says (conditional on a stored answer, if the context has one); nil
        /// when the cache leaves it alone.
        case send(PreparedRequest.CacheContext?)
    }

    /// Ends `handle` with the cache's answer if it has one it may give (fresh, or stale while
    /// it is revalidated), or says how its request goes to the network.
    func consultCache(for handle: RequestHandle, _ request: PreparedRequest) -> CacheConsultation {
        let policy = handle.submission.cachePolicy
        // Who a request that an adapter changes is for is known only once it has gone: the
        // cache leaves it alone (see `RequestIdentity`).
        guard let cache = configuration.cache, handle.submission.adapter == nil else {
            guard policy == .onlyCache else { return .send(nil) }
            fail(handle, with: .notCached)
            return .answered
        }
        let now = clock.now
        switch cache.decide(for: request, ignoring: headersIgnoredByTheCache, policy: policy, now: now) {
        case .bypass:
            return .send(nil)
        case .notCached:
            fail(handle, with: .notCached)
            return .answered
        case .send(let key, let validating):
            return .send(PreparedRequest.CacheContext(key: key, validating: validating, policy: policy))
        case .serve(let stored, let use, let revalidates):
            var response = stored.response(at: now)
            response.cacheUse = use
            end(handle, with: CallResult(outcome: .success(response)))
            if revalidates { revalidateInBackground(handle.submission, key: stored.key) }
            return .answered
        }
    }

    /// Sends a revalidation of the answer stored for `key` at `.background` priority, as a
    /// caller of its own whom no app waits for; identical requests in flight join it, and the
    /// cache lets no other start until it ends.
    private func revalidateInBackground(_ submission: Submission, key: CacheKey) {
        let cache = configuration.cache
        let revalidation = RequestHandle(id: nextID(), priority: .background, scheduler: self,
                                         submission: submission.caching(.revalidate), group: nil, callbacks: nil) { result, _ in
            cache?.revalidationEnded(key)
            switch result.outcome {
            case .success: return .succeeded
            case .failure(let error): return RequestHandle.Outcome(error)
            }
        }
        admit(revalidation, after: [])
    }

    /// What the callers of `request` get for `outcome`: the cache's answer if it sent the
    /// request (a 304 merged, a stale answer for an outage), the outcome otherwise; the cache
    /// stores what it may and forgets what an unsafe request changed. `isFinal`: no retry follows.
    func cacheAnswer(
        to request: PreparedRequest,
        _ outcome: Result<TransportResponse, ServiceError>,
        requested: Date?,
        isFinal: Bool
    ) -> Result<TransportResponse, ServiceError> {
        guard let cache = configuration.cache else { return outcome }
        let now = clock.now
        guard let context = request.cache else {
            if case .success(let response) = outcome { cache.invalidate(after: response, to: request) }
            return outcome
        }
        if context.validating != nil, case .success(let response) = outcome {
            record(.revalidated(Self.eventCall(request, callers: []), statusCode: response.statusCode))
        }
        return cache.absorb(outcome, of: request, key: context.key, validating: context.validating, policy: context.policy,
                            requested: requested ?? now, now: now, isFinal: isFinal)
    }
}

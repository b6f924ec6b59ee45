import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The scheduler's side of its cache (``ResponseCache``): it performs what the cache decided
// (`CacheConsultation`, in `Caching/`). A caller the cache answers never enters a host's line,
// and the answer of a request the cache sent goes through the cache before its callers get it.
extension RequestScheduler {
    /// What the cache made of `handle`'s request; `handle` has ended if the cache answered it
    /// (with a stored answer, or with ``ServiceError/notCached``). A stored answer its `terms`
    /// forbid (one that came through a redirect it would not follow, or larger than its limit)
    /// is not its answer.
    func consultCache(for handle: RequestHandle, _ submission: Submission, _ request: PreparedRequest,
                      terms: CallTerms) -> CacheConsultation {
        let consultation = CacheConsultation(configuration.cache, for: request, policy: submission.cachePolicy, terms: terms,
                                             ignoring: headersIgnoredByTheCache, now: clock.now)
        switch consultation {
        case .send:
            break
        case .notCached:
            fail(handle, with: .notCached)
        case .answer(let response, let revalidating):
            end(handle, with: .success(response))
            if let revalidating { revalidateInBackground(submission, key: revalidating) }
        }
        return consultation
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

    /// What the callers of `request` get for `outcome`, once the cache (if any) has had it;
    /// see ``ResponseCache/answer(to:_:requested:now:)``.
    func cacheAnswer(
        to request: PreparedRequest,
        ofCall callNumber: Int,
        _ outcome: Result<TransportResponse, ServiceError>,
        requested: Date?
    ) -> Result<TransportResponse, ServiceError> {
        guard let cache = configuration.cache else { return outcome }
        if request.cache?.validating != nil, case .success(let response) = outcome {
            record(.revalidated(Self.eventCall(request, number: callNumber, callers: []), statusCode: response.statusCode))
        }
        let now = clock.now
        return cache.answer(to: request, outcome, requested: requested ?? now, now: now)
    }

    /// What the callers of `request` get for `outcome`, a failure no retry follows: the answer
    /// it revalidated, if that allows serving stale after an error.
    func staleAnswer(to request: PreparedRequest, after outcome: Result<TransportResponse, ServiceError>)
        -> Result<TransportResponse, ServiceError> {
        guard let stored = request.cache?.validating else { return outcome }
        return ResponseCache.staleAnswer(after: outcome, validating: stored, now: clock.now)
    }
}

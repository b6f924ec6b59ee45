/// What a caller accepts of a call besides the request itself: the statuses that succeed, the
/// redirects it follows, the largest answer it takes, how long each attempt may go without
/// progress, and how often a failure is tried again. Two callers share a call (and a kept outcome) only when their
/// requests are the same (``RequestIdentity``) and so are their terms: a joiner then gets what
/// it would have got alone, never an answer its own options forbid (the other origin's 200 it
/// would not follow, 100 kB past its 1,000-byte limit, a success past its timeout, a 503 its
/// policy would have retried).
///
/// The terms are the caller's own, or its scheduler's defaults where it set none, so that a
/// resource that spells out a default shares with one that does not.
struct CallTerms: Hashable, Sendable {
    let acceptableStatusCodes: Range<Int>
    let redirects: TransportPolicy.Redirects
    let maximumResponseSize: Int
    let attemptTimeout: Double
    let retryPolicy: RetryPolicy

    func hash(into hasher: inout Hasher) {
        hasher.combine(acceptableStatusCodes)
        hasher.combine(redirects)
        hasher.combine(maximumResponseSize)
        hasher.combine(attemptTimeout)
        // The rest of a policy is compared, not hashed: its decider is an object.
        hasher.combine(retryPolicy.maxAttempts)
    }
}

extension Submission {
    /// Its terms, with the scheduler's `defaultSize` and `defaultRetry` where it has none of its
    /// own, for a request whose attempts last `timeout` seconds.
    func terms(timeout: Double, defaultSize: Int, defaultRetry: RetryPolicy) -> CallTerms {
        CallTerms(acceptableStatusCodes: acceptableStatusCodes, redirects: redirectPolicy, maximumResponseSize: maximumResponseSize ?? defaultSize,
                  attemptTimeout: timeout, retryPolicy: retryPolicy ?? defaultRetry)
    }
}

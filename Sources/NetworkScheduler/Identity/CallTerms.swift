/// What a caller accepts of an answer besides the request itself: the statuses that succeed,
/// the redirects it follows, and the largest answer it takes. Two callers share a call (and a
/// kept outcome) only when their requests are the same (``RequestIdentity``) and so are their
/// terms: a joiner then gets what it would have got alone, never an answer its own options
/// forbid (the other origin's 200 it would not follow, 100 kB past its 1,000-byte limit).
///
/// How long a caller waits and how often it tries again are no terms: callers of other
/// timeouts and retry policies share one call (one POST, never two), and the machine holds
/// each to its own (``SchedulerMachine/Caller/patience``, ``AttemptVerdict/givingUp``).
///
/// The terms are the caller's own, or its scheduler's defaults where it set none, so that a
/// resource that spells out a default shares with one that does not.
struct CallTerms: Hashable, Sendable {
    let acceptableStatusCodes: Range<Int>
    let redirects: TransportPolicy.Redirects
    let maximumResponseSize: Int
}

extension Submission {
    /// Its terms, with the scheduler's `defaultSize` where it has no limit of its own.
    func terms(defaultSize: Int) -> CallTerms {
        CallTerms(acceptableStatusCodes: acceptableStatusCodes, redirects: redirectPolicy, maximumResponseSize: maximumResponseSize ?? defaultSize)
    }
}

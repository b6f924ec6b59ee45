/// What an attempt's result means, read beside the transport before it enters the machine:
/// the machine decides retries, refreshes and host health from this, and never reads a status,
/// a header or a token.
@usableFromInline package struct AttemptVerdict: Equatable, Sendable {
    /// What the result was.
    @usableFromInline package enum Kind: Equatable, Sendable {
        /// The server answered with a status the request accepts.
        case succeeded
        /// A 401 to a request whose authenticator can get a new token: the token it carried,
        /// which the server rejected.
        case unauthorized(rejectedToken: String?)
        /// A 429 or 503: the server asks to slow down, for the seconds of its `Retry-After`
        /// if it gave one.
        case throttled(retryAfter: Seconds?)
        /// An error answer whose status the host's health counts as a failure
        /// (``HostHealthPolicy/failureStatuses``), without a `Retry-After`: the server is up
        /// but failing.
        case serverFailed
        /// Another error answer.
        case rejected
        /// The host could not be reached, or the connection was lost.
        case unreachable
        /// No answer in time.
        case timedOut
        /// No answer, and nothing learnt of the host: cancelled, refused by a policy, too large,
        /// not built.
        case noAnswer
    }

    /// When the call may be tried again.
    @usableFromInline package enum Retry: Equatable, Sendable {
        /// After exactly this many seconds (a `Retry-After`, or a decider's choice).
        case after(Seconds)
        /// After a random share of this many seconds, drawn by the machine (full jitter).
        case backoff(upTo: Seconds)

        /// The seconds to wait, with `jitter` (in 0...1) the share of a backoff's ceiling.
        @inlinable package func delay(jitter: Double) -> Seconds {
            switch self {
            case .after(let seconds): max(0, seconds)
            case .backoff(let ceiling): ceiling * min(max(jitter, 0), 1)
            }
        }

        /// The longest of `retries`, by the longest each may wait: the one a call shared by
        /// callers of several policies waits for, so that it never goes sooner than one of them
        /// (a `Retry-After` one honours) allows. Nil if there is none.
        @inlinable package static func longest(of retries: some Sequence<Self>) -> Self? {
            retries.max { $0.delay(jitter: 1) < $1.delay(jitter: 1) }
        }
    }

    @usableFromInline package let kind: Kind
    /// When the call is tried again: the longest wait among its callers whose own retry
    /// policies try again; nil when every one of them gives up on this result.
    @usableFromInline package let retry: Retry?
    /// The callers whose own policy gives up on this result while another's tries again: they
    /// end with it now, where they would have alone, and the call goes on for the others.
    @usableFromInline package let givingUp: [CallerID]

    @inlinable package init(kind: Kind, retry: Retry?, givingUp: [CallerID] = []) {
        self.kind = kind
        self.retry = retry
        self.givingUp = givingUp
    }

    @inlinable package var isSuccess: Bool { kind == .succeeded }

    /// The token a 401 rejected, if the request carried one and can get a new one.
    @inlinable package var rejectedToken: String? {
        if case .unauthorized(let token) = kind { return token }
        return nil
    }
}

extension AttemptVerdict.Kind {
    /// The seconds a throttling answer asked to wait, if it said.
    @inlinable package var retryAfter: Seconds? {
        if case .throttled(let seconds) = self { return seconds }
        return nil
    }
}

/// What the layer beside the transport read of an attempt's result as it ended, for
/// ``SchedulerMachine/attemptEnded(_:with:_:now:)``.
@usableFromInline package enum AttemptReading: Equatable, Sendable {
    /// The whole verdict: a result that asks no retry policy (an answer the request accepts,
    /// a cancellation) is judged at once.
    case verdict(AttemptVerdict)
    /// A failure, by its kind: the machine frees the attempt's slot and tells its host's health,
    /// then asks for the verdict (``SchedulerMachine/VerdictWanted``) only if its call still
    /// wants one, so that a retry policy's decider is asked once for each attempt that counts,
    /// and never for one the machine already ended.
    case failure(AttemptVerdict.Kind)

    @inlinable package var kind: AttemptVerdict.Kind {
        switch self {
        case .verdict(let verdict): verdict.kind
        case .failure(let kind): kind
        }
    }
}

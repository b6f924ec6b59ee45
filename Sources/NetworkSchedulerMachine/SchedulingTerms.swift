
/// What the machine reads of a call's request: the line it waits in and the terms it is
/// scheduled by. The rest of the request is its shell's: the machine keeps the value with the
/// call, hands it back in its actions and reads nothing else of it (no method, URL, header or
/// body), so that no rule of HTTP can slip into a decision.
@usableFromInline package protocol SchedulingTerms {
    /// What makes two requests one call, compared by value: identical requests in flight in
    /// the same lane (or in none) share the call made under their key.
    associatedtype Key: Hashable, Sendable
    /// Where it goes, as its host's line is named (`https://api.test:443`).
    var origin: String { get }
    /// Its host's name, lowercased, which names its rate limit (`api.test`); nil if it has none.
    var hostName: String? { get }
    /// Whether it opens a stream, which waits in its host's line of streams.
    var opensStream: Bool { get }
    /// The serial lane it runs in, if any.
    var lane: Lane? { get }
    /// The most seconds an attempt of it may go without progress.
    var attemptTimeout: Seconds { get }
    /// Whether its call runs on when its last caller leaves: the server may be processing a
    /// write it can recognise when it comes again (an `Idempotency-Key`), whose outcome is kept
    /// for the identical request that follows.
    var runsOnWithoutCallers: Bool { get }
}

/// The outcomes the machine decides by itself. Every other outcome is reported to it, and kept
/// and handed on as it came: the machine never looks inside one.
@usableFromInline package protocol CallOutcome {
    /// An attempt the machine ended at its deadline.
    static var attemptTimedOut: Self { get }
    /// A caller that reached its own deadline first.
    static var callerDeadlinePassed: Self { get }
    /// A call shed from its host's full line.
    static func lineFull(host: String) -> Self
}

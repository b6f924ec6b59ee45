/// Whether identical requests in flight share one network call.
public enum Deduplication: Hashable, Sendable {
    /// Share the call with requests of the same method, URL, body and headers (all but the
    /// scheduler's `headersIgnoredByDeduplication`: tracing and request IDs, `User-Agent`).
    /// The default, POST included.
    case automatic
    /// Always make a network call of its own.
    case disabled
    /// Share the call with requests that give the same key, whatever else they say.
    case key(String)
}

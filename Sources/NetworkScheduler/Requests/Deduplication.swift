/// Whether identical requests in flight share one network call.
public enum Deduplication: Hashable, Sendable {
    /// Share the call with requests of the same method, URL, body and meaningful headers
    /// (`Authorization`, `Accept`, `Content-Type`, `Idempotency-Key`). The default, POST included.
    case automatic
    /// Always make a network call of its own.
    case disabled
    /// Share the call with requests that give the same key, whatever else they say.
    case key(String)
}

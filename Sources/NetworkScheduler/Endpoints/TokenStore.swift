/// Where an app keeps its bearer token, safe to read and write from any thread: a login's
/// completion stores the token, and every request built afterwards reads it.
///
/// ```swift
/// let tokens = TokenStore()
/// let api = APIClient(baseURL: base, scheduler: scheduler, bearerToken: { tokens.token })
/// api.send(.login(credentials)) { result in
///     if case .success(let session) = result { tokens.token = session.token }
/// }
/// ```
///
/// For tokens that expire, use a ``TokenAuthenticator``, which refreshes them once for every
/// request the server rejects.
public final class TokenStore: Sendable {
    private let stored: Locked<String?>

    /// A store holding `token`, or none.
    ///
    /// - Parameter token: the token to start with, if any.
    public init(_ token: String? = nil) {
        stored = Locked(token)
    }

    /// The token, or nil when there is none (logged out).
    public var token: String? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}

/// Keeps a bearer token and refreshes it once for everyone when the server rejects it.
///
/// When many requests get `401 Unauthorized` at once, one refresh runs and the others wait for
/// it; each request is then replayed once with the new token. If the refresh fails, every one of
/// them fails with ``ServiceError/authenticationFailed(cause:)``. A request rejected again after
/// its replay ends with the 401: there is no loop.
///
/// ```swift
/// let authenticator = TokenAuthenticator { rejected in
///     try await auth.value(for: .refresh(refreshToken)).accessToken
/// }
/// let api = APIClient(baseURL: apiURL, scheduler: scheduler, authenticator: authenticator)
/// ```
public final class TokenAuthenticator: Sendable {
    private struct State {
        var token: String?
        var refreshing: Task<String, any Error>?
    }

    private let state: Locked<State>
    private let refresh: @Sendable (_ rejectedToken: String?) async throws -> String

    /// - Parameters:
    ///   - token: the token to start with, if the app already has one.
    ///   - refresh: gets a new token; given the token the server rejected. Send it through a
    ///     client without this authenticator, so that its own 401 cannot start another refresh.
    public init(token: String? = nil, refresh: @escaping @Sendable (_ rejectedToken: String?) async throws -> String) {
        state = Locked(State(token: token))
        self.refresh = refresh
    }

    /// The current token.
    public var token: String? {
        get { state.withLock { $0.token } }
        set { state.withLock { $0.token = newValue } }
    }

    /// A token newer than `rejected`: the current one if someone already refreshed, else the
    /// result of the one refresh in flight, started here if need be.
    func token(replacing rejected: String?) async throws -> String {
        enum Next {
            case ready(String)
            case await(Task<String, any Error>)
        }
        let next: Next = state.withLock { state in
            if let current = state.token, current != rejected { return .ready(current) }
            if let running = state.refreshing { return .await(running) }
            let task = Task { [refresh] in try await refresh(rejected) }
            state.refreshing = task
            return .await(task)
        }
        let task: Task<String, any Error>
        switch next {
        case .ready(let token): return token
        case .await(let running): task = running
        }
        let result = await task.result
        state.withLock { state in
            guard state.refreshing == task else { return }
            state.refreshing = nil
            if case .success(let token) = result { state.token = token }
        }
        return try result.get()
    }
}

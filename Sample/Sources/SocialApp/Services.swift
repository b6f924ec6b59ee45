import NetworkScheduler

/// Logging in and out.
public struct AuthService: Sendable {
    let client: APIClient
    let authenticator: TokenAuthenticator
    let credentials: CredentialStore

    /// Logs in at critical priority and stores the token before `completion` runs, so that
    /// requests sent `after:` this one carry it.
    @discardableResult
    public func logIn(
        _ credentials: Credentials,
        completion: @escaping @Sendable (Result<Session, ServiceError>) -> Void
    ) -> RequestHandle {
        client.send(.login(credentials), priority: .critical) { result in
            if case .success(let session) = result { remember(session, credentials) }
            completion(result)
        }
    }

    /// Logs in and stores the token.
    public func logIn(_ credentials: Credentials) async throws(ServiceError) -> Session {
        let session = try await client.value(for: .login(credentials), priority: .critical)
        remember(session, credentials)
        return session
    }

    /// Forgets the token and the credentials, and cancels every request still running or
    /// waiting: nothing sent for the user who left reaches the server after they did.
    public func logOut() {
        authenticator.token = nil
        credentials.current = nil
        client.scheduler.cancelAll()
    }

    private func remember(_ session: Session, _ credentials: Credentials) {
        authenticator.token = session.token
        self.credentials.current = credentials
    }
}

/// People: the logged-in user, profiles and friends.
public struct FriendsService: Sendable {
    let client: APIClient

    /// Loads the logged-in user.
    @discardableResult
    public func loadMe(
        priority: RequestPriority = .normal, group: RequestGroup? = nil, after: [RequestHandle] = [],
        completion: @escaping @Sendable (Result<User, ServiceError>) -> Void
    ) -> RequestHandle {
        client.send(.me, priority: priority, group: group, after: after, completion: completion)
    }

    /// Loads a user's friends.
    @discardableResult
    public func loadFriends(
        of user: User.ID, priority: RequestPriority = .normal, group: RequestGroup? = nil, after: [RequestHandle] = [],
        completion: @escaping @Sendable (Result<[User], ServiceError>) -> Void
    ) -> RequestHandle {
        client.send(.friends(of: user), priority: priority, group: group, after: after, completion: completion)
    }

    /// Loads one user's profile.
    @discardableResult
    public func loadUser(
        _ id: User.ID, priority: RequestPriority = .normal, group: RequestGroup? = nil,
        completion: @escaping @Sendable (Result<User, ServiceError>) -> Void
    ) -> RequestHandle {
        client.send(.user(id), priority: priority, group: group, completion: completion)
    }

    /// A user's friends.
    public func friends(of user: User.ID, priority: RequestPriority = .normal) async throws(ServiceError) -> [User] {
        try await client.value(for: .friends(of: user), priority: priority)
    }
}

/// The feed and posts.
public struct PostsService: Sendable {
    let client: APIClient

    /// Loads one page of the feed.
    @discardableResult
    public func loadFeed(
        page: Int, priority: RequestPriority = .normal, group: RequestGroup? = nil, after: [RequestHandle] = [],
        completion: @escaping @Sendable (Result<FeedPage, ServiceError>) -> Void
    ) -> RequestHandle {
        client.send(.feed(page: page), priority: priority, group: group, after: after, completion: completion)
    }

    /// Submits a post. Identical submits in flight (a double tap, two screens) share one call,
    /// and the response says whether it was shared.
    public func create(_ draft: PostDraft, group: RequestGroup? = nil) async throws(ServiceError) -> Reply<Post> {
        try await client.reply(for: .create(draft), priority: .critical, group: group)
    }

    /// One post.
    public func post(_ id: Post.ID) async throws(ServiceError) -> Post {
        try await client.value(for: .post(id))
    }

    /// New posts as the server announces them (`GET /feed/live`), each event's post read with
    /// ``Post/init(event:)``. It reconnects after a lost connection from the last post it saw,
    /// and ends with its group.
    public func liveFeed(
        after: Post.ID? = nil, limit: Int? = nil, priority: RequestPriority = .normal, group: RequestGroup? = nil
    ) -> ResponseStream<ServerSentEvent> {
        client.stream(.liveFeed(after: after, limit: limit), priority: priority, group: group)
    }

    /// Deletes one of the user's posts.
    public func delete(_ id: Post.ID) async throws(ServiceError) {
        try await client.value(for: .delete(post: id))
    }
}

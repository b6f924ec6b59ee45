import NetworkScheduler

/// The model controller of the friends screen: what is visible (the user and their friends)
/// loads at high priority; the feed is prefetched at low priority behind it. Everything the
/// screen sends belongs to its group, so leaving the screen cancels what is left.
public final class FriendsScreenModel: Sendable {
    /// What the screen shows.
    public struct Content: Sendable {
        public var me: User?
        public var friends: [User] = []
        public var feedPages: [Int: FeedPage] = [:]
        public var errors: [ServiceError] = []
    }

    private let api: SocialAPI
    private let group = RequestGroup()
    private let state = Protected(Content())

    public init(api: SocialAPI) {
        self.api = api
    }

    /// What the screen shows now.
    public var content: Content { state.withLock { $0 } }

    /// How many of the screen's requests have not ended.
    public var requestsInFlight: Int { group.count }

    /// Loads the screen for `user`, after `login` if given: profile and friends at high
    /// priority, then `prefetchPages` feed pages at low priority.
    public func load(user: User.ID, after login: RequestHandle? = nil, prefetchPages: Int = 3) {
        let after = login.map { [$0] } ?? []
        api.friends.loadMe(priority: .high, group: group, after: after, completion: record { $0.me = $1 })
        api.friends.loadFriends(of: user, priority: .high, group: group, after: after,
                                completion: record { $0.friends = $1 })
        for page in 1...max(1, prefetchPages) {
            api.posts.loadFeed(page: page, priority: .low, group: group, after: after,
                               completion: record { $0.feedPages[page] = $1 })
        }
    }

    /// Loads the profiles of `users` at normal priority, as a "people you may know" row.
    public func loadProfiles(_ users: [User.ID]) {
        for id in users {
            api.friends.loadUser(id, group: group, completion: record { $0.friends.append($1) })
        }
    }

    /// Waits until every request the screen made has ended.
    public func settled() async {
        await group.settled()
    }

    /// The screen went out of sight (another tab, the app in the background): whatever it
    /// still waits for yields to the screens in sight, without being cancelled.
    public func hide() {
        group.setPriority(.background)
    }

    /// The screen is in sight again: what it still waits for goes first.
    public func show() {
        group.setPriority(.high)
    }

    /// The user left: cancel everything still running or waiting.
    public func leave() {
        group.cancelAll()
    }

    /// A completion that stores a success with `apply`, or the error.
    private func record<Value: Sendable>(
        _ apply: @escaping @Sendable (inout Content, Value) -> Void
    ) -> @Sendable (Result<Value, ServiceError>) -> Void {
        // Weak, so that a screen the user left can go away and its group cancel the rest.
        return { [weak self] result in
            guard let self else { return }
            state.withLock { content in
                switch result {
                case .success(let value): apply(&content, value)
                case .failure(let error): content.errors.append(error)
                }
            }
        }
    }
}

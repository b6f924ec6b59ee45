import Foundation
import NetworkScheduler
import Synchronization

/// The app's networking, assembled once: one scheduler, one client for the API, the token
/// store, and a service per area.
public final class SocialAPI: Sendable {
    /// The one scheduler every request goes through.
    public let scheduler: RequestScheduler
    /// The API server's client.
    public let client: APIClient
    /// The session's token.
    public let tokens: TokenStore
    public let auth: AuthService
    public let friends: FriendsService
    public let posts: PostsService

    /// The app's networking for the API at `baseURL`.
    public init(baseURL: URL, configuration: RequestScheduler.Configuration = .init()) {
        let tokens = TokenStore()
        let scheduler = RequestScheduler(configuration: configuration)
        let client = APIClient(baseURL: baseURL, scheduler: scheduler, bearerToken: { tokens.token })
        self.scheduler = scheduler
        self.client = client
        self.tokens = tokens
        auth = AuthService(client: client, tokens: tokens)
        friends = FriendsService(client: client)
        posts = PostsService(client: client)
    }
}

/// Where the session's token lives between requests.
public final class TokenStore: Sendable {
    private let stored = Mutex<String?>(nil)

    public init() {}

    /// The current bearer token, if logged in.
    public var token: String? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}

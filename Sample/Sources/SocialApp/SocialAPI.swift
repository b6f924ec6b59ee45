import Foundation
import NetworkScheduler

/// The app's networking, assembled once: one scheduler, a client for logging in, a client for
/// the API whose token refreshes itself, and a service per area.
public final class SocialAPI: Sendable {
    /// The one scheduler every request goes through.
    public let scheduler: RequestScheduler
    /// The API server's client: it carries the token and refreshes it on a 401.
    public let client: APIClient
    /// Keeps the token; a 401 makes it log in again with the remembered credentials.
    public let authenticator: TokenAuthenticator
    public let auth: AuthService
    public let friends: FriendsService
    public let posts: PostsService

    /// The app's networking for the API at `baseURL`.
    public init(baseURL: URL, configuration: RequestScheduler.Configuration = .init()) {
        let scheduler = RequestScheduler(configuration: configuration)
        // Logging in goes through a client without the authenticator: a wrong password's 401
        // must end the login, not start a refresh.
        let sessionClient = APIClient(baseURL: baseURL, scheduler: scheduler)
        let credentials = CredentialStore()
        let authenticator = TokenAuthenticator { _ in
            guard let remembered = credentials.current else {
                throw ServiceError.server(ServiceError.ServerResponse(statusCode: 401, message: "not logged in"))
            }
            return try await sessionClient.value(for: .login(remembered), priority: .critical).token
        }
        let client = APIClient(baseURL: baseURL, scheduler: scheduler, authenticator: authenticator)
        self.scheduler = scheduler
        self.client = client
        self.authenticator = authenticator
        auth = AuthService(client: sessionClient, authenticator: authenticator, credentials: credentials)
        friends = FriendsService(client: client)
        posts = PostsService(client: client)
    }
}

/// The credentials the user logged in with, to log in again when the token expires.
final class CredentialStore: Sendable {
    private let stored = Protected<Credentials?>(nil)

    var current: Credentials? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}

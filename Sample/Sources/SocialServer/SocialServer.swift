import Foundation
import NIOConcurrencyHelpers

/// A small social-network REST API, served on 127.0.0.1 at a port chosen at run time.
///
/// ```swift
/// let server = try await SocialServer.start()
/// server.faults[.friends] = .latency(milliseconds: 200)
/// … // send requests to server.baseURL
/// print(server.arrivals.count(.createPost))
/// await server.stop()
/// ```
///
/// `POST /login` returns a bearer token (password `secret` for every user: ada, grace, linus…);
/// every other route needs it. `GET /_stats` returns the arrivals, for clients outside the process.
public final class SocialServer: Sendable {
    /// Faults to inject, per route.
    public let faults: FaultBoard
    /// Every request that arrived, per route and in order.
    public let arrivals: ArrivalLog
    /// The `Cache-Control` of the cacheable routes (`/me`, `/users/{id}`, `/posts/{id}`).
    public let caching: CachingBoard
    /// The port the server listens on.
    public let port: Int
    private let store: SocialStore
    private let running: NIOLockedValueBox<(server: LoopbackHTTPServer, feeds: LiveFeeds)>

    /// The server's address, `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(store: SocialStore, faults: FaultBoard, arrivals: ArrivalLog, caching: CachingBoard, port: Int,
                 serving: (server: LoopbackHTTPServer, feeds: LiveFeeds)) {
        self.store = store
        self.faults = faults
        self.arrivals = arrivals
        self.caching = caching
        self.port = port
        running = NIOLockedValueBox(serving)
    }

    /// Starts a server on 127.0.0.1 and returns once it accepts connections.
    public static func start(port: Int = 0) async throws -> SocialServer {
        let store = SocialStore()
        let faults = FaultBoard()
        let arrivals = ArrivalLog()
        let caching = CachingBoard()
        let serving = try await serve(store: store, faults: faults, arrivals: arrivals, caching: caching, port: port)
        return SocialServer(store: store, faults: faults, arrivals: arrivals, caching: caching, port: serving.server.port,
                            serving: serving)
    }

    private static func serve(store: SocialStore, faults: FaultBoard, arrivals: ArrivalLog, caching: CachingBoard,
                              port: Int) async throws -> (server: LoopbackHTTPServer, feeds: LiveFeeds) {
        let feeds = LiveFeeds()
        let routes = SocialRoutes(store: store, faults: faults, arrivals: arrivals, liveFeeds: feeds, caching: caching)
        return (try await LoopbackHTTPServer.start(routes.router(), port: port, name: "SocialServer"), feeds)
    }

    /// Stops the server and waits until it has: it stops accepting connections, ends its live
    /// feeds, answers the requests in progress and closes.
    public func stop() async {
        let (server, feeds) = running.withLockedValue { $0 }
        feeds.close()
        await server.stop()
    }

    /// Stops the server, then serves again on the same port with the same data, as a real
    /// server restarting behind its database would. Connections open meanwhile are refused.
    public func restart() async throws {
        await stop()
        let serving = try await Self.serve(store: store, faults: faults, arrivals: arrivals, caching: caching, port: port)
        running.withLockedValue { $0 = serving }
    }

    /// How many posts exist whose text starts with `prefix`: proof that none was created twice.
    /// The presences `PUT /me/presence` set for a user, in the order they arrived: the last is
    /// the user's state.
    public func presences(of userID: Int) async -> [String] {
        await store.presences(of: userID)
    }

    public func postCount(withTextPrefix prefix: String) async -> Int {
        await store.postCount(withTextPrefix: prefix)
    }

    /// The posts whose text starts with `prefix`, oldest first: what a client's writes became.
    public func posts(withTextPrefix prefix: String) async -> [(id: Int, text: String)] {
        await store.posts(withTextPrefix: prefix)
    }

    /// Forgets every session: requests with the old tokens get 401 until their clients log in again.
    public func expireTokens() async {
        await store.expireSessions()
    }
}

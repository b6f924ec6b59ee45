import Foundation
import NetworkScheduler
import SocialApp
import SocialServer

// Steps 7 to 11 (and 12, in Scenario+Gateway): what the scheduler does when the server or the network misbehaves. Each
// needs the embedded server, to inject the fault, and is skipped against another one.
extension Scenario {
    /// The embedded server, or nil after saying that the step is skipped.
    func faultyServer() -> SocialServer? {
        if server == nil { narrator.say("   (skipped: it needs the embedded server, to inject the fault)") }
        return server
    }

    /// 7: a 503 with `Retry-After` is retried when the server said, not at once.
    func aCallRetriedWhenTheServerSaid() async throws {
        narrator.step(7, Self.steps[6])
        guard let server = faultyServer() else { return }
        server.faults[.feed] = Fault(status: 503, retryAfterSeconds: 1, failFirst: 1)
        defer { server.faults[.feed] = nil }
        let before = server.arrivals.count(.feed)
        let retriesBefore = metrics.snapshot.retries

        let started = Date()
        let page = try? await api.client.value(for: .feed(page: 9))
        let waited = Date().timeIntervalSince(started)

        let arrived = server.arrivals.count(.feed) - before
        narrator.say("   the feed arrived \(arrived) times at the server; the caller got its page after \(String(format: "%.2f", waited)) s")
        narrator.check(page != nil && arrived == 2 && metrics.snapshot.retries - retriesBefore == 1,
                       "one retry, and the caller got its page")
        narrator.check(waited >= 0.95, "the retry went out after the second the server asked, not before")
    }

    /// 8: each kind of failure comes back as its own `ServiceError`, with a readable text.
    func aMisbehavingServersTypedErrors() async throws {
        narrator.step(8, Self.steps[7])
        guard let server = faultyServer() else { return }
        server.faults[.post] = Fault(malformedJSON: true)
        server.faults[.friends] = Fault(status: 502, htmlErrorPage: true)
        server.faults[.user] = Fault(status: 404)
        server.faults[.me] = Fault(closeMidBody: true)
        defer {
            for route in [Route.post, .friends, .user, .me] { server.faults[route] = nil }
        }
        let before = Dictionary(uniqueKeysWithValues: [Route.post, .friends, .user, .me].map { ($0, server.arrivals.count($0)) })
        let noRetry = RetryPolicy.never

        let malformed = await Self.outcome { [api] () async throws(ServiceError) in try await api.client.value(for: .post(1)) }
        let html = await Self.outcome { [api] () async throws(ServiceError) in
            try await api.client.value(for: Resource<[User]>.friends(of: 1).retrying(noRetry))
        }
        let missing = await Self.outcome { [api] () async throws(ServiceError) in try await api.client.value(for: .user(99)) }
        let cut = await Self.outcome { [api] () async throws(ServiceError) in
            try await api.client.value(for: Resource<User>.me.retrying(noRetry))
        }

        let errors: [(String, ServiceError?)] = [
            ("malformed JSON", malformed.error), ("HTML error page", html.error),
            ("404 with a message", missing.error), ("connection closed mid-body", cut.error),
        ]
        for (fault, error) in errors {
            narrator.say("   \(fault.padding(toLength: 27, withPad: " ", startingAt: 0)) → \(error.map { "\($0.localizedDescription)" } ?? "no error")")
        }
        narrator.check(malformed.error.map { if case .undecodable = $0 { true } else { false } } == true
                       && html.error?.statusCode == 502 && html.error?.serverResponse?.message == nil
                       && missing.error?.statusCode == 404 && missing.error?.serverResponse?.message != nil
                       && cut.error.map { if case .connectionLost = $0 { true } else { false } } == true,
                       "undecodable, server 502 without a message, server 404 with its message, connection lost")
        let arrived = [Route.post, .friends, .user, .me].allSatisfy { server.arrivals.count($0) > before[$0] ?? 0 }
        narrator.check(arrived, "each request reached the server: the errors are the server's doing")
    }

    /// The deadline of each attempt of step 9's POST, in seconds.
    static let keyedPostTimeout: TimeInterval = 5

    /// 9: a POST with an `Idempotency-Key` whose connection is lost is sent again with the same
    /// key, and the server creates the post once.
    func aKeyedPostAfterALostConnection() async throws {
        narrator.step(9, Self.steps[8])
        guard let server = faultyServer() else { return }
        server.faults[.createPost] = Fault(resetConnection: true, failFirst: 1)
        defer { server.faults[.createPost] = nil }
        let before = server.arrivals.count(.createPost)
        let text = "Keyed \(UUID().uuidString.prefix(8))"

        // After the reset, FoundationNetworking may wait on the dead connection: the attempt's
        // deadline, not the transport, ends that wait, so it is short here and said aloud.
        var keyed = Resource<Post>.create(PostDraft(text: text)).withIdempotencyKey()
        keyed.timeout = Self.keyedPostTimeout
        narrator.say("   the server resets the POST's first connection; each attempt has \(Int(Self.keyedPostTimeout)) s "
                     + "before the scheduler sends it again, with the same Idempotency-Key…")
        let post = try? await api.client.value(for: keyed)

        let arrived = server.arrivals.count(.createPost) - before
        let created = await server.postCount(withTextPrefix: text)
        narrator.say("   the POST arrived \(arrived) times at the server; posts created: \(created)")
        narrator.check(post != nil && arrived >= 2, "the POST was sent again after the lost connection, and succeeded")
        narrator.check(created == 1, "the server created the post once: every attempt carried the same key")
    }

    /// 10: tokens expire while twenty requests are on their way: one refresh for all.
    func tokensExpireUnderManyRequests() async throws {
        narrator.step(10, Self.steps[9])
        guard let server = faultyServer() else { return }
        await server.expireTokens()
        let logins = server.arrivals.count(.login)
        let feeds = server.arrivals.count(.feed)

        let succeeded = await withTaskGroup(of: Bool.self) { group in
            for page in 11...30 {
                group.addTask { [api] in (try? await api.client.value(for: .feed(page: page))) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }

        let refreshes = server.arrivals.count(.login) - logins
        narrator.say("   \(succeeded) of 20 pages loaded; logins to refresh the token: \(refreshes); feed arrivals: \(server.arrivals.count(.feed) - feeds)")
        narrator.check(succeeded == 20, "every request got its page, replayed once with the new token")
        narrator.check(refreshes == 1, "one refresh answered every 401")
    }

    /// 11: offline, requests wait instead of failing; back online, they go.
    func theDeviceGoesOffline() async throws {
        narrator.step(11, Self.steps[10])
        guard let server = faultyServer() else { return }
        let before = server.arrivals.count(.user)
        connectivity.set(connected: false)
        let screen = FriendsScreenModel(api: api)
        screen.loadProfiles([2, 3, 4])
        // A demo's pause, long enough to show that nothing leaves while offline.
        try await Task.sleep(for: .milliseconds(300))
        let whileOffline = server.arrivals.count(.user) - before
        let waiting = screen.requestsInFlight
        narrator.say("   offline for 0.3 s: \(waiting) requests waiting, \(whileOffline) reached the server")
        connectivity.set(connected: true)
        await screen.settled()

        let arrived = server.arrivals.count(.user) - before
        narrator.say("   back online: the server saw \(arrived); the screen shows \(screen.content.friends.count) profiles")
        narrator.check(whileOffline == 0 && waiting == 3, "offline, the requests waited and none was sent")
        narrator.check(arrived == 3 && screen.content.errors.isEmpty && screen.content.friends.count == 3,
                       "back online, they went and succeeded")
    }
}

private extension Result where Failure == ServiceError {
    var error: ServiceError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

import Foundation
import NetworkScheduler
import SocialApp
import SocialServer
import Testing

/// The scheduler's cache over real sockets against the SocialServer, over each transport:
/// a fresh profile never reaches the server, a stale one costs a 304, one user never gets
/// another's answer, stale-while-revalidate sends one revalidation for any number of callers,
/// an outage is answered stale where the server allowed it, and a deletion is not hidden.
@Suite struct CacheIntegrationTests {
    private static func cached(_ configuration: inout RequestScheduler.Configuration) {
        configuration.cache = ResponseCache()
    }

    @Test(arguments: TransportKind.allCases)
    func aFreshProfileIsServedWithoutReachingTheServer(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, eventMonitors: [tally], configure: Self.cached) { fixture in
            _ = try await fixture.logIn()

            let first = try await fixture.api.client.reply(for: .me)
            let second = try await fixture.api.client.reply(for: .me)

            #expect(first.cacheUse == .none)
            #expect(second.cacheUse == .fresh)
            #expect(second.value.name == "Ada")
            #expect(second.head.value(forHTTPHeaderField: "ETag") == first.head.value(forHTTPHeaderField: "ETag"))
            #expect(fixture.server.arrivals.count(.me) == 1)
            #expect(tally.servedFromCache.value == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStaleAnswerCostsA304AndKeepsItsBody(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, configure: Self.cached) { fixture in
            _ = try await fixture.logIn()
            fixture.server.caching[.user] = "max-age=0"

            let first = try await fixture.api.client.reply(for: .user(2))
            let second = try await fixture.api.client.reply(for: .user(2))

            #expect(second.cacheUse == .revalidated)
            #expect(second.statusCode == 200)
            #expect(second.value == first.value)
            let arrivals = fixture.server.arrivals.all.filter { $0.route == .user }
            #expect(arrivals.map { $0.ifNoneMatch != nil } == [false, true])
            #expect(arrivals.last?.ifNoneMatch == first.head.value(forHTTPHeaderField: "ETag"))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func oneUsersProfileNeverReachesAnother(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, configure: Self.cached) { fixture in
            _ = try await fixture.api.auth.logIn(Fixture.ada)
            #expect(try await fixture.api.client.value(for: .me).name == "Ada")
            #expect(try await fixture.api.client.reply(for: .me).cacheUse == .fresh)

            _ = try await fixture.api.auth.logIn(Credentials(username: "grace", password: "secret"))

            let grace = try await fixture.api.client.reply(for: .me)
            #expect(grace.value.name == "Grace")
            #expect(grace.cacheUse == .none)
            #expect(try await fixture.api.client.reply(for: .me).value.name == "Grace")
            #expect(fixture.server.arrivals.count(.me) == 2)
        }
    }

    /// A cookie store in the transport would add one user's cookies on the wire after the
    /// request's identity was made: the cache once gave the second user to log in the first
    /// one's `private` answer. No transport sends back a cookie the app did not send.
    @Test(arguments: TransportKind.allCases)
    func aCookieTheServerSetsIsNeverAddedOnTheWire(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, configure: Self.cached) { fixture in
            fixture.server.faults[.echo] = Fault(setCookie: "session=ada; Path=/")
            let echo = Resource<[String: String]>(path: "echo").caching(.bypass)

            let first = try await fixture.api.client.reply(for: echo)
            let second = try await fixture.api.client.value(for: echo)

            #expect(first.head.value(forHTTPHeaderField: "Set-Cookie") == "session=ada; Path=/")
            #expect(second["cookie"] == nil && second["Cookie"] == nil)
            #expect(fixture.server.arrivals.count(.echo) == 2)
        }
    }

    /// Users told apart by a header of the app's (an API key), or by a token an adapter adds
    /// as the request goes, once got each other's cached answers.
    @Test(arguments: TransportKind.allCases)
    func usersToldApartByAnAPIKeyOrAnAdaptersTokenNeverGetEachOthersAnswer(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, configure: Self.cached) { fixture in
            fixture.server.caching[.echo] = "private, max-age=600"
            let (scheduler, base) = (fixture.api.client.scheduler, fixture.server.baseURL)
            func keyed(_ key: String) -> APIClient {
                APIClient(baseURL: base, scheduler: scheduler, defaultHeaders: ["X-Api-Key": key])
            }
            func adapted(_ token: String) -> APIClient {
                var client = APIClient(baseURL: base, scheduler: scheduler)
                client.requestAdapter = RequestAdapter { request in
                    var request = request
                    request.setValue(token, forHTTPHeaderField: "Authorization")
                    return request
                }
                return client
            }
            let users = [("x-api-key", "ada-key", keyed("ada-key")), ("x-api-key", "bob-key", keyed("bob-key")),
                         ("authorization", "Bearer grace", adapted("Bearer grace")),
                         ("authorization", "Bearer alan", adapted("Bearer alan"))]
            let echo = Resource<[String: String]>(path: "echo")

            for _ in 0..<2 {
                for (field, who, client) in users {
                    let echoed = try await client.value(for: echo)
                    #expect(echoed[field] == who)
                }
            }
            // One load per API key, then its own copy; every load of an adapted request.
            #expect(fixture.server.arrivals.count(.echo) == 2 + 2 * 2)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func staleWhileRevalidateAnswersEveryCallerAtOnceWithOneRevalidation(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, eventMonitors: [tally], configure: Self.cached) { fixture in
            _ = try await fixture.logIn()
            fixture.server.caching[.user] = "max-age=0, stale-while-revalidate=600"
            let first = try await fixture.api.client.value(for: .user(3))
            // The revalidation waits at the server while the callers come.
            fixture.server.faults.hold(.user)

            var uses: [CacheUse] = []
            for _ in 0..<200 {
                let reply = try await fixture.api.client.reply(for: .user(3))
                #expect(reply.value == first)
                uses.append(reply.cacheUse)
            }

            #expect(uses.allSatisfy { $0 == .staleWhileRevalidating })
            #expect(await fixture.server.arrivals.wait(for: 2, at: .user))
            fixture.server.faults.release(.user)
            #expect(await tally.revalidated.wait(for: 1) == 1)
            #expect(fixture.server.arrivals.count(.user) == 2, "the first load, and one revalidation")
            #expect(fixture.server.arrivals.all.last { $0.route == .user }?.ifNoneMatch != nil)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anOutageIsAnsweredStaleWhereTheServerAllowedIt(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, configure: Self.cached) { fixture in
            _ = try await fixture.logIn()
            fixture.server.caching[.post] = "max-age=0, stale-if-error=600"
            let post = try await fixture.api.client.value(for: .post(1))
            fixture.server.faults[.post] = Fault(status: 503)

            let reply = try await fixture.api.client.reply(for: .post(1))

            #expect(reply.cacheUse == .staleAfterError)
            #expect(reply.value == post)
            #expect(fixture.server.arrivals.count(.post) == 2)
            // Where the server did not allow it, the outage is the caller's.
            fixture.server.caching[.post] = "max-age=0"
            _ = try? await fixture.api.client.value(for: .post(2).caching(.reload))
            let error = await #expect(throws: ServiceError.self) { _ = try await fixture.api.client.value(for: .post(2)) }
            #expect(error?.caseName == "server")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDeletedPostIsAskedForAgain(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, configure: Self.cached) { fixture in
            _ = try await fixture.logIn()
            let post = try await fixture.api.posts.create(PostDraft(text: "soon gone")).value
            _ = try await fixture.api.client.value(for: .post(post.id))
            #expect(try await fixture.api.client.reply(for: .post(post.id)).cacheUse == .fresh)

            _ = try await fixture.api.client.value(for: .delete(post: post.id))

            let error = await #expect(throws: ServiceError.self) { _ = try await fixture.api.client.value(for: .post(post.id)) }
            #expect(error?.serverResponse?.statusCode == 404)
            #expect(fixture.server.arrivals.count(.post) == 2)
        }
    }
}

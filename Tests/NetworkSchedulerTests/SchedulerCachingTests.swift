import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// The scheduler with a cache: a fresh hit takes no slot and reaches no transport, a stale
/// answer is revalidated once for all its callers, an outage can be answered stale, and no
/// answer crosses users.
@Suite struct SchedulerCachingTests {
    private static let profile = Resource<Data>(path: "profile")

    /// A server whose answers carry `fields` and an ETag, with a 304 for that ETag, unless a
    /// test scripted another answer for a path.
    private final class Server: Sendable {
        let fields: HeaderFields
        let etag = "\"v1\""
        /// By path, what the server answers instead.
        let scripted = Locked<[String: StubResponse]>([:])

        init(_ fields: HeaderFields) {
            var fields = fields
            fields["ETag"] = etag
            self.fields = fields
        }

        func answer(_ request: URLRequest) -> StubResponse {
            if let scripted = scripted.withLock({ $0[request.url?.path ?? ""] }) { return scripted }
            if request.value(forHTTPHeaderField: "If-None-Match") == etag { return .respond(status: 304, headers: fields) }
            return .respond(status: 200, body: Data("profile v1".utf8), headers: fields)
        }
    }

    private static func harness(_ server: Server, budget: Int = 6, clock: VirtualClock = VirtualClock()) -> Harness {
        Harness(budget: budget, slotsReservedAboveLowPriority: 0, reply: server.answer) {
            $0.cache = ResponseCache()
            $0.clock = clock
        }
    }

    /// A profile loaded once with `fields` (a lifetime of 60 s), then stale: 61 s later on the
    /// harness's virtual clock.
    private static func staleProfile(_ fields: HeaderFields) async throws -> (Server, Harness, VirtualClock) {
        let clock = VirtualClock()
        let server = Server(fields)
        let harness = harness(server, clock: clock)
        _ = try await harness.api.reply(for: profile)
        clock.advance(by: 61)
        return (server, harness, clock)
    }

    @Test func aFreshHitTakesNoSlotReachesNoTransportAndIsCounted() async throws {
        let server = Server(["Cache-Control": "max-age=60"])
        let harness = Self.harness(server, budget: 1)
        _ = try await harness.api.reply(for: Self.profile)
        // The host's only slot is taken by a request the server holds.
        server.scripted.withLock { $0["/v1/slow"] = .hold }
        let held = harness.api.send(Resource<Data>(path: "slow")) { _ in }
        #expect(await harness.transport.arrivals.wait(for: 2).count == 2)

        let reply = try await harness.api.reply(for: Self.profile)

        #expect(reply.cacheUse == .fresh)
        #expect(String(decoding: reply.value, as: UTF8.self) == "profile v1")
        #expect(harness.transport.count("GET /v1/profile") == 1)
        #expect(harness.metrics.snapshot.servedFromCache == 1)
        #expect(harness.events.ended.elements.contains { if case .servedFromCache = $0 { true } else { false } })
        held.cancel()
    }

    @Test func aHitHandsOverTheStoredBodyWithoutCopyingIt() async throws {
        // Large enough to live on the heap: a small `Data` is kept inline, and copied anyway.
        let body = Data(repeating: 0x61, count: 64 << 10)
        let transport = StubTransport { _ in .respond(status: 200, body: body, headers: ["Cache-Control": "max-age=60"]) }
        let scheduler = RequestScheduler { $0.transport = transport; $0.cache = ResponseCache() }
        let api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler)
        _ = try await api.value(for: Self.profile)

        let first = try await api.value(for: Self.profile)
        let second = try await api.value(for: Self.profile)

        // Two hits share one buffer: the stored body's.
        let addresses = [first, second].map { $0.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) } }
        #expect(addresses[0] == addresses[1])
        #expect(second == body)
        #expect(transport.arrivals.count == 1)
    }

    @Test func aHitIsDeliveredAsAnyAnswerIsToCallbacksAndDependents() async throws {
        let server = Server(["Cache-Control": "max-age=60"])
        let harness = Self.harness(server)
        _ = try await harness.api.reply(for: Self.profile)
        let outcomes = Outcomes<Data>()

        // A caller that waits for another, then is answered by the cache; and one after it.
        let first = harness.api.send(Resource<Data>(path: "other")) { outcomes.completion("other")($0) }
        let hit = harness.api.send(Self.profile, after: [first]) { outcomes.completion("hit")($0) }
        harness.api.send(Resource<Data>(path: "third"), after: [hit]) { outcomes.completion("third")($0) }

        let results = await outcomes.wait(for: 3)
        #expect(results["hit"]?.success.map { String(decoding: $0, as: UTF8.self) } == "profile v1")
        #expect(results["third"]?.success != nil)
        #expect(outcomes.log.elements.map(\.label) == ["other", "hit", "third"])
        #expect(harness.transport.count("GET /v1/profile") == 1)
        #expect(harness.isIdle)
    }

    @Test func aStaleAnswerIsAskedForWithItsETagAndA304KeepsItsBody() async throws {
        let (_, harness, _) = try await Self.staleProfile(["Cache-Control": "max-age=60", "X-Version": "1"])

        let reply = try await harness.api.reply(for: Self.profile)

        let revalidation = try #require(harness.transport.arrivals.elements.last)
        #expect(revalidation.request.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        #expect(reply.statusCode == 200)
        #expect(reply.cacheUse == .revalidated)
        #expect(String(decoding: reply.value, as: UTF8.self) == "profile v1")
        #expect(harness.events.revalidated.elements == [304])
        // Fresh again for another minute.
        #expect(try await harness.api.reply(for: Self.profile).cacheUse == .fresh)
    }

    @Test func callersOfAStaleAnswerJoinOneRevalidation() async throws {
        let (server, harness, _) = try await Self.staleProfile(["Cache-Control": "max-age=60"])
        server.scripted.withLock { $0["/v1/profile"] = .hold }
        let uses = EventLog<CacheUse>()

        for _ in 0..<50 {
            Task { [api = harness.api] in uses.append((try? await api.reply(for: Self.profile))?.cacheUse ?? .none) }
        }
        #expect(await harness.transport.arrivals.wait(for: 2).count == 2)
        await harness.events.joined.wait(for: 49)
        #expect(harness.transport.release(path: "/v1/profile", with: .respond(status: 304, headers: ["Cache-Control": "max-age=60"])))

        #expect(await uses.wait(for: 50).allSatisfy { $0 == .revalidated })
        #expect(harness.transport.count("GET /v1/profile") == 2, "the first load, and one revalidation")
    }

    @Test func staleWhileRevalidateAnswersAtOnceAndRevalidatesOnceInTheBackground() async throws {
        let (server, harness, _) = try await Self.staleProfile(["Cache-Control": "max-age=60, stale-while-revalidate=600"])
        server.scripted.withLock { $0["/v1/profile"] = .hold }

        var uses: [CacheUse] = []
        for _ in 0..<1_000 { uses.append(try await harness.api.reply(for: Self.profile).cacheUse) }

        #expect(uses.allSatisfy { $0 == .staleWhileRevalidating })
        #expect(await harness.transport.arrivals.wait(for: 2).count == 2)
        let revalidation = try #require(harness.transport.arrivals.elements.last)
        #expect(revalidation.request.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        #expect(harness.transport.priorities.elements.last?.priority == .background)
        #expect(harness.transport.release(path: "/v1/profile", with: .respond(status: 304, headers: ["Cache-Control": "max-age=60"])))
        #expect(await harness.events.revalidated.wait(for: 1) == [304])
        await harness.scheduler.queuesDrained()
        #expect(try await harness.api.reply(for: Self.profile).cacheUse == .fresh)
        #expect(harness.transport.count("GET /v1/profile") == 2)
    }

    @Test func anOutageIsAnsweredStaleOnlyWhereTheServerAllowedIt() async throws {
        let clock = VirtualClock()
        let server = Server(["Cache-Control": "max-age=60, stale-if-error=600"])
        let harness = Self.harness(server, clock: clock)
        _ = try await harness.api.reply(for: Self.profile)
        _ = try await harness.api.reply(for: Resource<Data>(path: "strict"))
        clock.advance(by: 61)
        server.scripted.withLock { $0 = ["/v1/profile": .serverError(503), "/v1/strict": .lostConnection] }

        let reply = try await harness.api.reply(for: Self.profile)
        #expect(reply.cacheUse == .staleAfterError)
        #expect(String(decoding: reply.value, as: UTF8.self) == "profile v1")
        #expect(harness.metrics.snapshot.servedFromCache == 1)

        // Past its stale-if-error window, the outage is the caller's.
        clock.advance(by: 600)
        await #expect(throws: ServiceError.connectionLost(URLError(.networkConnectionLost))) {
            _ = try await harness.api.reply(for: Resource<Data>(path: "strict"))
        }
    }

    @Test func mustRevalidateForbidsAStaleAnswerInAnOutage() async throws {
        let (server, harness, _) = try await Self.staleProfile(["Cache-Control": "max-age=60, stale-if-error=600, must-revalidate"])
        server.scripted.withLock { $0["/v1/profile"] = .lostConnection }

        await #expect(throws: ServiceError.connectionLost(URLError(.networkConnectionLost))) {
            _ = try await harness.api.reply(for: Self.profile)
        }
    }

    @Test func eachPolicyReadsAndStoresAsItSays() async throws {
        let clock = VirtualClock()
        let server = Server(["Cache-Control": "max-age=60"])
        let harness = Self.harness(server, clock: clock)

        await #expect(throws: ServiceError.notCached) {
            _ = try await harness.api.reply(for: Self.profile.caching(.onlyCache))
        }
        #expect(harness.transport.arrivals.count == 0)
        _ = try await harness.api.reply(for: Self.profile.caching(.bypass))
        await #expect(throws: ServiceError.notCached, "bypass stores nothing") {
            _ = try await harness.api.reply(for: Self.profile.caching(.onlyCache))
        }

        #expect(try await harness.api.reply(for: Self.profile.caching(.reload)).cacheUse == .none)
        #expect(try await harness.api.reply(for: Self.profile.caching(.reload)).cacheUse == .none, "reload reads nothing")
        #expect(harness.transport.arrivals.count == 3)
        #expect(try await harness.api.reply(for: Self.profile.caching(.revalidate)).cacheUse == .revalidated)
        #expect(harness.transport.arrivals.elements.last?.request.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")

        clock.advance(by: 3_600)
        #expect(try await harness.api.reply(for: Self.profile.caching(.onlyCache)).cacheUse == .onlyCache, "stale, but all there is")
        #expect(harness.transport.arrivals.count == 4)
    }

    @Test func aSuccessfulWriteToAURLDropsItsStoredAnswers() async throws {
        let server = Server(["Cache-Control": "max-age=60"])
        let harness = Self.harness(server)
        _ = try await harness.api.reply(for: Self.profile)
        #expect(try await harness.api.reply(for: Self.profile).cacheUse == .fresh)

        _ = try await harness.api.reply(for: Resource<Data>(.put, path: "profile", body: .data(Data("new".utf8))))

        #expect(try await harness.api.reply(for: Self.profile).cacheUse == .none)
        #expect(harness.transport.count("GET /v1/profile") == 2)
    }

    @Test func noAnswerCrossesUsersAndNoStoreIsNeverWritten() async throws {
        let cache = ResponseCache()
        let transport = StubTransport { request in
            let who = request.value(forHTTPHeaderField: "Authorization") ?? request.value(forHTTPHeaderField: "Cookie") ?? "nobody"
            let control = request.url?.path == "/v1/secret" ? "no-store" : "max-age=600"
            return .respond(status: 200, body: Data("for \(who)".utf8), headers: ["Cache-Control": control])
        }
        let scheduler = RequestScheduler { $0.transport = transport; $0.cache = cache }
        let base = URL(string: "https://api.test/v1")!
        let ada = APIClient(baseURL: base, scheduler: scheduler, bearerToken: { "ada-token" })
        let bob = APIClient(baseURL: base, scheduler: scheduler, bearerToken: { "bob-token" })
        let cookie = APIClient(baseURL: base, scheduler: scheduler, defaultHeaders: ["Cookie": "session=carol"])
        let anonymous = APIClient(baseURL: base, scheduler: scheduler)

        for _ in 0..<2 {
            #expect(String(decoding: try await ada.value(for: Self.profile), as: UTF8.self) == "for Bearer ada-token")
            #expect(String(decoding: try await bob.value(for: Self.profile), as: UTF8.self) == "for Bearer bob-token")
            #expect(String(decoding: try await cookie.value(for: Self.profile), as: UTF8.self) == "for session=carol")
            #expect(String(decoding: try await anonymous.value(for: Self.profile), as: UTF8.self) == "for nobody")
        }
        #expect(transport.count("GET /v1/profile") == 4, "one load per user, then each user's own copy")

        _ = try await ada.value(for: Resource<Data>(path: "secret"))
        await #expect(throws: ServiceError.notCached) {
            _ = try await ada.value(for: Resource<Data>(path: "secret").caching(.onlyCache))
        }
    }

    /// Users told apart by a header of the app's (an API key), or by an adapter that adds
    /// their token as the request goes, once got each other's answers: the key held only the
    /// `Authorization`, `Proxy-Authorization` and `Cookie` the scheduler built. In memory, and
    /// from disk after a relaunch.
    @Test func noAnswerCrossesUsersToldApartByAnyHeaderOrAnAdapterNorAfterARelaunch() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("identity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = StubTransport { request in
            let who = ["X-Api-Key", "Authorization"].compactMap { request.value(forHTTPHeaderField: $0) }.joined(separator: ",")
            return .respond(status: 200, body: Data("for \(who)".utf8), headers: ["Cache-Control": "private, max-age=600"])
        }
        func users(of cache: ResponseCache) -> [(who: String, client: APIClient)] {
            let scheduler = RequestScheduler { $0.transport = transport; $0.cache = cache }
            let base = URL(string: "https://api.test/v1")!
            func adapted(_ token: String) -> APIClient {
                var client = APIClient(baseURL: base, scheduler: scheduler)
                client.requestAdapter = RequestAdapter { request in
                    var request = request
                    request.setValue(token, forHTTPHeaderField: "Authorization")
                    return request
                }
                return client
            }
            return [("ada-key", APIClient(baseURL: base, scheduler: scheduler, defaultHeaders: ["X-Api-Key": "ada-key"])),
                    ("bob-key", APIClient(baseURL: base, scheduler: scheduler, defaultHeaders: ["X-Api-Key": "bob-key"])),
                    ("Bearer grace", adapted("Bearer grace")), ("Bearer alan", adapted("Bearer alan"))]
        }

        do {
            let cache = try ResponseCache(directory: folder)
            for _ in 0..<2 {
                for (who, client) in users(of: cache) {
                    #expect(String(decoding: try await client.value(for: Self.profile), as: UTF8.self) == "for \(who)")
                }
            }
            cache.flush()
        }
        // The first cache is gone: this one reads its folder anew, as after a relaunch.
        let relaunched = try ResponseCache(memoryCapacity: 0, directory: folder)
        for (who, client) in users(of: relaunched) {
            let reply = try await client.reply(for: Self.profile)
            #expect(String(decoding: reply.value, as: UTF8.self) == "for \(who)")
            #expect(reply.cacheUse == (who.hasPrefix("Bearer") ? .none : .fresh), "\(who)")
        }
        // One load per key user; every send of an adapted request, which the cache leaves alone.
        #expect(transport.count("GET /v1/profile") == 2 + 3 * 2)
    }

    @Test func anAnswerFromAnotherOriginAfterARedirectIsNotKept() async throws {
        let transport = StubTransport { request in
            // The transport followed a redirect: the answer names the URL it came from.
            let elsewhere = URL(string: "https://elsewhere.test/profile")!
            return .respond(status: 200, body: Data("elsewhere".utf8), headers: ["Cache-Control": "max-age=600",
                                                                                  "X-Answered-By": elsewhere.absoluteString])
        }
        let redirecting = RedirectedTransport(base: transport, answeredFrom: URL(string: "https://elsewhere.test/profile")!)
        let scheduler = RequestScheduler { $0.transport = redirecting; $0.cache = ResponseCache() }
        let api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler)

        _ = try await api.value(for: Self.profile)
        #expect(try await api.reply(for: Self.profile).cacheUse == .none)
        #expect(transport.count("GET /v1/profile") == 2)
    }
}

/// A transport whose answers say they came from `answeredFrom`, as after a redirect.
private struct RedirectedTransport: HTTPTransport {
    let base: StubTransport
    let answeredFrom: URL
    var maximumConnectionsPerHost: Int { base.maximumConnectionsPerHost }

    func startTask(for request: TransportRequest, policy: TransportPolicy, progress: (@Sendable (TransferProgress) -> Void)?,
                   completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) -> any TransportTask {
        base.startTask(for: request, policy: policy, progress: progress) { [answeredFrom] result in
            completion(result.map { response in
                TransportResponse(data: response.data, head: ResponseHead(url: answeredFrom, statusCode: response.statusCode,
                                                                          headerFields: response.head.headerFields))
            })
        }
    }
}

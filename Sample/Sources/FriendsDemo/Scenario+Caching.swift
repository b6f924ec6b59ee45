import Foundation
import NetworkScheduler
import SocialApp
import SocialServer

// Step 17: the scheduler's own HTTP cache. A fresh answer needs no slot and no server; a stale
// one costs a 304; stale-while-revalidate answers at once and revalidates once.
extension Scenario {
    /// 17: a second app, with a cache, reads a profile twice (the second time from memory),
    /// then a public card the server marks stale at once: a 304 keeps its body; with
    /// `stale-while-revalidate`, fifty readers get it at once and the server sees one revalidation.
    func aProfileReadAgainComesFromTheCache() async throws {
        narrator.step(17, Self.steps[16])
        let cached = SocialAPI(baseURL: api.client.baseURL, configuration: .init(
            transport: timeline, hostBudget: 2, eventMonitors: [metrics], cache: ResponseCache()))
        _ = try await cached.auth.logIn(Credentials(username: "ada", password: "secret"))
        let profilesBefore = try await stats.count(.me)

        let first = try await cached.client.reply(for: .me)
        let clock = ContinuousClock()
        var second: Reply<User>?
        let took = try await clock.measure { second = try await cached.client.reply(for: .me) }
        let profiles = try await stats.count(.me) - profilesBefore
        narrator.say("   the first read went to the server; the second came from the cache in \(took.formatted(.units(allowed: [.microseconds], width: .narrow))), as \(second?.cacheUse ?? .none)")
        narrator.check(first.cacheUse == .none && second?.cacheUse == .fresh && profiles == 1,
                       "a fresh answer was used without a budget slot or a request")

        guard let server else {
            narrator.say("   (against another server, its answers' freshness cannot be changed: the rest is skipped)")
            return
        }
        defer { server.caching[.user] = CachingBoard.defaults[.user] }
        server.caching[.user] = "max-age=0"
        let before = server.arrivals.count(.user)
        _ = try await cached.client.value(for: .user(4))
        let revalidated = try await cached.client.reply(for: .user(4))
        let conditional = server.arrivals.all.last { $0.route == .user }?.ifNoneMatch
        narrator.say("   a card stale at once was asked for again with If-None-Match: \(conditional ?? "none"); the server answered 304")
        narrator.check(revalidated.cacheUse == .revalidated && revalidated.value.id == 4 && server.arrivals.count(.user) == before + 2,
                       "a stale answer cost a 304, and kept its body")

        server.caching[.user] = "max-age=0, stale-while-revalidate=600"
        _ = try await cached.client.value(for: .user(5).caching(.reload))
        let swrBefore = server.arrivals.count(.user)
        server.faults.hold(.user)
        var uses: [CacheUse] = []
        for _ in 0..<50 { uses.append(try await cached.client.reply(for: .user(5)).cacheUse) }
        _ = await server.arrivals.wait(for: swrBefore + 1, at: .user, timeout: 10)
        server.faults.release(.user)
        await cached.scheduler.queuesDrained()
        let revalidations = server.arrivals.count(.user) - swrBefore
        narrator.say("   fifty readers of a card allowed stale-while-revalidate: \(uses.filter { $0 == .staleWhileRevalidating }.count) answered at once, \(revalidations) revalidation at .background")
        narrator.check(uses.allSatisfy { $0 == .staleWhileRevalidating } && revalidations == 1,
                       "stale-while-revalidate answered at once, with one revalidation for all")
        cached.scheduler.cancelAll()
    }
}

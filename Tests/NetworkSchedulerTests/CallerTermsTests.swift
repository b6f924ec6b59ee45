import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// A caller gets what it asked for: sharing a call or a stored answer never hands it what its
/// own options forbid. Callers share a call only under the same terms (``CallTerms``), and the
/// cache serves a caller only an answer its terms allow.
@Suite struct CallerTermsTests {
    /// A joiner whose options differ from the first caller's in one way.
    enum Joiner: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case followsNoRedirect, takesAtMost1000Bytes, hasATimeoutOfItsOwn, retriesAsTheDefaultSays
        var testDescription: String { rawValue }

        var resource: Resource<User> {
            let plain = Resource<User>(path: "users/1")
            return switch self {
            case .followsNoRedirect: plain.redirecting(.never)
            case .takesAtMost1000Bytes: plain.limitingResponses(to: 1_000)
            case .hasATimeoutOfItsOwn: Resource<User>(path: "users/1", timeout: 42)
            case .retriesAsTheDefaultSays: plain.retrying(.default)
            }
        }
    }

    @Test(arguments: Joiner.allCases)
    func aJoinerWithOtherOptionsGetsACallOfItsOwn(_ joiner: Joiner) async throws {
        // Given a call in flight for a plain caller (the scheduler retries nothing).
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("first"))
        await harness.transport.arrivals.wait(for: 1)

        // When an identical request comes with other options, then it is sent on its own.
        harness.api.send(joiner.resource, completion: outcomes.completion("joiner"))
        await harness.transport.arrivals.wait(for: 2)
        #expect(harness.transport.arrivals.count == 2)
        harness.transport.stopHolding(answering: .json(userJSON))
        let results = await outcomes.wait(for: 2)
        #expect(results["first"]?.success?.name == "Ada")
        #expect(results["joiner"]?.success?.name == "Ada")
    }

    @Test func aJoinerThatSpellsOutTheDefaultsShares() async throws {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let defaults = harness.scheduler.configuration
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("first"))
        await harness.transport.arrivals.wait(for: 1)

        harness.api.send(Resource<User>(path: "users/1").redirecting(.follow).limitingResponses(to: defaults.maximumResponseSize)
            .retrying(defaults.retryPolicy), completion: outcomes.completion("joiner"))
        harness.transport.stopHolding(answering: .json(userJSON))

        let results = await outcomes.wait(for: 2)
        #expect(harness.transport.arrivals.count == 1)
        #expect(results["joiner"]?.success?.name == "Ada")
    }

    // MARK: - The cache

    private static let asked = "https://api.test/v1/users/1"

    /// A cache holding a fresh answer to `asked`, which came from `answered` with `body`.
    private static func cache(answeredBy answered: String, body: Data = Data(#"{"id":1,"name":"Ada"}"#.utf8)) -> ResponseCache {
        let cache = ResponseCache()
        let now = Date()
        cache.store(CachedResponse(key: CacheKey(method: "GET", url: asked, identity: nil), url: URL(string: answered)!,
                                   statusCode: 200, fields: ["cache-control": "max-age=600"], body: body,
                                   requested: now, received: now, varied: [:]))
        return cache
    }

    private static func decision(of cache: ResponseCache, redirects: TransportPolicy.Redirects = .follow,
                                 limit: Int = 1 << 20) throws -> ResponseCache.Decision {
        let request = try PreparedRequest.checked(URLRequest(url: URL(string: asked)!))
        let terms = CallTerms(acceptableStatusCodes: 200..<300, redirects: redirects, maximumResponseSize: limit, attemptTimeout: 60, retryPolicy: .never)
        return cache.decide(for: request, ignoring: HeaderNames([]), policy: .useCache, terms: terms, now: Date())
    }

    private static func serves(_ decision: ResponseCache.Decision) -> Bool {
        if case .serve = decision { return true }
        return false
    }

    @Test func aStoredAnswerARedirectLedToIsServedOnlyToCallersWhoWouldFollowIt() throws {
        let elsewhere = Self.cache(answeredBy: "https://cdn.test/users/1")
        #expect(Self.serves(try Self.decision(of: elsewhere, redirects: .follow)))
        #expect(!Self.serves(try Self.decision(of: elsewhere, redirects: .sameOrigin)))
        #expect(!Self.serves(try Self.decision(of: elsewhere, redirects: .never)))

        let sameOrigin = Self.cache(answeredBy: "https://api.test/v2/users/1")
        #expect(Self.serves(try Self.decision(of: sameOrigin, redirects: .sameOrigin)))
        #expect(!Self.serves(try Self.decision(of: sameOrigin, redirects: .never)))

        let direct = Self.cache(answeredBy: Self.asked)
        #expect(Self.serves(try Self.decision(of: direct, redirects: .never)))
    }

    @Test func aStoredAnswerLargerThanACallersLimitIsNotItsAnswer() throws {
        let large = Self.cache(answeredBy: Self.asked, body: Data(repeating: 0x20, count: 100_000))
        #expect(!Self.serves(try Self.decision(of: large, limit: 1_000)))
        #expect(Self.serves(try Self.decision(of: large, limit: 100_000)))
    }
}

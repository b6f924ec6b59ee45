import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// A caller gets what it asked for: sharing a call or a stored answer never hands it what its
/// own options forbid. Callers share a call only under the same terms (``CallTerms``), and the
/// cache serves a caller only an answer its terms allow; callers of other timeouts and retry
/// policies share one call, each held to its own.
@Suite struct CallerTermsTests {
    /// A joiner whose options differ from the first caller's in what it may receive.
    enum Joiner: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case followsNoRedirect, takesAtMost1000Bytes
        var testDescription: String { rawValue }

        var resource: Resource<User> {
            let plain = Resource<User>(path: "users/1")
            return switch self {
            case .followsNoRedirect: plain.redirecting(.never)
            case .takesAtMost1000Bytes: plain.limitingResponses(to: 1_000)
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

    /// Who of the two callers has the short timeout: the first, or the one that joins it.
    @Test(arguments: [false, true])
    func callersOfOtherTimeoutsShareOneCallAndEachEndsAtItsOwn(joinerIsHasty: Bool) async throws {
        let clock = VirtualClock()
        let harness = Harness(reply: { _ in .hold }, configure: { $0.clock = clock })
        let outcomes = Outcomes<User>()
        let hasty = Resource<User>(path: "users/1", timeout: 1)
        let patient = Resource<User>(path: "users/1")
        harness.api.send(joinerIsHasty ? patient : hasty, completion: outcomes.completion(joinerIsHasty ? "patient" : "hasty"))
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(joinerIsHasty ? hasty : patient, completion: outcomes.completion(joinerIsHasty ? "hasty" : "patient"))

        // The hasty one ends at its own timeout; the attempt runs on for the other.
        clock.advance(by: 1)
        let first = await outcomes.wait(for: 1)
        #expect(first["hasty"]?.failure == .timedOut)
        harness.transport.stopHolding(answering: .json(userJSON))
        let results = await outcomes.wait(for: 2)
        #expect(results["patient"]?.success?.name == "Ada")
        #expect(harness.transport.arrivals.count == 1, "one call for both")
    }

    /// Who of the two callers tries again: the first, or the one that joins it.
    @Test(arguments: [false, true])
    func callersOfOtherRetryPoliciesShareOneCallAndEachIsRetriedByItsOwn(joinerRetries: Bool) async throws {
        // The first attempt is held, then answered 503; the second succeeds.
        let arrivals = Counter()
        let harness = Harness { _ in arrivals.next() == 1 ? .hold : .json(userJSON) }
        let outcomes = Outcomes<User>()
        let once = Resource<User>(path: "users/1")
        let persistent = Resource<User>(path: "users/1").retrying(RetryPolicy(maxAttempts: 2, baseDelay: 0))
        harness.api.send(joinerRetries ? once : persistent, completion: outcomes.completion(joinerRetries ? "once" : "persistent"))
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(joinerRetries ? persistent : once, completion: outcomes.completion(joinerRetries ? "persistent" : "once"))

        #expect(harness.transport.release(with: .json("{}", status: 503)))
        let results = await outcomes.wait(for: 2)
        #expect(results["once"]?.failure?.statusCode == 503, "its own policy tries nothing again")
        #expect(results["persistent"]?.success?.name == "Ada")
        #expect(harness.transport.arrivals.count == 2)
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
        let terms = CallTerms(acceptableStatusCodes: 200..<300, redirects: redirects, maximumResponseSize: limit)
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

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialApp
import SocialServer
import Testing

/// Retries, idempotency keys and token refresh, one behaviour at a time against a real server.
@Suite struct ReliabilityIntegrationTests {
    private func keyed(_ text: String, key: String) -> Resource<Post> {
        Resource(.post, path: "posts", headers: ["Idempotency-Key": key], body: .json(PostDraft(text: text)))
    }

    @Test(arguments: TransportKind.allCases)
    func aKeyedPostSentAgainGetsTheStoredFirstAnswer(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            let first = try await fixture.api.client.reply(for: keyed("once only", key: "k-1"))
            let again = try await fixture.api.client.reply(for: keyed("once only", key: "k-1"))

            #expect(first.value == again.value)
            #expect(again.statusCode == 201)
            #expect(fixture.server.arrivals.count(.createPost) == 2)
            #expect(await fixture.server.postCount(withTextPrefix: "once only") == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aKeyReusedForAnotherPayloadIsRefused(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            _ = try await fixture.api.client.value(for: keyed("first text", key: "k-2"))
            do throws(ServiceError) {
                _ = try await fixture.api.client.value(for: keyed("other text", key: "k-2"))
                Issue.record("expected a refusal")
            } catch {
                guard case .idempotencyKeyMismatch(let response) = error else {
                    Issue.record("expected idempotencyKeyMismatch, got \(error)")
                    return
                }
                #expect(response.statusCode == 422)
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aTooManyRequestsAnswerIsWaitedOutAndRetried(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, retryPolicy: .init(maxAttempts: 3, baseDelay: 0.01)) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.feed] = Fault(status: 429, retryAfterSeconds: 1, failFirst: 1)
            let clock = ContinuousClock()
            let start = clock.now
            let page = try await fixture.api.client.value(for: .feed(page: 1))

            #expect(page.page == 1)
            #expect(fixture.server.arrivals.count(.feed) == 2)
            #expect(clock.now - start >= .seconds(1)) // Retry-After honoured, not the 10 ms backoff
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anExpiredTokenIsRefreshedByLoggingInAgain(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let session = try await fixture.logIn()
            await fixture.server.expireTokens()

            let me = try await fixture.api.client.value(for: .me)

            #expect(me == session.user)
            #expect(fixture.server.arrivals.all.map(\.route) == [.login, .me, .login, .me])
            #expect(fixture.api.authenticator.token != session.token)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFailingRouteRecoversWithinTheRetryBudget(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, retryPolicy: .init(maxAttempts: 4, baseDelay: 0.01)) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.user] = Fault(resetConnection: true, failFirst: 2)
            #expect(try await fixture.api.client.value(for: .user(2)).name == "Grace")
        }
    }
}

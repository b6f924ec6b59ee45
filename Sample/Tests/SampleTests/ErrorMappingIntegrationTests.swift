import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialApp
import SocialServer
import Testing

/// Each typed error, produced by a real response from a real server.
@Suite struct ErrorMappingIntegrationTests {
    private func error(_ body: () async throws -> Void) async -> ServiceError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? ServiceError
        }
    }

    @Test(arguments: TransportKind.allCases)
    func notFoundCarriesTheServersMessage(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            let failure = await error { _ = try await fixture.api.client.value(for: .user(999)) }
            #expect(failure?.statusCode == 404)
            if case .server(let response)? = failure { #expect(response.message == "no such user") }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anHTMLErrorPageIsAServerErrorWithoutAMessage(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.user] = Fault(htmlErrorPage: true)
            let failure = await error { _ = try await fixture.api.client.value(for: .user(1)) }
            guard case .server(let response)? = failure else {
                Issue.record("expected a server error, got \(String(describing: failure))")
                return
            }
            #expect(response.statusCode == 500)
            #expect(response.message == nil)
            #expect(String(decoding: response.body, as: UTF8.self).contains("<h1>Something broke</h1>"))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func malformedJSONIsUndecodable(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.me] = Fault(malformedJSON: true)
            let failure = await error { _ = try await fixture.api.client.value(for: .me) }
            guard case .undecodable(let details)? = failure else {
                Issue.record("expected undecodable, got \(String(describing: failure))")
                return
            }
            #expect(details.modelType == "User")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aConnectionClosedMidBodyIsAConnectionFailure(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.me] = Fault(closeMidBody: true)
            let failure = await error { _ = try await fixture.api.client.value(for: .me) }
            guard case .connectionLost(let urlError)? = failure else {
                Issue.record("expected connectionLost, got \(String(describing: failure))")
                return
            }
            #expect(urlError.code == .networkConnectionLost)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSlowServerTimesOut(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.me] = .latency(milliseconds: 3_000)
            let clock = ContinuousClock()
            let start = clock.now
            let failure = await error { _ = try await fixture.api.client.value(for: Resource<User>(path: "me", timeout: 0.5)) }
            #expect(failure == .timedOut)
            // Honoured, not fired at once (FoundationNetworking truncates it to whole seconds).
            #expect(clock.now - start >= .milliseconds(500))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func withoutALoginA401EndsAsAFailedAuthentication(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let failure = await error { _ = try await fixture.api.client.value(for: .me) }
            guard case .authenticationFailed(let cause)? = failure else {
                Issue.record("expected authenticationFailed, got \(String(describing: failure))")
                return
            }
            #expect(cause.statusCode == 401)
            #expect(fixture.server.arrivals.all.map(\.route) == [.me])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aWrongPasswordIsUnauthorized(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let failure = await error {
                _ = try await fixture.api.auth.logIn(Credentials(username: "ada", password: "wrong"))
            }
            #expect(failure?.statusCode == 401)
            #expect(fixture.api.authenticator.token == nil)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aServerThatIsNotRunningCannotBeConnectedTo(over transport: TransportKind) async throws {
        let refusing = try RefusingPort()
        let url = URL(string: "http://127.0.0.1:\(refusing.port)")!
        let (made, shutDown) = transport.make()
        let api = SocialAPI(baseURL: url, configuration: .init(transport: made, retryPolicy: .never))

        let failure = await error { _ = try await api.client.value(for: .me) }
        await shutDown()
        withExtendedLifetime(refusing) {}

        guard case .cannotConnect(let urlError)? = failure else {
            Issue.record("expected cannotConnect, got \(String(describing: failure))")
            return
        }
        #expect(urlError.code == .cannotConnectToHost)
    }

    @Test(arguments: TransportKind.allCases)
    func anInjectedStatusCarriesItsRetryAfterHeader(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.feed] = Fault(status: 503, retryAfterSeconds: 7)
            let failure = await error { _ = try await fixture.api.client.value(for: .feed(page: 1)) }
            guard case .server(let response)? = failure else {
                Issue.record("expected a server error, got \(String(describing: failure))")
                return
            }
            #expect(response.statusCode == 503)
            #expect(response.headers["retry-after"] == "7")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDeletedPostIsGone(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            let post = try await ComposeScreenModel(api: fixture.api).submit(PostDraft(text: "short-lived")).get().value
            #expect(try await fixture.api.posts.post(post.id) == post)

            try await fixture.api.posts.delete(post.id)

            let failure = await error { _ = try await fixture.api.posts.post(post.id) }
            #expect(failure?.statusCode == 404)
            #expect(fixture.server.arrivals.count(.deletePost) == 1)
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialApp
import SocialServer
import Testing

/// A joiner gets what it asked for, over real sockets: one that follows no redirect, sent
/// while an identical request that follows redirects is on the wire, gets the 302 it would
/// have got alone, not the other origin's 200; callers of other timeouts and retry policies
/// share one call, each held to its own.
@Suite struct CallerTermsIntegrationTests {
    @Test(arguments: TransportKind.allCases)
    func aJoinerThatFollowsNoRedirectGetsTheRedirectNotTheOtherOriginsAnswer(over transport: TransportKind) async throws {
        let other = try await SocialServer.start()
        defer { Task { await other.stop() } }
        try await Fixture.with(over: transport) { fixture in
            // Given a request that follows redirects, held at a server that redirects elsewhere.
            let api = APIClient(baseURL: fixture.server.baseURL, scheduler: fixture.api.scheduler)
            fixture.server.faults[.echo] = Fault(redirectLocation: "\(other.baseURL.absoluteString)/echo")
            fixture.server.faults.hold(.echo)
            let echo = Resource<[String: String]>(path: "echo")
            let following = Task { try await api.value(for: echo) }
            #expect(await fixture.server.arrivals.wait(for: 1, at: .echo))

            // When an identical request that follows no redirect is sent meanwhile.
            let notFollowing = Task { try await api.value(for: echo.redirecting(.never)) }
            #expect(await fixture.server.arrivals.wait(for: 2, at: .echo))
            fixture.server.faults.release(.echo)

            // Then each gets what it would have got alone.
            let followed = try await following.value
            #expect(!followed.isEmpty)
            await #expect { try await notFollowing.value } throws: { error in
                (error as? ServiceError)?.statusCode == 302
            }
            #expect(other.arrivals.count(.echo) == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aJoinerWithAShorterTimeoutEndsAtItWhileTheCallRunsOnForTheFirst(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let api = APIClient(baseURL: fixture.server.baseURL, scheduler: fixture.api.scheduler)
            fixture.server.faults.hold(.echo)
            let echo = Resource<[String: String]>(path: "echo")
            let patient = Task { try await api.value(for: echo) }
            #expect(await fixture.server.arrivals.wait(for: 1, at: .echo))

            var hasty = echo
            hasty.timeout = 1
            await #expect(throws: ServiceError.timedOut) { try await api.value(for: hasty) }
            fixture.server.faults.release(.echo)

            let answered = try await patient.value
            #expect(!answered.isEmpty, "the attempt ran on for the patient caller")
            #expect(fixture.server.arrivals.count(.echo) == 1, "one call for both")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func callersOfOtherRetryPoliciesShareTheCallAndEachIsRetriedByItsOwn(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let api = APIClient(baseURL: fixture.server.baseURL, scheduler: fixture.api.scheduler)
            fixture.server.faults[.echo] = Fault(status: 503, failFirst: 1)
            fixture.server.faults.hold(.echo)
            let echo = Resource<[String: String]>(path: "echo")
            let once = Task { try await api.value(for: echo.retrying(.never)) }
            #expect(await fixture.server.arrivals.wait(for: 1, at: .echo))
            // Sent with a completion, it has joined once `send` returns.
            let (persistent, ended) = AsyncStream.makeStream(of: Result<[String: String], ServiceError>.self)
            api.send(echo.retrying(RetryPolicy(maxAttempts: 2, baseDelay: 0))) { result in
                ended.yield(result)
                ended.finish()
            }
            #expect(api.scheduler.census.networkCalls == 1, "it joined the call on the wire")
            fixture.server.faults.release(.echo)

            await #expect { try await once.value } throws: { error in (error as? ServiceError)?.statusCode == 503 }
            let retried = await persistent.first { _ in true }
            #expect(retried?.isSuccess == true, "its own policy tried again")
            #expect(fixture.server.arrivals.count(.echo) == 2)
        }
    }
}

private extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

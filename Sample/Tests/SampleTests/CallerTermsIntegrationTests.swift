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
/// have got alone, not the other origin's 200.
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
}

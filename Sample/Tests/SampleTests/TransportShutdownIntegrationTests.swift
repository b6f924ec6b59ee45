import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialApp
import SocialServer
import Testing

/// Shutting a transport down while requests wait, run and back off, over real sockets: each
/// caller ends once, cancelled, and a request sent afterwards gets a typed error. Over
/// URLSession this trapped the process ("Session invalidated") as the next waiting request
/// asked the session for a task.
@Suite struct TransportShutdownIntegrationTests {
    @Test(arguments: TransportKind.allCases)
    func shuttingDownEndsRunningAndWaitingCallersCancelled(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 2) { fixture in
            // Given six requests to a host whose budget is two, held at the server.
            _ = try await fixture.logIn()
            fixture.server.faults.hold(.user)
            defer { fixture.server.faults.release(.user) }
            let callers = (1...6).map { id in
                Task { await Self.result { try await fixture.api.client.value(for: .user(id)) } }
            }
            #expect(await fixture.server.arrivals.wait(for: 2, at: .user))

            // When the transport shuts down.
            await fixture.closeTransport()

            // Then every caller ends cancelled, and nothing more is sent.
            for caller in callers {
                #expect(await caller.value == .cancelled)
            }
            #expect(fixture.server.arrivals.count(.user) == 2)
            #expect(fixture.api.scheduler.census.callers == 0)
            #expect(await Self.result { try await fixture.api.client.value(for: .user(7)) } == .transportClosed)
            #expect(fixture.server.arrivals.count(.user) == 2)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func shuttingDownEndsACallerWaitingOutARetryAfterAtOnce(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, retryPolicy: .default, eventMonitors: [tally]) { fixture in
            // Given a call that waits a minute to retry after a 503.
            _ = try await fixture.logIn()
            fixture.server.faults[.user] = Fault(status: 503, retryAfterSeconds: 60)
            let caller = Task { await Self.result { try await fixture.api.client.value(for: .user(1)) } }
            #expect(await tally.retried.wait(for: 1) == 1)

            // When the transport shuts down, then the caller ends cancelled at once.
            let shutDown = Date()
            await fixture.closeTransport()
            #expect(await caller.value == .cancelled)
            #expect(Date().timeIntervalSince(shutDown) < 30)
            #expect(fixture.server.arrivals.count(.user) == 1)
        }
    }

    /// The error a request ended with, or nil if it succeeded.
    private static func result<Value>(_ body: () async throws -> Value) async -> ServiceError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? ServiceError
        }
    }
}

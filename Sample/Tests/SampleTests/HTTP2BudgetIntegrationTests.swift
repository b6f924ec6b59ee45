import Foundation
import NetworkScheduler
import Testing

/// Over a real HTTP/2 server (TLS, ALPN `h2`) through the AsyncHTTPClient transport: once the
/// host has answered over HTTP/2, a burst runs many streams at once, beyond the transport's 8
/// connections; an urgent request sent into a host full of low-priority ones still goes at
/// once; each request tells the server its urgency; and once the host answers over HTTP/1.1
/// again, the budget is the transport's connections again.
@Suite struct HTTP2BudgetIntegrationTests {
    private typealias Answer = HTTP2Server.Answer

    /// Runs `body` with a server that answers `/meet/` in groups of `meeting`, and a scheduler
    /// over AsyncHTTPClient that trusts it, then shuts both down.
    private static func withServer(
        meeting: Int = 1,
        configure: (inout RequestScheduler.Configuration) -> Void = { _ in },
        _ body: (HTTP2Server, APIClient) async throws -> Void
    ) async throws {
        let server = try await HTTP2Server.start(meeting: meeting)
        let (scheduler, transport, client) = try server.scheduler(configure)
        do {
            try await body(server, APIClient(baseURL: server.baseURL, scheduler: scheduler))
        } catch {
            server.releaseAll()
            try? await transport.shutdown()
            try? await client.shutdown()
            await server.stop()
            throw error
        }
        try await transport.shutdown()
        try await client.shutdown()
        await server.stop()
    }

    @Test func aBurstRunsManyStreamsAtOnceOnceTheHostAnsweredOverHTTP2() async throws {
        try await Self.withServer(meeting: 40) { server, api in
            // The host answers one request first, as after a login: over HTTP/2.
            _ = try await api.value(for: Resource<Answer>(path: "echo"))
            #expect(api.scheduler.currentBudget(of: server.baseURL) == api.scheduler.configuration.multiplexedHostBudget)

            // 40 requests each answered only once all 40 are at the server at once.
            let paths = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<40 { group.addTask { try await api.value(for: Resource<Answer>(path: "meet/\(index)")).path } }
                return try await group.reduce(into: []) { $0.append($1) }
            }

            #expect(paths.count == 40)
            #expect(server.mostInFlight == 40, "all 40 on the wire at once, over a transport of 8 connections")
        }
    }

    @Test func anUrgentRequestIntoAHostFullOfLowPriorityOnesGoesAtOnce() async throws {
        // 16 streams: low-priority calls may hold 14 (7 of 8 connections' share), 2 kept.
        try await Self.withServer(configure: { $0.multiplexedHostBudget = 16 }) { server, api in
            _ = try await api.value(for: Resource<Answer>(path: "echo"))
            let lows = (0..<30).map { index in
                Task { try await api.value(for: Resource<Answer>(path: "held/\(index)"), priority: .low) }
            }
            #expect(await server.waitForArrivals(1 + 14))

            let urgent = try await api.value(for: Resource<Answer>(path: "echo"), priority: .high)

            #expect(urgent.path == "/echo")
            #expect(server.arrived.count == 1 + 14 + 1, "14 low-priority requests held, the urgent one beside them")
            server.releaseHeld()
            for low in lows { _ = try await low.value }
            #expect(server.arrived.count == 1 + 30 + 1)
        }
    }

    @Test func theBudgetGoesBackToConnectionsWhenTheHostAnswersOverHTTP1Again() async throws {
        let server = try await HTTP2Server.start()
        // One server, which speaks HTTP/2 or HTTP/1.1 as the client's ALPN asks: the host's
        // answers change protocol when the transport moves to a client that offers HTTP/1.1 only.
        let transport = try SwitchingTransport(trusting: server.certificates.caFile)
        let scheduler = RequestScheduler { $0.transport = transport }
        let api = APIClient(baseURL: server.baseURL, scheduler: scheduler)
        do {
            _ = try await api.value(for: Resource<Answer>(path: "echo"))
            #expect(scheduler.currentBudget(of: server.baseURL) == scheduler.configuration.multiplexedHostBudget)

            transport.switchToHTTP1()
            _ = try await api.value(for: Resource<Answer>(path: "echo"))
            #expect(scheduler.currentBudget(of: server.baseURL) == 8, "the transport's connections")

            let held = (0..<20).map { index in Task { try await api.value(for: Resource<Answer>(path: "held/\(index)")) } }
            #expect(await server.waitForArrivals(2 + 8))
            #expect(scheduler.census.queuedOperations == 8, "8 attempts started, 12 wait in the scheduler")
            server.releaseHeld()
            for request in held { _ = try await request.value }
            #expect(server.arrived.count == 2 + 20)
        } catch {
            server.releaseAll()
            try? await transport.shutdown()
            await server.stop()
            throw error
        }
        try await transport.shutdown()
        await server.stop()
    }

    @Test func theServerHearsEachRequestsUrgencyOverHTTP2() async throws {
        try await Self.withServer { _, api in
            let high = try await api.value(for: Resource<Answer>(path: "echo"), priority: .high)
            let background = try await api.value(for: Resource<Answer>(path: "echo"), priority: .background)

            #expect(high.headers["priority"] == "u=1")
            #expect(background.headers["priority"] == "u=7")
        }
    }
}

import AsyncHTTPClient
import Foundation
import Gateway
import NetworkScheduler
import NetworkSchedulerTesting
import NIOCore
import SocialApp
import SocialServer
import Testing

/// The gateway in front of SocialServer: many clients, one scheduler over AsyncHTTPClient.
@Suite struct GatewayTests {
    /// Tells each caller that joined a call already in flight.
    private final class Joins: RequestEvent.Monitor {
        let log = EventLog<Void>()
        func record(_ event: RequestEvent) {
            if case .joined = event { log.append(()) }
        }
    }

    private struct Answer: Sendable {
        let status: Int
        let user: User?
        let shared: Bool
    }

    /// Runs `body` with an upstream SocialServer, a gateway in front of it, and a client with
    /// room for many connections to the gateway; stops them all afterwards.
    private static func with(
        deadline: TimeInterval,
        monitors: [any RequestEvent.Monitor] = [],
        configure: (inout RequestScheduler.Configuration) -> Void = { _ in },
        _ body: (SocialServer, Gateway, @escaping @Sendable (String) async -> Answer) async throws -> Void
    ) async throws {
        let upstream = try await SocialServer.start()
        let gateway = try await Gateway.start(upstream: upstream.baseURL, credentials: Fixture.ada, deadline: deadline) {
            $0.eventMonitors = monitors
            configure(&$0)
        }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let get: @Sendable (String) async -> Answer = { path in
            guard let response = try? await client.execute(HTTPClientRequest(url: gateway.baseURL.absoluteString + path), timeout: .seconds(60)),
                  let body = try? await response.body.collect(upTo: 1_024 * 1_024) else { return Answer(status: 0, user: nil, shared: false) }
            return Answer(status: Int(response.status.code), user: try? JSONDecoder().decode(User.self, from: Data(body.readableBytesView)),
                          shared: response.headers.first(name: "X-Shared") == "true")
        }
        do {
            try await body(upstream, gateway, get)
        } catch {
            Issue.record(error)
        }
        try await client.shutdown()
        await gateway.stop()
        await upstream.stop()
    }

    @Test func fiftyIdenticalClientRequestsBecomeOneUpstreamCall() async throws {
        let joins = Joins()
        try await Self.with(deadline: 60, monitors: [joins]) { upstream, _, get in
            // Given the upstream holding the profile until every client has asked
            upstream.faults.hold(.user)
            let answers = Task {
                await withTaskGroup(of: Answer.self) { group in
                    for _ in 0..<50 { group.addTask { await get("/profiles/1") } }
                    return await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(await upstream.arrivals.wait(for: 1, at: .user))
            #expect(await joins.log.wait(for: 49).count == 49)

            // When it answers
            upstream.faults.release(.user)

            // Then every client has the profile, from one upstream call
            let all = await answers.value
            #expect(all.count == 50)
            #expect(all.allSatisfy { $0.status == 200 && $0.user?.id == 1 && $0.shared })
            #expect(upstream.arrivals.count(.user) == 1)
        }
    }

    /// Tells each time the upstream's host is paused.
    private final class Pauses: RequestEvent.Monitor {
        let log = EventLog<Void>()
        func record(_ event: RequestEvent) {
            if case .hostHealthChanged(_, .paused) = event { log.append(()) }
        }
    }

    @Test func anUpstreamTooManyRequestsPausesEveryCallToItUntilItsRetryAfter() async throws {
        // A pause far longer than the test, and a deadline long enough for the 429 to come back
        // before the first client leaves: a busy machine (CI under the sanitizer stalled ~30 s)
        // outran a 1 s deadline, so that the call was cancelled before it was told to wait.
        let pauses = Pauses()
        try await Self.with(deadline: 8, monitors: [pauses], configure: {
            $0.hostHealth.maximumPause = 3_600
            $0.retryPolicy.maxRetryAfter = 3_600
        }) { upstream, gateway, get in
            // Given an upstream that answers its next profile with a 429 asking for 10 minutes
            upstream.faults[.user] = Fault(status: 429, retryAfterSeconds: 600, failFirst: 1)

            // When a client asks, and once the upstream is paused another asks for another profile
            let first = Task { await get("/profiles/1") }
            #expect(await pauses.log.wait(for: 1).count == 1, "the 429 did not pause the upstream")
            let second = await get("/profiles/2")

            // Then both waited at most their deadline, and the second was never sent upstream
            #expect(await first.value.status == 504)
            #expect(second.status == 504)
            #expect(upstream.arrivals.count(.user) == 1)
            guard case .paused = gateway.upstream.scheduler.health(of: upstream.baseURL) else {
                Issue.record("the upstream is not paused: \(gateway.upstream.scheduler.health(of: upstream.baseURL))")
                return
            }
        }
    }

    @Test func aDeadlineBoundsEveryClientsWaitForAnUpstreamThatHoldsOn() async throws {
        try await Self.with(deadline: 0.5) { upstream, _, get in
            upstream.faults.hold(.user)

            let answers = await withTaskGroup(of: Answer.self) { group in
                for id in 0..<20 { group.addTask { await get("/profiles/\(id % 4 + 1)") } }
                return await group.reduce(into: []) { $0.append($1) }
            }

            #expect(answers.map(\.status) == Array(repeating: 504, count: 20))
            upstream.faults.release(.user)
        }
    }

    @Test func anUpstreamNotFoundIsTheClientsNotFound() async throws {
        try await Self.with(deadline: 5) { _, _, get in
            #expect(await get("/profiles/999").status == 404)
            #expect(await get("/profiles/x").status == 400)
        }
    }
}

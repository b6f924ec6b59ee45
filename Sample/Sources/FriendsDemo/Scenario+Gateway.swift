import AsyncHTTPClient
import Foundation
import Gateway
import NetworkScheduler
import NIOCore
import SocialApp
import SocialServer

// Step 12: the server-side story. A gateway (a Hummingbird server, in this process) calls the
// API through one scheduler over AsyncHTTPClient, for many clients at once.
extension Scenario {
    func aGatewayServesManyClients() async throws {
        narrator.step(12, Self.steps[11])
        guard let server = faultyServer() else { return }
        let gateway = try await Gateway.start(upstream: server.baseURL, credentials: Credentials(username: "ada", password: "secret"),
                                              deadline: 1)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 100
        let clients = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { _ = clients.shutdown() }
        let get = { @Sendable (id: Int) async -> (status: UInt, shared: Bool) in
            let request = HTTPClientRequest(url: "\(gateway.baseURL.absoluteString)/profiles/\(id)")
            guard let response = try? await clients.execute(request, timeout: .seconds(30)) else { return (0, false) }
            _ = try? await response.body.collect(upTo: 1_024 * 1_024)
            return (response.status.code, response.headers.first(name: "X-Shared") == "true")
        }

        // A hundred clients ask for four profiles, while the API takes 300 ms over each.
        server.faults[.user] = .latency(milliseconds: 300)
        let before = server.arrivals.count(.user)
        let answers = await withTaskGroup(of: (status: UInt, shared: Bool).self) { group in
            for client in 0..<100 { group.addTask { await get(client % 4 + 1) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let upstreamCalls = server.arrivals.count(.user) - before
        narrator.say("   100 clients asked the gateway for 4 profiles: \(answers.count { $0.status == 200 }) got theirs, "
            + "\(answers.count(where: \.shared)) through a shared call; the API saw \(upstreamCalls) calls")
        narrator.check(answers.allSatisfy { $0.status == 200 } && upstreamCalls == 4, "one upstream call per profile")

        // The API asks the gateway to wait 30 s: every call to it waits, and no client longer than its deadline.
        server.faults[.user] = Fault(status: 429, retryAfterSeconds: 30, failFirst: 1)
        let pausedBefore = server.arrivals.count(.user)
        let started = Date()
        let refused = await get(5)
        let behind = await get(6)
        let waited = Date().timeIntervalSince(started)
        server.faults[.user] = nil
        let arrived = server.arrivals.count(.user) - pausedBefore
        narrator.say("   after a 429 asking for 30 s: the clients got \(refused.status) and \(behind.status) within "
            + "\(String(format: "%.1f", waited)) s; the API saw \(arrived) call")
        narrator.check(refused.status == 504 && behind.status == 504 && arrived == 1,
                       "the 429 paused the gateway's calls to the API, and the 1 s deadline bounded each client's wait")
        await gateway.stop()
    }
}

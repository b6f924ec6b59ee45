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
        let admissions = Admissions(ofPathsStartingWith: "/users/")
        let gateway = try await Gateway.start(upstream: server.baseURL, credentials: Credentials(username: "ada", password: "secret"),
                                              deadline: 2) { $0.eventMonitors.append(admissions) }
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

        // A hundred clients ask for four profiles. The API holds its answers until all hundred
        // have reached the gateway: on a busy machine they may take longer to arrive than the
        // API takes to answer, and a late one would be a new call, not a shared one.
        server.faults.hold(.user)
        let before = server.arrivals.count(.user)
        async let asked = withTaskGroup(of: (status: UInt, shared: Bool).self) { group in
            for client in 0..<100 { group.addTask { await get(client % 4 + 1) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let admitted = await admissions.wait(for: 100, within: 1.5)
        server.faults.release(.user)
        let answers = await asked
        let upstreamCalls = server.arrivals.count(.user) - before
        narrator.say("   100 clients asked the gateway for 4 profiles: \(answers.count { $0.status == 200 }) got theirs, "
            + "\(answers.count(where: \.shared)) through a shared call; the API saw \(upstreamCalls) calls")
        narrator.check(admitted == 100 && answers.allSatisfy { $0.status == 200 } && upstreamCalls == 4, "one upstream call per profile")

        // The API asks the gateway to wait 30 s: every call to it waits, and no client longer than its deadline.
        server.faults[.user] = Fault(status: 429, retryAfterSeconds: 30, failFirst: 1)
        let pausedBefore = server.arrivals.count(.user)
        let started = Date()
        async let refused = get(5)
        // The second asks once the first's 429 has paused the gateway's calls to the API.
        for _ in 0..<400 {
            if case .paused = gateway.upstream.scheduler.health(of: server.baseURL) { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        async let behind = get(6)
        let (first, second) = await (refused, behind)
        let waited = Date().timeIntervalSince(started)
        server.faults[.user] = nil
        let arrived = server.arrivals.count(.user) - pausedBefore
        narrator.say("   after a 429 asking for 30 s: the clients got \(first.status) and \(second.status) within "
            + "\(String(format: "%.1f", waited)) s; the API saw \(arrived) call")
        narrator.check(first.status == 504 && second.status == 504 && arrived == 1,
                       "the 429 paused the gateway's calls to the API, and the 2 s deadline bounded each client's wait")
        await gateway.stop()
    }
}

import Dispatch
import Foundation
import NetworkScheduler
import NIOConcurrencyHelpers
import SocialApp
import SocialServer
import Testing

/// Host health and rate limits over real sockets against the SocialServer.
@Suite struct HostHealthIntegrationTests {
    /// The story of a host, in order: its health changes and the paths of the calls started.
    final class HostStory: RequestEventMonitor {
        let lines = NIOLockedValueBox<[String]>([])
        let starts = NIOLockedValueBox<[UInt64]>([])
        let changes = WaitableCount()

        func record(_ event: RequestEvent) {
            switch event {
            case .hostHealthChanged(_, let health):
                let name = switch health {
                case .available: "available"
                case .paused: "paused"
                case .probing: "probing"
                }
                lines.withLockedValue { $0.append(name) }
                changes.add()
            case .started(let request, _):
                let now = DispatchTime.now().uptimeNanoseconds
                starts.withLockedValue { $0.append(now) }
                lines.withLockedValue { $0.append("started \(request.url?.path ?? "")") }
            default:
                break
            }
        }
    }

    @Test func aRetryAfterPausesTheHostForEveryRequestThenAProbeOpensIt() async throws {
        let story = HostStory()
        try await Fixture.with(eventMonitors: [story]) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.feed] = Fault(status: 429, retryAfterSeconds: 1, failFirst: 1)
            let limited = Ledger<FeedPage>(callers: 1)
            fixture.api.client.send(.feed(page: 1)) { limited.record(0, $0) }
            #expect(await limited.ended.wait(for: 1) == 1)
            #expect(limited.result(of: 0)?.failure?.statusCode == 429)
            let ledger = Ledger<User>(callers: 2)
            guard case .paused(let until) = fixture.api.scheduler.health(of: fixture.server.baseURL) else {
                Issue.record("the host was not paused")
                return
            }
            #expect(until > Date())

            // Sent while the host is paused: neither starts before the probe is let through.
            fixture.api.client.send(.user(1)) { ledger.record(0, $0) }
            fixture.api.client.send(.user(2)) { ledger.record(1, $0) }
            #expect(await ledger.ended.wait(for: 2) == 2)
            #expect(ledger.results.allSatisfy { (try? $0.get()) != nil })

            let lines = story.lines.withLockedValue { $0 }.filter { !$0.hasPrefix("started /login") }
            #expect(Array(lines.prefix(5)) == ["started /feed", "paused", "probing", "started /users/1", "available"])
            #expect(lines.last == "started /users/2")
            #expect(fixture.api.scheduler.health(of: fixture.server.baseURL) == .available)
        }
    }

    @Test func aRateLimitedHostStartsNoMoreThanItsBucketAllows() async throws {
        let story = HostStory()
        let limit = RateLimit(requestsPerSecond: 20, burst: 2)
        try await Fixture.with(eventMonitors: [story], configure: { $0.rateLimits = ["127.0.0.1": limit] }) { fixture in
            let ledger = Ledger<User>(callers: 6)
            for index in 0..<6 {
                fixture.api.client.send(.user(index + 1)) { ledger.record(index, $0) }
            }
            #expect(await ledger.ended.wait(for: 6) == 6)
            #expect(fixture.server.arrivals.count(.user) == 6)
            // After a burst of two, one token every 50 ms: the sixth starts 200 ms after the first at the earliest.
            let starts = story.starts.withLockedValue { $0 }
            #expect(starts.count == 6)
            for (index, start) in starts.enumerated() where index >= limit.burst {
                let earliest = Double(index - limit.burst + 1) / limit.requestsPerSecond
                #expect(Double(start - starts[0]) / 1_000_000_000 >= earliest - 0.005, "start \(index)")
            }
        }
    }
}

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
    final class HostStory: RequestEvent.Monitor {
        let lines = NIOLockedValueBox<[String]>([])
        let starts = NIOLockedValueBox<[UInt64]>([])
        /// When each profile started, and when each pause was to end, by the wall clock.
        let profileStarts = NIOLockedValueBox<[Date]>([])
        let pauseEnds = NIOLockedValueBox<[Date]>([])
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
                if case .paused(let until, _) = health { pauseEnds.withLockedValue { $0.append(until) } }
                changes.add()
            case .started(let request, _):
                let now = DispatchTime.now().uptimeNanoseconds
                starts.withLockedValue { $0.append(now) }
                lines.withLockedValue { $0.append("started \(request.url?.path ?? "")") }
                if request.url?.path.hasPrefix("/users/") == true { profileStarts.withLockedValue { $0.append(Date()) } }
            default:
                break
            }
        }
    }

    /// Whether the monitor heard the host paused for `reason`; while that pause lasts, the host
    /// reports it too. A machine loaded by the other suites may get here after the pause ended
    /// (under the thread sanitizer, more than 3 s after the answer that paused it), so the
    /// pause is read from the event. Records an issue and returns false when it was not heard.
    private static func heardPaused(_ story: HostStory, for reason: HostHealth.PauseReason,
                                    health: () -> HostHealth) async -> Bool {
        #expect(await story.changes.wait(for: 1) >= 1)
        guard let until = story.pauseEnds.withLockedValue({ $0.first }) else {
            Issue.record("the host was not paused (\(reason)): \(story.lines.withLockedValue { $0 })")
            return false
        }
        let reported = health()
        guard Date() < until.addingTimeInterval(-0.1) else { return true }
        guard case .paused(let reportedUntil, reason: reason) = reported else {
            Issue.record("the host was not paused (\(reason)) while its pause lasted: \(reported)")
            return false
        }
        // Both dates are made from the scheduler's uptime, each when it was asked for.
        #expect(abs(reportedUntil.timeIntervalSince(until)) < 0.05)
        return true
    }

    /// Logs in, then has the server answer the feed 429 with a `Retry-After` of `seconds`:
    /// returns once the monitor heard the host paused, or false (with an issue recorded).
    private static func pauseTheHost(of fixture: Fixture, story: HostStory, for seconds: Int) async throws -> Bool {
        _ = try await fixture.logIn()
        fixture.server.faults[.feed] = Fault(status: 429, retryAfterSeconds: seconds, failFirst: 1)
        let limited = Ledger<FeedPage>(callers: 1)
        fixture.api.client.send(.feed(page: 1)) { limited.record(0, $0) }
        #expect(await limited.ended.wait(for: 1) == 1)
        #expect(limited.result(of: 0)?.failure?.statusCode == 429)
        return await heardPaused(story, for: .askedToWait, health: { fixture.api.scheduler.health(of: fixture.server.baseURL) })
    }

    @Test(arguments: TransportKind.allCases)
    func aRetryAfterPausesTheHostForEveryRequestThenAProbeOpensIt(over transport: TransportKind) async throws {
        let story = HostStory()
        try await Fixture.with(over: transport, eventMonitors: [story]) { fixture in
            // Long enough to be seen on a machine busy with the other suites' transfers.
            guard try await Self.pauseTheHost(of: fixture, story: story, for: 3) else { return }
            let ledger = Ledger<User>(callers: 2)

            // Sent while the host is paused: neither starts before the probe is let through.
            fixture.api.client.send(.user(1)) { ledger.record(0, $0) }
            fixture.api.client.send(.user(2)) { ledger.record(1, $0) }
            #expect(await ledger.ended.wait(for: 2) == 2)
            #expect(ledger.results.allSatisfy { (try? $0.get()) != nil })

            // Events are told after the scheduler's lock is released, so a start and a change of
            // health decided in one event may be told in either order: compare times instead.
            // Each is told after its own turn of the lock, maybe after the callers' completions:
            // wait for the three (paused, probing, available) before reading them.
            #expect(await story.changes.wait(for: 3) >= 3)
            let lines = story.lines.withLockedValue { $0 }.filter { !$0.hasPrefix("started /login") }
            #expect(Array(lines.prefix(2)) == ["started /feed", "paused"])
            // Changes of different events may be told in any order (each after its own lock); the
            // host's health at the end is read below.
            #expect(Set(lines.filter { !$0.hasPrefix("started") }) == ["paused", "probing", "available"])
            let pauseEnd = story.pauseEnds.withLockedValue { $0 }
            let profileStarts = story.profileStarts.withLockedValue { $0 }
            #expect(pauseEnd.count == 1 && profileStarts.count == 2)
            // Ten milliseconds of slack: the pause's end is a date made from the uptime.
            #expect(pauseEnd.first.map { end in profileStarts.allSatisfy { $0 >= end.addingTimeInterval(-0.01) } } == true)
            #expect(fixture.api.scheduler.health(of: fixture.server.baseURL) == .available)
        }
    }

    /// Issue 49's case over real sockets: after a 429 with `Retry-After`, the probe is answered
    /// 200 at once with a body that trickles (a byte every 20 ms: about 12 s). The host opens on
    /// the probe's head, and a quick GET waiting behind it is answered while that body trickles;
    /// it once waited for the whole body.
    @Test(arguments: TransportKind.allCases)
    func aProbesHeadOpensItsHostWhileItsBodyTrickles(over transport: TransportKind) async throws {
        let story = HostStory()
        try await Fixture.with(over: transport, eventMonitors: [story]) { fixture in
            fixture.server.faults[.me] = Fault(trickleMilliseconds: 20)
            guard try await Self.pauseTheHost(of: fixture, story: story, for: 1) else { return }

            // Given: the trickling GET goes as the probe when the pause ends; a quick one waits.
            let probe = Ledger<User>(callers: 1)
            let probeHandle = fixture.api.client.send(.me) { probe.record(0, $0) }
            let quick = Ledger<User>(callers: 1)
            fixture.api.client.send(.user(1)) { quick.record(0, $0) }

            // Then: the quick one is answered while the probe's body is still coming.
            #expect(await quick.ended.wait(for: 1) == 1)
            #expect(probe.ended.value == 0)
            #expect((try? quick.result(of: 0)?.get())?.id == 1)
            let starts = story.lines.withLockedValue { $0 }.filter { $0.hasPrefix("started") && !$0.hasSuffix("/login") }
            #expect(starts == ["started /feed", "started /me", "started /users/1"])
            #expect(fixture.api.scheduler.health(of: fixture.server.baseURL) == .available)
            probeHandle.cancel()
            #expect(await probe.ended.wait(for: 1) == 1)
            #expect(probe.result(of: 0)?.failure == .cancelled)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRateLimitedHostStartsNoMoreThanItsBucketAllows(over transport: TransportKind) async throws {
        let story = HostStory()
        let limit = HostHealth.RateLimit(requestsPerSecond: 20, burst: 2)
        try await Fixture.with(over: transport, eventMonitors: [story], configure: { $0.rateLimits = ["127.0.0.1": limit] }) { fixture in
            let ledger = Ledger<User>(callers: 6)
            for index in 0..<6 {
                fixture.api.client.send(.user(index + 1)) { ledger.record(index, $0) }
            }
            #expect(await ledger.ended.wait(for: 6) == 6)
            #expect(fixture.server.arrivals.count(.user) == 6)
            // After a burst of two, one token every 50 ms: the sixth starts 200 ms after the first at the
            // earliest. Each start is stamped when its operation runs, after the scheduler's decision:
            // the first may be stamped late under load (38 ms late once, under the thread sanitizer
            // with every suite running), so 50 ms of slack. Without a limit, all six start within a
            // few milliseconds, and the fourth to sixth fail this.
            let starts = story.starts.withLockedValue { $0 }
            #expect(starts.count == 6)
            for (index, start) in starts.enumerated() where index >= limit.burst {
                let earliest = Double(index - limit.burst + 1) / limit.requestsPerSecond
                #expect(Double(start - starts[0]) / 1_000_000_000 >= earliest - 0.05, "start \(index)")
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreakOf503sPausesTheHostThenAGoodProbeClosesTheCircuit(over transport: TransportKind) async throws {
        let story = HostStory()
        // A pause long enough to be seen on a machine busy with the other suites' transfers.
        let policy = HostHealth.Policy(failuresBeforePause: 3, pauseAfterFailures: 3)
        try await Fixture.with(over: transport, budget: 1, eventMonitors: [story], configure: { $0.hostHealth = policy }) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.feed] = Fault(status: 503, failFirst: 3)
            let failing = Ledger<FeedPage>(callers: 3)
            for index in 0..<3 { fixture.api.client.send(.feed(page: index + 1)) { failing.record(index, $0) } }
            #expect(await failing.ended.wait(for: 3) == 3)
            #expect(failing.results.allSatisfy { $0.failure?.statusCode == 503 })
            guard await Self.heardPaused(story, for: .serverErrors, health: { fixture.api.scheduler.health(of: fixture.server.baseURL) }) else {
                return
            }

            // Sent while the circuit is open: they wait for the probe, which the server answers.
            let ledger = Ledger<FeedPage>(callers: 2)
            for index in 0..<2 { fixture.api.client.send(.feed(page: index + 4)) { ledger.record(index, $0) } }
            #expect(await ledger.ended.wait(for: 2) == 2)
            #expect(ledger.results.allSatisfy { (try? $0.get()) != nil })
            #expect(fixture.server.arrivals.count(.feed) == 5)
            // Changes of different events may be told in any order (each after its own lock).
            #expect(await story.changes.wait(for: 3) >= 3)
            let health = story.lines.withLockedValue { $0 }.filter { !$0.hasPrefix("started") }
            #expect(health.sorted() == ["available", "paused", "probing"])
            #expect(fixture.api.scheduler.health(of: fixture.server.baseURL) == .available)
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkSchedulerTesting
import Testing
@testable import NetworkScheduler

/// Request deadlines, host health and adaptive budgets through the scheduler's public API,
/// over a stub transport.
@Suite struct SchedulerSteeringTests {
    static let base = URL(string: "https://api.test/v1")!

    @Test func anAwaitedRequestPastItsDeadlineThrowsAndItsTaskIsCancelled() async {
        let harness = Harness { _ in .hold }
        await #expect(throws: ServiceError.deadlineExceeded) {
            try await harness.api.value(for: Resource<User>(path: "slow").within(0.05))
        }
        #expect(await harness.transport.cancellations.wait(for: 1).count == 1)
        await harness.scheduler.queuesDrained()
        #expect(harness.isIdle)
    }

    @Test func aRetryAfterPausesTheHostAsItsHealthAndEventsShow() async {
        let harness = Harness { request in
            request.url?.path == "/v1/limited" ? .respond(status: 503, headers: ["Retry-After": "30"]) : .json(userJSON)
        }
        let outcomes = Outcomes<User>()
        let sent = Date()
        harness.api.send(Resource<User>(path: "limited"), completion: outcomes.completion("limited"))
        #expect(await outcomes.wait(for: 1)["limited"]?.failure?.statusCode == 503)
        let told = Date()
        guard case .paused(let until, reason: .askedToWait) = harness.scheduler.health(of: Self.base) else {
            Issue.record("not paused: \(harness.scheduler.health(of: Self.base))")
            return
        }
        // Thirty seconds from the 503, which came between the send and its outcome: bounds
        // that hold however long a loaded machine took (one under the thread sanitizer took 5 s).
        #expect(until >= sent.addingTimeInterval(29.9) && until <= told.addingTimeInterval(30.1))
        #expect(await harness.events.health.wait(for: 1).count == 1)
        #expect(harness.metrics.snapshot.hostPauses == 1)
        #expect(harness.scheduler.health(of: URL(string: "https://other.test")!) == .available)

        // A request sent meanwhile waits, and a deadline is how it gives up.
        await #expect(throws: ServiceError.deadlineExceeded) {
            try await harness.api.value(for: Resource<User>(path: "users/1").within(0.05))
        }
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func anAdaptiveBudgetHalvesOnA503() async {
        let harness = Harness(budget: 4, reply: { _ in .respond(status: 503) }) { configuration in
            configuration.hostHealth = HostHealth.Policy(pausesOnRetryAfter: false, adaptsBudget: true)
        }
        #expect(harness.scheduler.currentBudget(of: Self.base) == 4)
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "busy"), completion: outcomes.completion("busy"))
        #expect(await outcomes.wait(for: 1)["busy"]?.failure?.statusCode == 503)
        #expect(harness.scheduler.currentBudget(of: Self.base) == 2)
    }

    @Test func aStreakOf503sPausesTheHostAndAGoodProbeResumesIt() async throws {
        let clock = VirtualClock()
        let healthy = Locked(false)
        let harness = Harness(budget: 2, reply: { _ in healthy.withLock { $0 } ? .json(userJSON) : .respond(status: 503) }) {
            $0.hostHealth = HostHealth.Policy(failuresBeforePause: 3, pauseAfterFailures: 2)
            $0.clock = clock
        }
        let outcomes = Outcomes<User>()
        for index in 1...3 { harness.api.send(Resource<User>(path: "busy/\(index)"), completion: outcomes.completion("\(index)")) }
        #expect(await outcomes.wait(for: 3).values.allSatisfy { $0.failure?.statusCode == 503 })
        #expect(harness.scheduler.health(of: Self.base) == .paused(until: clock.now.addingTimeInterval(2), reason: .serverErrors))

        // Waiting requests wait out the pause, then one probe goes alone.
        healthy.withLock { $0 = true }
        for index in 4...6 { harness.api.send(Resource<User>(path: "busy/\(index)"), completion: outcomes.completion("\(index)")) }
        await harness.events.enqueued.wait(for: 6)
        #expect(harness.transport.arrivals.count == 3)
        clock.advance(by: 2)

        let outcomesAfter = await outcomes.wait(for: 6)
        #expect(try (4...6).map { try outcomesAfter["\($0)"]?.get().id } == [1, 1, 1])
        #expect(harness.scheduler.health(of: Self.base) == .available)
        // Each change is told after the lock of the event that made it, so changes of different
        // events may be told in any order.
        let changes = await harness.events.health.wait(for: 3)
        let pausedForServerErrors = changes.filter { if case .paused(_, reason: .serverErrors) = $0 { true } else { false } }
        #expect(pausedForServerErrors.count == 1 && changes.contains(.probing) && changes.contains(.available))
    }
    /// Issue 49's case: after a 503 with `Retry-After`, the probe answers 200 at once and its
    /// body keeps coming. The host opens on the probe's head, not on its body's end: a quick GET
    /// waiting behind it is answered while that body is still held.
    @Test func aProbesHeadOpensItsHostWhileItsBodyIsStillComing() async throws {
        let clock = VirtualClock()
        let harness = Harness(reply: { request in
            switch request.url?.path {
            case "/v1/limited": .unavailable(retryAfter: 1)
            case "/v1/slow": .streams(chunks: [Data(#"{"id": "#.utf8)], then: .hold)
            default: .json(userJSON)
            }
        }) { $0.clock = clock }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "limited").retrying(.never), completion: outcomes.completion("limited"))
        #expect(await outcomes.wait(for: 1)["limited"]?.failure?.statusCode == 503)

        // Given: a GET with a slow body goes as the probe when the pause ends; a quick one waits.
        harness.api.send(Resource<User>(path: "slow"), completion: outcomes.completion("slow"))
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("quick"))
        await harness.events.enqueued.wait(for: 3)
        clock.advance(by: 1)

        // Then: the quick one goes as soon as the probe's head is in, and is answered first.
        let quick = await outcomes.wait(for: 2)
        #expect(try quick["quick"]?.get().id == 1)
        #expect(quick["slow"] == nil && harness.transport.heldCount == 1)
        #expect(harness.scheduler.health(of: Self.base) == .available)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/limited", "/v1/slow", "/v1/users/1"])

        harness.transport.release(path: "/v1/slow", with: .json(userJSON))
        #expect(try await outcomes.wait(for: 3)["slow"]?.get().id == 1)
        #expect(harness.scheduler.health(of: Self.base) == .available)
    }

    /// A download as the probe: a large body once kept its host shut for as long as it took.
    @Test func aDownloadAsTheProbeOpensItsHostOnItsHead() async throws {
        let clock = VirtualClock()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let harness = Harness(reply: { request in
            switch request.url?.path {
            case "/v1/limited": .unavailable(retryAfter: 1)
            case "/v1/export": .streams(chunks: [Data(repeating: 7, count: 1_000)], then: .hold)
            default: .json(userJSON)
            }
        }) { $0.clock = clock }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "limited").retrying(.never), completion: outcomes.completion("limited"))
        #expect(await outcomes.wait(for: 1)["limited"]?.failure?.statusCode == 503)

        let download = Task { try await harness.api.value(for: .download("export", to: folder.appendingPathComponent("export"))) }
        await harness.events.enqueued.wait(for: 2)
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("quick"))
        await harness.events.enqueued.wait(for: 3)
        clock.advance(by: 1)

        #expect(try await outcomes.wait(for: 2)["quick"]?.get().id == 1)
        #expect(harness.transport.heldCount == 1)
        download.cancel()
        await #expect(throws: ServiceError.cancelled) { try await download.value }
    }

    /// Issue 40's script, with every default: a 503 with `Retry-After` pauses the host; after
    /// the pause the probe loses its connection, which the default retry policy retries. The
    /// host once stayed probing for good (its probe's retry was refused as a second probe, and
    /// no failure pauses it under the default policy), so nothing reached it again.
    @Test func aProbeThatLosesItsConnectionUnderDefaultSettingsStrandsNoHost() async throws {
        let clock = VirtualClock()
        let flakyAttempts = Locked(0)
        let harness = Harness(retryPolicy: .default, reply: { request in
            switch request.url?.path {
            case "/v1/limited": return .unavailable(retryAfter: 1)
            case "/v1/flaky":
                let attempt = flakyAttempts.withLock { $0 += 1; return $0 }
                return attempt == 1 ? .fail(URLError(.networkConnectionLost)) : .json(userJSON)
            default: return .json(userJSON)
            }
        }) { $0.clock = clock }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "limited").retrying(.never), completion: outcomes.completion("limited"))
        #expect(await outcomes.wait(for: 1)["limited"]?.failure?.statusCode == 503)

        // When the pause ends, `flaky` goes alone as the probe and loses its connection.
        harness.api.send(Resource<User>(path: "flaky"), completion: outcomes.completion("flaky"))
        await harness.events.enqueued.wait(for: 2)
        clock.advance(by: 1)
        #expect(await harness.events.retried.wait(for: 1) == [2])
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("users/1"))
        await harness.events.enqueued.wait(for: 3)

        // Then: its retry (after a backoff of at most 0.25 s) probes again, and opens the host.
        clock.advance(by: 0.25)
        let ended = await outcomes.wait(for: 3)
        #expect(try ended["flaky"]?.get().id == 1)
        #expect(try ended["users/1"]?.get().id == 1)
        #expect(harness.scheduler.health(of: Self.base) == .available)
        #expect(flakyAttempts.withLock { $0 } == 2)
    }
}

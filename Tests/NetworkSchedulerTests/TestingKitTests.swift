import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler
import NetworkSchedulerTesting
import Testing

/// The kit app teams test with: each piece does what its documentation says.
@Suite struct TestingKitTests {
    private struct Item: Decodable, Sendable, Equatable {
        let id: Int
    }

    /// Logs the retries a scheduler announces.
    private final class Retries: RequestEvent.Monitor {
        let log = EventLog<TimeInterval>()
        func record(_ event: RequestEvent) {
            if case .retried(_, _, let after, _) = event { log.append(after) }
        }
    }

    private static func scheduler(_ transport: StubTransport, clock: VirtualClock? = nil,
                                  monitor: (any RequestEvent.Monitor)? = nil,
                                  retryPolicy: RetryPolicy = .never) -> (RequestScheduler, APIClient) {
        let scheduler = RequestScheduler { configuration in
            configuration.transport = transport
            configuration.retryPolicy = retryPolicy
            if let clock { configuration.clock = clock }
            if let monitor { configuration.eventMonitors = [monitor] }
        }
        return (scheduler, APIClient(baseURL: URL(string: "https://kit.test/v1")!, scheduler: scheduler))
    }

    @Test func aStubAnswersWithAModelEncodedAsJSON() async throws {
        struct Profile: Codable, Sendable, Equatable {
            let id: Int
            let name: String
        }
        let transport = StubTransport { _ in .json(Profile(id: 7, name: "Ada"), status: 201) }
        let (_, api) = Self.scheduler(transport)

        let reply = try await api.reply(for: Resource<Profile>(path: "me"))

        #expect(reply.value == Profile(id: 7, name: "Ada"))
        #expect(reply.head.statusCode == 201)
        #expect(reply.head.value(forHTTPHeaderField: "content-type") == "application/json")
    }

    @Test func aJSONStubCarriesTheHeadersItIsGivenSoACacheKeepsItsAnswer() async throws {
        let transport = StubTransport { request in
            request.url?.path == "/v1/feed"
                ? .json(#"[{"id": 1}]"#, headers: ["content-type": "application/vnd.feed+json"])
                : .json([["id": 7]], headers: ["Cache-Control": "max-age=60"])
        }
        let scheduler = RequestScheduler { $0.transport = transport; $0.cache = ResponseCache() }
        let api = APIClient(baseURL: URL(string: "https://kit.test/v1")!, scheduler: scheduler)

        let first = try await api.reply(for: Resource<[Item]>(path: "items"))
        let second = try await api.reply(for: Resource<[Item]>(path: "items"))
        let feed = try await api.reply(for: Resource<[Item]>(path: "feed"))

        #expect(first.head.value(forHTTPHeaderField: "cache-control") == "max-age=60")
        #expect(first.head.value(forHTTPHeaderField: "content-type") == "application/json")
        #expect(second.value == [Item(id: 7)])
        #expect(second.cacheUse == .fresh)
        #expect(transport.count("GET /v1/items") == 1)
        // A Content-Type of its own replaces the JSON one, whatever its case.
        #expect(feed.head.value(forHTTPHeaderField: "content-type") == "application/vnd.feed+json")
    }

    @Test func aModelTheEncoderRefusesAnswersAServerErrorSayingWhy() async {
        let transport = StubTransport { _ in .json(Double.infinity) }
        let (_, api) = Self.scheduler(transport)

        await #expect {
            try await api.value(for: Resource<Double>(path: "score"))
        } throws: { error in
            guard case .server(let response) = error as? ServiceError else { return false }
            return response.statusCode == 500 && response.message?.contains("could not encode Double") == true
        }
    }

    @Test func stopHoldingReleasesWhatIsHeldAndAnswersWhatWouldBeHeldLater() async throws {
        let transport = StubTransport { _ in .hold }
        let (_, api) = Self.scheduler(transport)
        let first = Task { try await api.value(for: Resource<Item>(path: "items/1")) }
        await transport.arrivals.wait(for: 1)

        transport.stopHolding(answering: .json(#"{"id": 7}"#))

        #expect(try await first.value == Item(id: 7))
        #expect(try await api.value(for: Resource<Item>(path: "items/2")) == Item(id: 7), "held from now on: answered")
        #expect(transport.heldCount == 0)
    }

    @Test func aScriptedRouteAnswersInOrderAndRepeatsItsLastAnswer() async throws {
        let transport = StubTransport(script: ["GET /v1/items/1": [.serverError(503), .json(#"{"id": 1}"#)]])
        let (_, api) = Self.scheduler(transport)

        await #expect(throws: ServiceError.server(ServiceError.ServerResponse(statusCode: 503, message: "Internal error",
                                                                       body: Data(#"{"message": "Internal error"}"#.utf8),
                                                                       headers: ["content-type": "application/json"]))) {
            try await api.value(for: Resource<Item>(path: "items/1"))
        }
        #expect(try await api.value(for: Resource<Item>(path: "items/1")) == Item(id: 1))
        #expect(try await api.value(for: Resource<Item>(path: "items/1")) == Item(id: 1))
        await #expect(throws: ServiceError.server(ServiceError.ServerResponse(statusCode: 404, body: Data()))) {
            try await api.value(for: Resource<Item>(path: "items/2"))
        }
        #expect(transport.count("GET /v1/items/1") == 3)
    }

    @Test func aBackoffOnAVirtualClockPassesOnlyWhenTheTestAdvancesIt() async throws {
        // Given a retry up to an hour away (full jitter)
        let clock = VirtualClock()
        let transport = StubTransport(clock: clock, script: ["GET /v1/items/1": [.serverError(503), .json(#"{"id": 1}"#)]])
        let hour = RetryPolicy(maxAttempts: 2, baseDelay: 3_600, maxDelay: 3_600)
        let retries = Retries()
        let (_, api) = Self.scheduler(transport, clock: clock, monitor: retries, retryPolicy: hour)
        let done = EventLog<Result<Item, ServiceError>>()
        api.send(Resource<Item>(path: "items/1", timeout: 7_200)) { done.append($0) }
        await retries.log.wait(for: 1)
        #expect(transport.arrivals.count == 1)

        // When the clock passes it, in a step shorter than the attempts' timeout
        clock.advance(by: 3_600)

        // Then the retry goes out and succeeds
        #expect(await done.wait(for: 1).first.flatMap { try? $0.get() } == Item(id: 1))
        #expect(transport.arrivals.count == 2)
    }

    @Test func queueWaitAndWireTimeAreCountedOnTheSchedulersClock() async throws {
        // Given a budget of one on a virtual clock: `first` holds the slot, `second` waits
        let clock = VirtualClock()
        let transport = StubTransport(maximumConnectionsPerHost: 1, clock: clock) { _ in .hold }
        let (_, api) = Self.scheduler(transport, clock: clock)
        let replies = EventLog<(String, Result<Reply<Item>, ServiceError>)>()
        for path in ["first", "second"] {
            api.sendForReply(Resource<Item>(path: path)) { replies.append((path, $0)) }
        }
        await transport.arrivals.wait(for: 1)

        // When five virtual seconds pass before `first` is answered, and two before `second` is
        clock.advance(by: 5)
        transport.release(path: "/v1/first", with: .json(#"{"id": 1}"#))
        await transport.arrivals.wait(for: 2)
        clock.advance(by: 2)
        transport.release(path: "/v1/second", with: .json(#"{"id": 2}"#))

        // Then each reply's figures are those virtual seconds, whatever real time passed
        let metrics = Dictionary(uniqueKeysWithValues: await replies.wait(for: 2).map { ($0.0, try? $0.1.get().metrics) })
        #expect(metrics["first"]??.queuedDuration == 0)
        #expect(metrics["first"]??.networkDuration == 5)
        #expect(metrics["second"]??.queuedDuration == 5)
        #expect(metrics["second"]??.networkDuration == 2)
    }

    @Test func aWaitPastItsBoundRecordsAnIssueAndReturnsWhatArrived() async {
        let log = EventLog<Int>()
        log.append(1)
        await withKnownIssue("the second element never comes") {
            #expect(await log.wait(for: 2, timeout: 0.05) == [1])
        }
        #expect(await log.wait(for: 1, timeout: 0.05) == [1])
    }

    @Test func aDeadlineAndARateLimitRunOnTheVirtualClock() async throws {
        // Given a caller with a ten-second deadline on a held request, and a host limited to
        // one start a second, on a virtual clock
        let clock = VirtualClock()
        let transport = StubTransport(clock: clock, script: ["GET /v1/items/1": [.hold], "GET /v1/items/2": [.json(#"{"id": 2}"#)]])
        let scheduler = RequestScheduler { configuration in
            configuration.transport = transport
            configuration.retryPolicy = .never
            configuration.clock = clock
            configuration.rateLimits = ["kit.test": HostHealth.RateLimit(requestsPerSecond: 1, burst: 1)]
        }
        let api = APIClient(baseURL: URL(string: "https://kit.test/v1")!, scheduler: scheduler, timeout: 3_600)
        let first = EventLog<Result<Item, ServiceError>>()
        let second = EventLog<Result<Item, ServiceError>>()
        api.send(Resource<Item>(path: "items/1").within(10)) { first.append($0) }
        await transport.arrivals.wait(for: 1)
        api.send(Resource<Item>(path: "items/2")) { second.append($0) }

        // When the clock moves half a second, the limited host starts nothing more: the timers
        // fire within the move, so the machine's line says so when it returns
        clock.advance(by: 0.5)
        #expect(scheduler.state.withLock { $0.machine.lineCounts } == (running: 1, lowPriorityRunning: 0, waiting: 1))
        #expect(transport.arrivals.count == 1)

        // Then a second after the first start the next one goes, and at ten the deadline ends
        // the held caller
        clock.advance(by: 0.5)
        #expect(await second.wait(for: 1).first.flatMap { try? $0.get() } == Item(id: 2))
        #expect(first.count == 0)
        clock.advance(by: 9)
        #expect(await first.wait(for: 1).first?.failure == .deadlineExceeded)
    }

    @Test func aDelayedAnswerWaitsForTheClock() async throws {
        let clock = VirtualClock()
        let transport = StubTransport(clock: clock) { _ in .delayed(5, .json(#"{"id": 3}"#)) }
        let (_, api) = Self.scheduler(transport, clock: clock)
        let done = EventLog<Result<Item, ServiceError>>()
        api.send(Resource<Item>(path: "items/3")) { done.append($0) }
        await transport.arrivals.wait(for: 1)
        clock.advance(by: 4)
        #expect(done.count == 0)

        clock.advance(by: 1)

        #expect(await done.wait(for: 1).first.flatMap { try? $0.get() } == Item(id: 3))
    }

    @Test func anAuditOfIdenticalCallersCountsOneNetworkCallAndIsClean() async throws {
        let audit = SchedulerAudit()
        let transport = StubTransport(script: ["GET /v1/items/1": [.hold]])
        let (scheduler, api) = Self.scheduler(transport, monitor: audit)
        let done = EventLog<Result<Item, ServiceError>>()
        for _ in 0..<5 { api.send(Resource<Item>(path: "items/1")) { done.append($0) } }
        await transport.arrivals.wait(for: 1)
        #expect(transport.release(path: "/v1/items/1", with: .json(#"{"id": 1}"#)))
        await done.wait(for: 5)

        let report = await audit.report(for: scheduler)

        #expect(report.isClean, "\(report)")
        #expect(report.callers == 5)
        #expect(report.networkCalls("GET /v1/items/1") == 1)
    }

    @Test func anAuditCountsACallerWhoseEndWasToldBeforeItsStart() async throws {
        // Events are told after the scheduler's lock is released, on the thread where they
        // happen: a stub answering at once can tell a caller's end before its start.
        let audit = SchedulerAudit()
        let scheduler = RequestScheduler { $0.transport = StubTransport() }
        let caller = RequestEvent.Caller(id: RequestHandle.ID(value: 7), priority: .normal, method: "GET", url: nil,
                                         callNumber: nil, dependencies: [])
        audit.record(.failed(caller, .timedOut, ResponseMetrics()))
        audit.record(.enqueued(caller))

        let reports = EventLog<SchedulerAudit.Report>()
        Task { reports.append(await audit.report(for: scheduler, timeout: 120)) }

        // The report does not wait for a caller that already ended (it would, to its bound).
        let report = try #require(await reports.wait(for: 1, timeout: 30).first)
        #expect(report.isClean)
        #expect(report.callers == 1)
    }

    @Test func anAuditNamesACallerThatNeverEndedAndAnObjectStillAlive() async throws {
        let audit = SchedulerAudit()
        let transport = StubTransport { _ in .hold }
        let (scheduler, api) = Self.scheduler(transport, monitor: audit)
        let kept = RequestGroup()
        audit.watch(kept, as: "the screen's group")
        let handle = api.send(Resource<Item>(path: "items/1"), group: kept) { _ in }
        await transport.arrivals.wait(for: 1)

        let report = await audit.report(for: scheduler, timeout: 0.3)

        #expect(report.neverEnded == [handle.id])
        #expect(report.objectsAlive == ["the screen's group"])
        #expect(report.census.callers == 1)
        #expect(!report.isClean)
        #expect("\(report)".contains("1 caller(s) never ended: \(handle.id)"))
        handle.cancel()
    }

    @Test func anAuditFailsAWatchedObjectTheTestStillHoldsAfterItsGraceNotItsBound() async throws {
        // Given a clean run whose watched screen the test itself still holds
        let audit = SchedulerAudit()
        let (scheduler, api) = Self.scheduler(StubTransport { _ in .json(#"{"id": 1}"#) }, monitor: audit)
        let screen = RequestGroup()
        audit.watch(screen, as: "screen 1")
        _ = try await api.value(for: Resource<Item>(path: "items/1"), group: screen)

        // When the report is asked for with a bound of ten minutes
        let reports = EventLog<SchedulerAudit.Report>()
        Task { reports.append(await audit.report(for: scheduler, timeout: 600)) }

        // Then it comes back after the audit's grace for objects, naming the object and why
        let report = try #require(await reports.wait(for: 1, timeout: 30).first)
        #expect(report.objectsAlive == ["screen 1"])
        #expect(report.problems == ["still alive: screen 1 (a watched object must be let go by the test too before the "
                                    + "report; one a completion or the scheduler keeps is a leak)"])
        withExtendedLifetime(screen) {}
    }

    @Test func anInterleaverReplaysItsCancellationsFromItsSeedAndNamesCallersThatHang() async {
        // A caller that never returns until its task is cancelled: a stream that never yields.
        let hang: @Sendable (Int) async throws -> Int = { index in
            let nothing = AsyncStream<Never> { _ in }
            for await _ in nothing {}
            return index
        }
        let first = await Interleaver(seed: 42).run(callers: 40, cancelling: 0.5, timeout: 30) { index in index }
        let again = await Interleaver(seed: 42).run(callers: 40, cancelling: 0.5, timeout: 30) { index in index }
        let other = await Interleaver(seed: 43).run(callers: 40, cancelling: 0.5, timeout: 30) { index in index }
        let stuck = await Interleaver(seed: 1).run(callers: 3, timeout: 0.2, hang)

        #expect(first.cancelled == again.cancelled)
        #expect(first.cancelled != other.cancelled)
        #expect(first.values.sorted() == Array(0..<40))
        #expect(stuck.unfinished == [0, 1, 2])
        #expect("\(stuck)".contains("seed 1"))
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct SchedulerRetryTests {
    /// Retries at once, so that tests do not wait for backoff.
    static let quick = RetryPolicy(maxAttempts: 3, baseDelay: 0)

    /// A stub that answers `failures` with 503, then succeeds.
    /// The status of a server error, nil for any other error.
    static func status(of error: any Error) -> Int? {
        (error as? ServiceError)?.serverResponse?.statusCode
    }

    static func failing(first failures: Int, with reply: StubResponse = .json(#"{"message": "busy"}"#, status: 503))
        -> @Sendable (URLRequest) -> StubResponse {
        let attempts = Counter()
        return { _ in attempts.next() <= failures ? reply : .json(userJSON) }
    }

    @Test func anIdempotentRequestIsRetriedUntilItSucceeds() async throws {
        let harness = Harness(retryPolicy: Self.quick, reply: Self.failing(first: 2))
        let user = try await harness.api.value(for: Resource<User>(path: "users/1"))
        #expect(user.id == 1)
        #expect(harness.transport.arrivals.count == 3)
        #expect(harness.events.retried.elements == [2, 3])
        #expect(harness.metrics.snapshot.retries == 2)
    }

    /// A monitor hears a call's retry before the start of the attempt it leads to, though that
    /// attempt starts on another thread at once: each call's events come in the order they
    /// happened (a timeline or a trace builds on it).
    @Test func aMonitorHearsARetryBeforeTheAttemptItStarts() async {
        var outOfOrder: [Int] = []
        for round in 0..<200 {
            let answers = Counter()
            let story = EventLog<String>()
            let harness = Harness(retryPolicy: Self.quick, reply: { _ in
                answers.next() == 1 ? .serverError(503) : .json(userJSON)
            }) { configuration in
                configuration.eventMonitors.append(CallStory(log: story))
            }
            let outcomes = Outcomes<User>()
            harness.api.send(Resource<User>(path: "me"), completion: outcomes.completion("me"))
            await outcomes.wait(for: 1)
            let told = await story.wait(for: 4)
            if told != ["started", "retried", "started", "succeeded"] { outOfOrder.append(round) }
        }
        #expect(outOfOrder.isEmpty, "a retry was told after the attempt it started in rounds \(outOfOrder)")
    }

    @Test func anAttemptPastItsDeadlineIsJudgedOnceThoughItsTransportReportsItsOwnTimeoutLater() async {
        let asked = EventLog<ServiceError?>()
        let policy = Self.quick.deciding { attempt in
            asked.append(attempt.error)
            return .doNotRetry
        }
        let transport = LateTransport()
        let harness = Harness(retryPolicy: policy, configure: { $0.transport = transport })

        await #expect(throws: ServiceError.timedOut) {
            try await harness.api.value(for: Resource<User>(path: "users/1", timeout: 0.05))
        }
        // The transport's own timeout comes after the scheduler's deadline ended the attempt:
        // the policy is not asked again.
        transport.report(.failure(URLError(.timedOut)))
        await harness.scheduler.queuesDrained()

        #expect(asked.elements == [.timedOut])
    }

    /// The retry policy reads a failure after the machine freed the attempt's slot: a slow
    /// decider (the app's code) holds no other request of its host.
    @Test func aFailedAttemptsSlotGoesToTheNextRequestBeforeItsDeciderIsAsked() async throws {
        let scheduler = Locked<RequestScheduler?>(nil)
        let waitingWhenAsked = EventLog<Int>()
        let policy = Self.quick.deciding { _ in
            // A decider runs outside the scheduler's lock: it may read the line.
            let waiting = scheduler.withLock { $0 }!.state.withLock { $0.machine.lineCounts.waiting }
            waitingWhenAsked.append(waiting)
            return .doNotRetry
        }
        let harness = Harness(budget: 1, retryPolicy: policy) { request in
            request.url?.path == "/v1/failing" ? .hold : .json(userJSON)
        }
        scheduler.withLock { $0 = harness.scheduler }

        // Given the failing request on the wire and the next one waiting for its slot
        let failing = Task { try await harness.api.value(for: Resource<User>(path: "failing")) }
        await harness.transport.arrivals.wait(for: 1)
        let next = Task { try await harness.api.value(for: Resource<User>(path: "next")) }
        await harness.events.enqueued.wait(for: 2)

        // When the first fails
        #expect(harness.transport.release(path: "/v1/failing", with: .status(500)))

        // Then the next had left the line for the freed slot before the decider was asked
        await #expect { try await failing.value } throws: { Self.status(of: $0) == 500 }
        #expect(try await next.value.id == 1)
        #expect(waitingWhenAsked.elements == [0])
    }

    /// A call whose callers all left while its attempt failed wants no verdict: its policy's
    /// decider is not asked.
    @Test func aFailureOfACallWhoseCallersLeftAsksNoDecider() async {
        let asked = EventLog<Int>()
        let policy = Self.quick.deciding { attempt in
            asked.append(attempt.attempt)
            return .doNotRetry
        }
        let transport = LateTransport()
        let harness = Harness(retryPolicy: policy, configure: { $0.transport = transport })

        let handle = harness.api.send(Resource<User>(path: "users/1")) { _ in }
        await transport.started.wait(for: 1)
        handle.cancel()
        transport.report(.failure(URLError(.networkConnectionLost)))
        await harness.scheduler.queuesDrained()

        #expect(asked.elements.isEmpty)
        #expect(harness.isIdle)
    }

    @Test func aStreamAskedTwiceAboutOneFailureCountsOneReconnection() {
        let channel = StreamChannel(decoder: ChunkDecoder(), limit: 1, reconnection: StreamReconnection(delay: 0, maximumInARow: 1))
        let timedOut = RetryPolicy.FailedAttempt(attempt: 1, method: "GET", outcome: .failure(.timedOut))

        #expect(channel.retryDecision(for: timedOut) == .retry(after: 0))
        #expect(channel.retryDecision(for: timedOut) == .retry(after: 0), "the same failure, told twice")
        #expect(channel.retryDecision(for: RetryPolicy.FailedAttempt(attempt: 2, method: "GET", outcome: .failure(.timedOut)))
            == .doNotRetry, "one reconnection in a row allowed")
    }

    @Test func itGivesUpAfterTheLastAttempt() async {
        let harness = Harness(retryPolicy: Self.quick) { _ in .json(#"{"message": "down"}"#, status: 503) }
        await #expect { try await harness.api.value(for: Resource<User>(path: "users/1")) } throws: { Self.status(of: $0) == 503 }
        #expect(harness.transport.arrivals.count == 3)
    }

    @Test func timeoutsAndLostConnectionsAreRetriedButOtherFailuresAreNot() async throws {
        let timedOut = Harness(retryPolicy: Self.quick, reply: Self.failing(first: 1, with: .fail(URLError(.timedOut))))
        #expect(try await timedOut.api.value(for: Resource<User>(path: "a")).id == 1)
        let lost = Harness(retryPolicy: Self.quick, reply: Self.failing(first: 1, with: .fail(URLError(.networkConnectionLost))))
        #expect(try await lost.api.value(for: Resource<User>(path: "a")).id == 1)
        let notFound = Harness(retryPolicy: Self.quick, reply: Self.failing(first: 1, with: .json("{}", status: 404)))
        await #expect { try await notFound.api.value(for: Resource<User>(path: "a")) } throws: { Self.status(of: $0) == 404 }
        #expect(notFound.transport.arrivals.count == 1)
    }

    @Test func aPostWithoutAnIdempotencyKeyIsNeverRetried() async {
        let harness = Harness(retryPolicy: Self.quick, reply: Self.failing(first: 1))
        await #expect {
            try await harness.api.value(for: Resource<User>(.post, path: "posts", body: .json(NewPost(text: "x"))))
        } throws: { Self.status(of: $0) == 503 }
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func aPostWithAnIdempotencyKeyIsRetriedWithTheSameKey() async throws {
        let harness = Harness(retryPolicy: Self.quick, reply: Self.failing(first: 2))
        let create = Resource<User>(.post, path: "posts", body: .json(NewPost(text: "x"))).withIdempotencyKey()
        _ = try await harness.api.value(for: create)

        let keys = harness.transport.arrivals.elements.map { $0.request.value(forHTTPHeaderField: "Idempotency-Key") }
        #expect(keys.count == 3)
        #expect(keys[0] != nil && Set(keys).count == 1)
    }

    @Test func aResourcesOwnPolicyWins() async {
        let harness = Harness(retryPolicy: Self.quick, reply: Self.failing(first: 1))
        await #expect {
            try await harness.api.value(for: Resource<User>(path: "users/1").retrying(.never))
        } throws: { Self.status(of: $0) == 503 }
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func joinersShareTheRetriedCall() async {
        // Each attempt is held until released, so that "b" joins while the call is in flight
        // however slow the machine (a loaded one once let the whole call end before "b" came).
        let harness = Harness(retryPolicy: Self.quick) { _ in .hold }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("a"))
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("b"))
        #expect(harness.transport.release(with: .respond(status: 503)))
        await harness.transport.arrivals.wait(for: 2)
        #expect(harness.transport.release(with: .json(userJSON)))
        let results = await outcomes.wait(for: 2)
        #expect(results["a"]?.success?.id == 1 && results["b"]?.success?.id == 1)
        #expect(harness.transport.arrivals.count == 2)
    }

    @Test func retryAfterIsHonouredAndACallWaitingHoldsNoBudgetSlot() async {
        // Budget one: while the first request waits out its Retry-After, the second runs. The
        // first attempt is held until the second waits behind it, so no timing is assumed.
        let first = Counter()
        let harness = Harness(budget: 1, retryPolicy: Self.quick) { request in
            request.url?.path == "/v1/first" && first.next() == 1 ? .hold : .json(userJSON)
        }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "first"), completion: outcomes.completion("first"))
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "second"), completion: outcomes.completion("second"))
        #expect(harness.scheduler.state.withLock { $0.machine.lineCounts.waiting } == 1)
        #expect(harness.transport.release(path: "/v1/first", with: .respond(status: 503, headers: ["Retry-After": "1"])))

        let results = await outcomes.wait(for: 2)
        #expect(results["first"]?.success != nil && results["second"]?.success != nil)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/first", "/v1/second", "/v1/first"])
    }

    @Test func aRetryAfterLongerThanThePolicyAllowsEndsTheRequest() async {
        let harness = Harness(retryPolicy: RetryPolicy(maxAttempts: 3, maxRetryAfter: 5)) { _ in
            .respond(status: 429, headers: ["Retry-After": "3600"])
        }
        await #expect { try await harness.api.value(for: Resource<User>(path: "a")) } throws: { Self.status(of: $0) == 429 }
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func cancellingACallWaitingToRetryEndsItAndLeavesNothingToRetry() async {
        let harness = Harness(retryPolicy: Self.quick) { _ in .respond(status: 503, headers: ["Retry-After": "30"]) }
        let outcomes = Outcomes<User>()
        let handle = harness.api.send(Resource<User>(path: "a"), completion: outcomes.completion("a"))
        await harness.events.retried.wait(for: 1)

        handle.cancel()

        #expect(await outcomes.wait(for: 1)["a"]?.failure == .cancelled)
        #expect(harness.isIdle) // the call is gone, so its timer finds nothing to restart
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func retryAfterReadsSecondsAndHTTPDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000) // Tue, 14 Nov 2023 22:13:20 GMT
        #expect(RetryPolicy.retryAfter("120", now: now) == 120)
        #expect(RetryPolicy.retryAfter(" 0 ", now: now) == 0)
        #expect(RetryPolicy.retryAfter("Tue, 14 Nov 2023 22:14:20 GMT", now: now) == 60)
        #expect(RetryPolicy.retryAfter("Tue, 14 Nov 2023 22:00:00 GMT", now: now) == 0)
        #expect(RetryPolicy.retryAfter("soon", now: now) == nil)
    }

    @Test func backoffIsFullJitterUnderAGrowingCeiling() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: 0.1, maxDelay: 1)
        let request = URLRequest(url: URL(string: "https://api.test/a")!)
        let busy = Result<TransportResponse, ServiceError>.success(
            StubTransport.response(to: request, status: 503, body: Data(), headers: [:]))
        for attempt in 1...9 {
            let ceiling = min(1, 0.1 * pow(2, Double(attempt - 1)))
            #expect(policy.retry(before: attempt, method: "GET", isKeyed: false, after: busy, retryAfter: nil)?.delay(jitter: 0) == 0)
            #expect(policy.retry(before: attempt, method: "GET", isKeyed: false, after: busy, retryAfter: nil)?.delay(jitter: 1) == ceiling)
            #expect(policy.retry(before: attempt, method: "GET", isKeyed: false, after: busy, retryAfter: nil)?.delay(jitter: 0.5) == ceiling / 2)
        }
        #expect(policy.retry(before: 10, method: "GET", isKeyed: false, after: busy, retryAfter: nil)?.delay(jitter: 0.5) == nil)
    }
}

/// A transport that ignores cancellation and answers only when told: a task whose own timeout
/// fires after the scheduler has given up on it.
private final class LateTransport: HTTPTransport, @unchecked Sendable {
    // Safety: `completion` is behind its lock.
    let maximumConnectionsPerHost = 6
    private let completion = Locked<(@Sendable (Result<TransportResponse, any Error>) -> Void)?>(nil)
    /// The paths of the requests it was handed.
    let started = EventLog<String>()

    private struct Task: TransportTask {
        func cancel() {}
    }

    func startTask(for request: TransportRequest, policy: TransportPolicy, progress: (@Sendable (TransferProgress) -> Void)?,
                   completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) -> any TransportTask {
        self.completion.withLock { $0 = completion }
        started.append(request.urlRequest.url?.path ?? "")
        return Task()
    }

    func report(_ result: Result<TransportResponse, any Error>) {
        completion.withLock { $0 }?(result)
    }
}

/// Logs the kind of each event about calls and their callers' ends, in the order heard.
private struct CallStory: RequestEvent.Monitor {
    let log: EventLog<String>

    func record(_ event: RequestEvent) {
        switch event {
        case .started: log.append("started")
        case .retried: log.append("retried")
        case .succeeded: log.append("succeeded")
        default: break
        }
    }
}

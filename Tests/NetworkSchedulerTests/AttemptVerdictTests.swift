import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine
import NetworkSchedulerTesting

/// An attempt's result is read beside the transport, into the few cases the machine decides
/// with: the machine never reads a status, a header or a token.
@Suite struct AttemptVerdictTests {
    private static let now = Date(timeIntervalSince1970: 1_700_000_000) // Tue, 14 Nov 2023 22:13:20 GMT

    private static func verdict(
        status: Int? = nil,
        headers: HeaderFields = [:],
        error: ServiceError? = nil,
        method: String = "GET",
        bearer: String? = nil,
        idempotencyKey: String? = nil,
        authenticated: Bool = false,
        attemptNumber: Int = 1,
        policy: RetryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: 0.5, maxDelay: 4),
        failureStatuses: Set<Int> = [],
        accepted: Range<Int> = 200..<300
    ) -> AttemptVerdict {
        var urlRequest = URLRequest(url: URL(string: "https://api.test/items")!)
        urlRequest.httpMethod = method
        urlRequest.setValue(bearer.map { "Bearer \($0)" }, forHTTPHeaderField: "Authorization")
        urlRequest.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key")
        let request = PreparedRequest(urlRequest)
        let outcome: Result<TransportResponse, ServiceError> = error.map { .failure($0) }
            ?? .success(StubTransport.response(to: urlRequest, status: status ?? 200, body: Data(), headers: headers))
        let authenticator = authenticated ? TokenAuthenticator(token: bearer) { _ in "new" } : nil
        let submission = Submission(.urlRequest(urlRequest), deduplication: .automatic, acceptableStatusCodes: accepted,
                                    authenticator: authenticator)
        // Read once, as the attempt ends; a failure's retry is added when the machine asks.
        switch AttemptReading(outcome, request: request, submission: submission, failureStatuses: failureStatuses, date: now) {
        case .verdict(let verdict):
            return verdict
        case .failure(let kind):
            let caller = CallerID(slot: SlotID(index: 0, generation: 0), number: 1)
            return AttemptVerdict(failure: kind, outcome: outcome, asked: [(caller, policy, attemptNumber)], request: request)
        }
    }

    /// One rule for success, the resource's: a 304 the cache did not answer, or a redirect the
    /// policy did not follow, was a success to the machine (its host's health, its retries, its
    /// dependents) and a failure to its caller.
    @Test func anAnswerSucceedsExactlyWhenItsResourceAcceptsItsStatus() {
        #expect(Self.verdict(status: 200) == AttemptVerdict(kind: .succeeded, retry: nil))
        #expect(Self.verdict(status: 304) == AttemptVerdict(kind: .rejected, retry: nil))
        #expect(Self.verdict(status: 302) == AttemptVerdict(kind: .rejected, retry: nil))
        #expect(Self.verdict(status: 304, accepted: 200..<400) == AttemptVerdict(kind: .succeeded, retry: nil))
        #expect(Self.verdict(status: 404, accepted: 200..<500) == AttemptVerdict(kind: .succeeded, retry: nil))
    }

    @Test func a401CarriesTheRejectedTokenOnlyWhenANewOneCanBeHad() {
        #expect(Self.verdict(status: 401, bearer: "old", authenticated: true).kind == .unauthorized(rejectedToken: "old"))
        #expect(Self.verdict(status: 401, bearer: "old") == AttemptVerdict(kind: .rejected, retry: nil))
    }

    @Test func a429Or503IsThrottledForItsRetryAfterInSecondsOrAsADate() {
        #expect(Self.verdict(status: 429, headers: ["Retry-After": "2"]) ==
                AttemptVerdict(kind: .throttled(retryAfter: 2), retry: .after(2)))
        #expect(Self.verdict(status: 503, headers: ["Retry-After": "Tue, 14 Nov 2023 22:13:50 GMT"]) ==
                AttemptVerdict(kind: .throttled(retryAfter: 30), retry: .after(30)))
        // Without a Retry-After it backs off; past the policy's longest wait it gives up, and the
        // host still hears how long it was asked to wait.
        #expect(Self.verdict(status: 503) == AttemptVerdict(kind: .throttled(retryAfter: nil), retry: .backoff(upTo: 0.5)))
        #expect(Self.verdict(status: 429, headers: ["Retry-After": "3600"]) ==
                AttemptVerdict(kind: .throttled(retryAfter: 3_600), retry: nil))
    }

    @Test func theStatusesTheHostsHealthCountsAreServerFailuresUnlessTheyAskToWait() {
        let counted: Set<Int> = [500, 502, 503, 504]
        for status in [500, 502, 503, 504] {
            #expect(Self.verdict(status: status, failureStatuses: counted).kind == .serverFailed)
        }
        #expect(Self.verdict(status: 503, headers: ["Retry-After": "2"], failureStatuses: counted).kind == .throttled(retryAfter: 2))
        #expect(Self.verdict(status: 501, failureStatuses: counted).kind == .rejected)
        #expect(Self.verdict(status: 429, failureStatuses: counted).kind == .throttled(retryAfter: nil))
        // The retry policy reads the answer as before: a counted 503 is still retried.
        #expect(Self.verdict(status: 503, failureStatuses: counted).retry == .backoff(upTo: 0.5))
    }

    @Test func otherErrorAnswersAreRejectedAndRetriedOnlyWhenThePolicySays() {
        #expect(Self.verdict(status: 500) == AttemptVerdict(kind: .rejected, retry: .backoff(upTo: 0.5)))
        #expect(Self.verdict(status: 500, attemptNumber: 3) == AttemptVerdict(kind: .rejected, retry: nil))
        #expect(Self.verdict(status: 500, method: "POST") == AttemptVerdict(kind: .rejected, retry: nil))
        #expect(Self.verdict(status: 500, method: "POST", idempotencyKey: "k") ==
                AttemptVerdict(kind: .rejected, retry: .backoff(upTo: 0.5)))
        #expect(Self.verdict(status: 404) == AttemptVerdict(kind: .rejected, retry: nil))
        #expect(Self.verdict(status: 500, attemptNumber: 2) == AttemptVerdict(kind: .rejected, retry: .backoff(upTo: 1)))
    }

    @Test func failuresWithoutAnAnswerSayWhatTheyTellOfTheHost() {
        #expect(Self.verdict(error: .connectionLost(URLError(.networkConnectionLost))) ==
                AttemptVerdict(kind: .unreachable, retry: .backoff(upTo: 0.5)))
        #expect(Self.verdict(error: .cannotConnect(URLError(.cannotConnectToHost))).kind == .unreachable)
        #expect(Self.verdict(error: .timedOut) == AttemptVerdict(kind: .timedOut, retry: .backoff(upTo: 0.5)))
        #expect(Self.verdict(error: .cancelled) == AttemptVerdict(kind: .noAnswer, retry: nil))
        #expect(Self.verdict(error: .responseTooLarge(limit: 10)) == AttemptVerdict(kind: .noAnswer, retry: nil))
    }

    @Test func aDecidersChoiceIsTheVerdictsAndItRunsOnTheCallingThread() {
        let policy = RetryPolicy(maxAttempts: 3).deciding { attempt in
            attempt.statusCode == 423 ? .retry(after: 0.25) : .usePolicy
        }
        #expect(Self.verdict(status: 423, policy: policy) == AttemptVerdict(kind: .rejected, retry: .after(0.25)))
        #expect(Self.verdict(status: 404, policy: policy) == AttemptVerdict(kind: .rejected, retry: nil))
    }

    @Test func aBackoffIsAShareOfItsCeilingAndAnExactWaitIsKept() {
        #expect(AttemptVerdict.Retry.backoff(upTo: 2).delay(jitter: 0.25) == 0.5)
        #expect(AttemptVerdict.Retry.backoff(upTo: 2).delay(jitter: 7) == 2)
        #expect(AttemptVerdict.Retry.after(3).delay(jitter: 0.25) == 3)
    }

    /// Through the scheduler: a 304 nobody cached is read once, as a failure, by the decider,
    /// the machine and the caller alike; a resource that accepts it succeeds in all three.
    @Test func a304IsReadOnceTheSameWayByTheRetryPolicyTheMachineAndTheCaller() async {
        let asked = EventLog<Int?>()
        let policy = RetryPolicy(maxAttempts: 2, baseDelay: 0).deciding { attempt in
            asked.append(attempt.statusCode)
            return .doNotRetry
        }
        let harness = Harness(retryPolicy: policy) { _ in .status(304) }

        await #expect(throws: ServiceError.server(ServiceError.ServerResponse(statusCode: 304, body: Data(), headers: [:]))) {
            try await harness.api.value(for: Resource<Void>(path: "unchanged"))
        }
        #expect(asked.elements == [304], "the decider was asked about the failed attempt")

        await #expect(throws: Never.self) {
            try await harness.api.value(for: Resource<Void>(path: "unchanged", acceptableStatusCodes: 200..<400))
        }
        #expect(asked.elements == [304], "an accepted 304 asks no retry policy")
    }
}

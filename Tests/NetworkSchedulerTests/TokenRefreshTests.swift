import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct TokenRefreshTests {
    /// A server that accepts only `Bearer fresh`.
    static func acceptingOnlyFresh(_ request: URLRequest) -> StubResponse {
        request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh"
            ? .json(userJSON) : .json(#"{"message": "token expired"}"#, status: 401)
    }

    @Test func manyRequestsRejectedAtOnceShareOneRefreshAndAreEachReplayedOnce() async {
        let refreshes = Counter()
        let rejected = EventLog<Int>()
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            _ = refreshes.next()
            await rejected.wait(for: 20) // every request has been rejected before the refresh ends
            return "fresh"
        }
        let harness = Harness(authenticator: authenticator) { request in
            let reply = Self.acceptingOnlyFresh(request)
            if case .respond(401, _, _) = reply { rejected.append(0) }
            return reply
        }
        let outcomes = Outcomes<User>()
        for index in 0..<20 {
            harness.api.send(Resource<User>(path: "users/\(index)"), completion: outcomes.completion("\(index)"))
        }

        let results = await outcomes.wait(for: 20)
        #expect(results.count == 20)
        #expect(results.values.allSatisfy { $0.success?.id == 1 })
        #expect(refreshes.count == 1)
        #expect(harness.transport.arrivals.count == 40)
        #expect(authenticator.token == "fresh")
    }

    @Test func aFailedRefreshFailsEveryRejectedRequest() async {
        struct SignedOut: Error {}
        let refreshes = Counter()
        let rejected = EventLog<Int>()
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            _ = refreshes.next()
            await rejected.wait(for: 10)
            throw SignedOut()
        }
        let harness = Harness(authenticator: authenticator) { request in
            rejected.append(0)
            return Self.acceptingOnlyFresh(request)
        }
        let outcomes = Outcomes<User>()
        for index in 0..<10 {
            harness.api.send(Resource<User>(path: "users/\(index)"), completion: outcomes.completion("\(index)"))
        }

        let results = await outcomes.wait(for: 10)
        #expect(results.count == 10)
        #expect(results.values.allSatisfy {
            if case .authenticationFailed? = $0.failure { return true }
            return false
        })
        #expect(refreshes.count == 1)
        #expect(harness.transport.arrivals.count == 10)
    }

    @Test func aRequestRejectedAgainAfterItsReplayEndsWithTheRejection() async {
        let refreshes = Counter()
        let authenticator = TokenAuthenticator(token: "stale") { _ in "fresh-\(refreshes.next())" }
        let harness = Harness(authenticator: authenticator) { _ in .json(#"{"message": "no"}"#, status: 401) }

        let error = await #expect(throws: ServiceError.self) { try await harness.api.value(for: Resource<User>(path: "me")) }

        #expect(error?.statusCode == 401)
        #expect(refreshes.count == 1)
        #expect(harness.events.retried.elements == [2]) // the replay, reported as the second attempt
        #expect(harness.transport.arrivals.elements.map { $0.request.value(forHTTPHeaderField: "Authorization") }
                == ["Bearer stale", "Bearer fresh-1"])
    }

    @Test func aRequestSentAfterTheRefreshUsesTheNewTokenAtOnce() async throws {
        let refreshes = Counter()
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            _ = refreshes.next()
            return "fresh"
        }
        let harness = Harness(authenticator: authenticator, reply: Self.acceptingOnlyFresh)
        _ = try await harness.api.value(for: Resource<User>(path: "a"))
        _ = try await harness.api.value(for: Resource<User>(path: "b"))
        #expect(refreshes.count == 1)
        #expect(harness.transport.arrivals.count == 3)
    }

    @Test func aRefreshThatNeverReturnsFailsEveryoneAtItsDeadline() async {
        let refreshes = Counter()
        let authenticator = TokenAuthenticator(token: "stale", timeout: 1) { _ in
            _ = refreshes.next()
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in } // stuck for good
            return "never"
        }
        let harness = Harness(authenticator: authenticator, reply: Self.acceptingOnlyFresh)
        let outcomes = Outcomes<User>()
        for index in 0..<5 {
            harness.api.send(Resource<User>(path: "users/\(index)"), completion: outcomes.completion("\(index)"))
        }

        let results = await outcomes.wait(for: 5)
        #expect(results.count == 5)
        #expect(results.values.allSatisfy { $0.failure == .authenticationFailed(cause: .timedOut) })

        // A request rejected later with the same token fails at once, without a second refresh.
        let late = await #expect(throws: ServiceError.self) { try await harness.api.value(for: Resource<User>(path: "late")) }
        #expect(late == .authenticationFailed(cause: .timedOut))
        #expect(refreshes.count == 1)
    }

    /// A refresh that hung once held a request whose timeout is short for the refresh's whole
    /// deadline (30 s), and every 401 after it as long.
    @Test func aRequestWaitsForAHungRefreshNoLongerThanItsOwnTimeout() async {
        let authenticator = TokenAuthenticator(token: "stale", timeout: 600) { _ in
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in } // stuck for good
            return "never"
        }
        let harness = Harness(authenticator: authenticator, reply: Self.acceptingOnlyFresh)
        let outcomes = Outcomes<User>()
        // Two requests of a 0.2 s timeout, one after the other: the second joins the hung refresh.
        let quick = APIClient(baseURL: SchedulerSteeringTests.base, scheduler: harness.scheduler, timeout: 0.2,
                              authenticator: authenticator)
        quick.send(Resource<User>(path: "users/1"), completion: outcomes.completion("first"))
        #expect(await outcomes.wait(for: 1)["first"]?.failure == .authenticationFailed(cause: .timedOut))
        quick.send(Resource<User>(path: "users/2"), completion: outcomes.completion("second"))

        let results = await outcomes.wait(for: 2)
        #expect(results["second"]?.failure == .authenticationFailed(cause: .timedOut))
        #expect(harness.transport.arrivals.count == 2)
    }

    @Test func aFailingRefreshRunsOnceForAWholeWaveOfRejections() async throws {
        // Before, requests rejected after the refresh had failed each started another: 24 to
        // 34 refreshes for a wave of 200.
        struct SignedOut: Error {}
        let refreshes = Counter()
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            _ = refreshes.next()
            throw SignedOut()
        }
        let harness = Harness(authenticator: authenticator, reply: Self.acceptingOnlyFresh)
        let outcomes = Outcomes<User>()
        for index in 0..<200 {
            harness.api.send(Resource<User>(path: "users/\(index)"), completion: outcomes.completion("\(index)"))
        }

        let results = await outcomes.wait(for: 200)
        let expected = ServiceError.authenticationFailed(cause: .underlying(ServiceError.UnderlyingError(SignedOut())))
        #expect(results.count == 200)
        #expect(results.values.allSatisfy { $0.failure == expected })
        #expect(refreshes.count == 1)

        // Once the app signs in again, the token is used and a later rejection refreshes anew.
        authenticator.token = "fresh"
        #expect(try await harness.api.value(for: Resource<User>(path: "me")).id == 1)
    }

    @Test func aRefreshStuckForGoodDoesNotKeepItsAuthenticatorAlive() async {
        weak var released: TokenAuthenticator?
        do {
            let authenticator = TokenAuthenticator(token: "stale", timeout: 0.1) { _ in
                await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in } // ignores cancellation too
                return "never"
            }
            released = authenticator
            await #expect(throws: ServiceError.timedOut) { try await authenticator.token(replacing: "stale") }
        }
        #expect(released == nil)
    }
}

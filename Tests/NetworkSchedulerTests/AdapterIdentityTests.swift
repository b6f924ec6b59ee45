import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// The app's current user, which an adapter reads as each request goes.
final class CurrentUser: Sendable {
    private let name: Locked<String>

    init(_ name: String) { self.name = Locked(name) }

    var value: String {
        get { name.withLock { $0 } }
        set { name.withLock { $0 = newValue } }
    }
}

/// What an adapter adds counts in the request's identity: a call, or a cached answer, is shared
/// only by requests adapted for the same user.
@Suite struct AdapterIdentityTests {
    /// A client whose adapter sets the current user's token as each attempt starts.
    private static func client(_ harness: Harness, user: CurrentUser, statesIdentity: Bool = true) -> APIClient {
        var client = harness.api
        let adapt: @Sendable (URLRequest) async throws -> URLRequest = { request in
            var request = request
            request.setValue("Bearer \(user.value)", forHTTPHeaderField: "Authorization")
            return request
        }
        client.requestAdapter = statesIdentity ? RequestAdapter(identity: { user.value }, adapt) : RequestAdapter(adapt)
        return client
    }

    @Test func aSwitchedUsersRequestNeverJoinsThePreviousUsersCall() async throws {
        // Given alice's GET /me on the wire
        let harness = Harness { _ in .hold }
        let user = CurrentUser("alice")
        let api = Self.client(harness, user: user)
        async let alice = api.reply(for: Resource<Data>(path: "me", decoding: .data))
        await harness.transport.arrivals.wait(for: 1)

        // When the app switches to bob, who sends the same GET
        user.value = "bob"
        async let bob = api.reply(for: Resource<Data>(path: "me", decoding: .data))
        let arrivals = await harness.transport.arrivals.wait(for: 2)

        // Then each went with its own token and gets its own answer
        #expect(arrivals.map { $0.request.value(forHTTPHeaderField: "Authorization") } == ["Bearer alice", "Bearer bob"])
        #expect(harness.transport.release(path: "/v1/me", with: .json(#"{"name":"alice"}"#)))
        #expect(harness.transport.release(path: "/v1/me", with: .json(#"{"name":"bob"}"#)))
        let (aliceReply, bobReply) = try await (alice, bob)
        #expect(aliceReply.value == Data(#"{"name":"alice"}"#.utf8))
        #expect(bobReply.value == Data(#"{"name":"bob"}"#.utf8))
        #expect(!aliceReply.wasShared && !bobReply.wasShared)
    }

    @Test func oneUsersIdenticalRequestsShareOneCall() async throws {
        let harness = Harness { _ in .hold }
        let api = Self.client(harness, user: CurrentUser("alice"))
        async let first = api.reply(for: Resource<Data>(path: "me", decoding: .data))
        async let second = api.reply(for: Resource<Data>(path: "me", decoding: .data))
        await harness.transport.arrivals.wait(for: 1)
        while harness.scheduler.census.callers < 2 { await Task.yield() }
        #expect(harness.transport.release(with: .json("{}")))
        let replies = try await [first, second]
        #expect(replies.allSatisfy { $0.wasShared })
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func anAdapterThatStatesNoIdentitySharesNothing() async throws {
        let harness = Harness { _ in .hold }
        let api = Self.client(harness, user: CurrentUser("alice"), statesIdentity: false)
        let outcomes = Outcomes<Data>()
        for index in 0..<3 { api.send(Resource<Data>(path: "me", decoding: .data), completion: outcomes.completion("\(index)")) }
        await harness.transport.arrivals.wait(for: 3)
        while harness.transport.release(with: .json("{}")) {}
        #expect(await outcomes.wait(for: 3).count == 3)
        #expect(harness.transport.arrivals.count == 3)
    }

    @Test func aRequestBuiltForOneUserIsNotSentAsAnother() async throws {
        // Given alice's request waiting behind the host's only slot
        let harness = Harness(budget: 1) { _ in .hold }
        let user = CurrentUser("alice")
        let api = Self.client(harness, user: user)
        harness.api.send(Resource<Data>(path: "blocker", decoding: .data)) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        let outcomes = Outcomes<Data>()
        api.send(Resource<Data>(path: "me", decoding: .data), completion: outcomes.completion("alice"))

        // When the user switches before it is sent
        user.value = "bob"
        #expect(harness.transport.release(path: "/v1/blocker", with: .json("{}")))

        // Then it ends without reaching the wire as bob
        let result = await outcomes.wait(for: 1)["alice"]
        #expect(result?.failure == .invalidRequest(reason: "the request adapter's identity changed after the request was built"))
        #expect(harness.transport.arrivals.elements.allSatisfy { $0.path != "/v1/me" })
    }

    @Test func aReplayAfterATokenRefreshIsNotSentAsAUserSwitchedInMeanwhile() async throws {
        // Given alice's request, rejected for its stale token; the app switches to bob while
        // the token is refreshed
        let user = CurrentUser("alice")
        let authenticator = TokenAuthenticator(token: "stale") { _ in
            user.value = "bob"
            return "fresh"
        }
        let harness = Harness(authenticator: authenticator) { request in
            request.value(forHTTPHeaderField: "Authorization") == "Bearer fresh" ? .json(userJSON) : .status(401)
        }
        var api = harness.api
        api.requestAdapter = RequestAdapter(identity: { user.value }) { request in
            var request = request
            request.setValue(user.value, forHTTPHeaderField: "X-User")
            return request
        }
        let outcomes = Outcomes<User>()
        api.send(Resource<User>(path: "me"), completion: outcomes.completion("alice"))

        // Then the replay, matched as alice's, is not sent as bob's
        let result = await outcomes.wait(for: 1)["alice"]
        #expect(result?.failure == .invalidRequest(reason: "the request adapter's identity changed after the request was built"))
        #expect(harness.transport.arrivals.elements.map { $0.request.value(forHTTPHeaderField: "X-User") } == ["alice"])
    }

    @Test func theCacheKeepsAnAdaptedAnswerForItsUserAlone() async throws {
        let cache = ResponseCache()
        let harness = Harness(reply: { request in
            .json(#"{"for":"\#(request.value(forHTTPHeaderField: "Authorization") ?? "")"}"#,
                  headers: ["Cache-Control": "max-age=600"])
        }) { $0.cache = cache }
        let user = CurrentUser("alice")
        let api = Self.client(harness, user: user)
        let me = Resource<Data>(path: "me", decoding: .data)

        #expect(try await api.value(for: me) == Data(#"{"for":"Bearer alice"}"#.utf8))
        #expect(try await api.value(for: me) == Data(#"{"for":"Bearer alice"}"#.utf8))
        #expect(harness.transport.arrivals.count == 1, "alice's second read is a fresh hit")
        user.value = "bob"
        #expect(try await api.value(for: me) == Data(#"{"for":"Bearer bob"}"#.utf8))
        #expect(harness.transport.arrivals.count == 2)
    }
}

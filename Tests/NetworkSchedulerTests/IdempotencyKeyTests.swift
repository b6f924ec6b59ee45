import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct IdempotencyKeyTests {
    private func key(_ arrival: StubTransport.Arrival?) -> String? {
        arrival?.request.value(forHTTPHeaderField: "Idempotency-Key")
    }

    @Test func aClientThatOptsInKeysItsPostsButNotItsGets() async throws {
        let harness = Harness(sendsIdempotencyKeys: true)
        _ = try await harness.api.value(for: Resource<User>(.post, path: "posts", body: .json(NewPost(text: "x"))))
        _ = try await harness.api.value(for: Resource<User>(path: "users/1"))
        let arrivals = harness.transport.arrivals.elements
        #expect(key(arrivals.first).map { UUID(uuidString: $0) != nil } == true)
        #expect(key(arrivals.last) == nil)
    }

    @Test func identicalSubmitsInFlightShareOneCallAndOneKey() async {
        let harness = Harness(sendsIdempotencyKeys: true) { _ in .hold }
        let outcomes = Outcomes<User>()
        let create = Resource<User>(.post, path: "posts", body: .json(NewPost(text: "x")))
        harness.api.send(create, completion: outcomes.completion("a"))
        harness.api.send(create, completion: outcomes.completion("b"))
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON, status: 201))

        #expect(await outcomes.wait(for: 2).count == 2)
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func separateSubmitsGetTheirOwnKeys() async throws {
        let harness = Harness(sendsIdempotencyKeys: true)
        let create = Resource<User>(.post, path: "posts", body: .json(NewPost(text: "x")))
        _ = try await harness.api.value(for: create)
        _ = try await harness.api.value(for: create)
        let keys = harness.transport.arrivals.elements.map(key)
        #expect(keys.count == 2 && keys[0] != nil && keys[0] != keys[1])
    }

    @Test func aConflictOnAKeyedRequestMeansTheOriginalIsInProgress() async {
        let harness = Harness { _ in .json(#"{"message": "in progress"}"#, status: 409) }
        let create = Resource<User>(.post, path: "posts", body: .json(NewPost(text: "x"))).withIdempotencyKey()
        await #expect(throws: ServiceError.idempotencyKeyInUse(ServiceError.ServerResponse(
            statusCode: 409, message: "in progress", body: Data(#"{"message": "in progress"}"#.utf8),
            headers: ["content-type": "application/json"]))) {
            try await harness.api.value(for: create)
        }
    }

    @Test func unprocessableOnAKeyedRequestMeansTheKeyWasReusedForAnotherPayload() async {
        let harness = Harness { _ in .json(#"{"message": "key reused"}"#, status: 422) }
        let create = Resource<User>(.post, path: "posts", body: .json(NewPost(text: "x"))).withIdempotencyKey()
        let error = await #expect(throws: ServiceError.self) { try await harness.api.value(for: create) }
        if case .idempotencyKeyMismatch(let response)? = error { #expect(response.message == "key reused") }
        else { Issue.record("expected idempotencyKeyMismatch, got \(String(describing: error))") }
    }

    @Test func withoutAKeyAConflictIsAnOrdinaryServerError() async {
        let harness = Harness { _ in .json(#"{"message": "already exists"}"#, status: 409) }
        let error = await #expect(throws: ServiceError.self) {
            try await harness.api.value(for: Resource<User>(.post, path: "posts", body: .json(NewPost(text: "x"))))
        }
        #expect(error?.statusCode == 409)
        if case .server? = error {} else { Issue.record("expected server, got \(String(describing: error))") }
    }

    @Test func aKeyedRequestIsRetriedWhileTheOriginalIsInProgress() async throws {
        let attempts = Counter()
        let harness = Harness(retryPolicy: SchedulerRetryTests.quick) { _ in
            attempts.next() == 1 ? .json(#"{"message": "in progress"}"#, status: 409) : .json(userJSON, status: 201)
        }
        let create = Resource<User>(.post, path: "posts", body: .json(NewPost(text: "x"))).withIdempotencyKey()
        #expect(try await harness.api.value(for: create).id == 1)
        #expect(harness.transport.arrivals.count == 2)
    }
}

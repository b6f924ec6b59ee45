import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler
import NetworkSchedulerTesting
import Testing

/// Callers that await: their answer is read on their own task, not on the transport's thread.
@Suite struct AsyncCallerTests {
    /// Set by the awaiting task; a decode that runs elsewhere (the thread that ended the
    /// caller) does not see it.
    @TaskLocal static var awaitingTask: String?

    @Test func valueForDecodesOnTheAwaitingTask() async throws {
        let harness = Harness()
        let decodedOn = EventLog<String?>()
        let resource = Resource<User>(path: "users/1", decoding: .custom { data, _ in
            decodedOn.append(Self.awaitingTask)
            return try JSONDecoder().decode(User.self, from: data)
        })

        let user = try await Self.$awaitingTask.withValue("the caller") { try await harness.api.value(for: resource) }

        #expect(user.id == 1)
        #expect(decodedOn.elements == ["the caller"])
    }

    @Test func aCallerWhoseAnswerFailsToDecodeEndsFailedOnceItIsRead() async throws {
        let harness = Harness { _ in .json(#"{"id":"not a number"}"#) }

        let error = await #expect(throws: ServiceError.self) { try await harness.api.value(for: Resource<User>(path: "users/1")) }

        guard case .undecodable? = error else {
            Issue.record("expected undecodable, got \(String(describing: error))")
            return
        }
        let ended = await harness.events.ended.wait(for: 1)
        guard case .failed(_, .undecodable, _)? = ended.first else {
            Issue.record("the monitor heard \(ended), not the decode's failure")
            return
        }
    }

    @Test func everyAwaitingCallerOfASharedCallReadsItOnItsOwnTask() async throws {
        let harness = Harness { _ in .hold }
        let decodedOn = EventLog<String?>()
        let resource = Resource<User>(path: "users/1", decoding: .custom { data, _ in
            decodedOn.append(Self.awaitingTask)
            return try JSONDecoder().decode(User.self, from: data)
        })

        async let first = Self.$awaitingTask.withValue("first") { try await harness.api.value(for: resource) }
        async let second = Self.$awaitingTask.withValue("second") { try await harness.api.value(for: resource) }
        await harness.events.joined.wait(for: 1)
        harness.transport.release(with: .json(userJSON))
        let users = try await [first, second]

        #expect(users.map(\.id) == [1, 1])
        #expect(harness.transport.arrivals.count == 1, "one call for both")
        #expect(Set(decodedOn.elements.compactMap { $0 }) == ["first", "second"], "each read on its own task")
        #expect(harness.isIdle)
    }
}

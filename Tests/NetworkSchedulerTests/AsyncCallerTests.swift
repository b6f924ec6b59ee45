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
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON))
        let users = try await [first, second]

        #expect(users.map(\.id) == [1, 1])
        #expect(harness.transport.arrivals.count == 1, "one call for both")
        #expect(Set(decodedOn.elements.compactMap { $0 }) == ["first", "second"], "each read on its own task")
        #expect(harness.isIdle)
    }
}

/// An awaiting caller's place in its host's line follows its task's priority escalation.
@Suite struct TaskEscalationTests {
    /// A scheduler with one slot, held by a request until released, with `waiting` sent
    /// behind it: an awaiting `.low` caller of `/v1/users/1`, then a `.normal` one of
    /// `/v1/users/2` through the completion API.
    private static func lineBehindABusySlot(group: RequestGroup? = nil) async -> (Harness, Task<User, any Error>) {
        let harness = Harness(budget: 1, slotsReservedAboveLowPriority: 0, reply: { request in
            request.url?.path == "/v1/blocker" ? .hold : .json(userJSON)
        })
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        let awaiting = Task(priority: .low) {
            try await harness.api.value(for: Resource<User>(path: "users/1"), priority: .low, group: group)
        }
        await harness.events.enqueued.wait(for: 2)
        harness.api.send(Resource<User>(path: "users/2"), priority: .normal) { _ in }
        await harness.events.enqueued.wait(for: 3)
        return (harness, awaiting)
    }

    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func anEscalatedTaskRaisesItsCallerInItsHostsLine() async throws {
        let (harness, awaiting) = await Self.lineBehindABusySlot()

        awaiting.escalatePriority(to: .high)
        harness.transport.release(path: "/v1/blocker", with: .json(userJSON))
        _ = try await awaiting.value
        await harness.transport.arrivals.wait(for: 3)

        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/blocker", "/v1/users/1", "/v1/users/2"],
                "the escalated .low caller went before the .normal one")
    }

    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func theCallersOwnPrioritySetAgainReplacesTheEscalation() async throws {
        let group = RequestGroup()
        let (harness, awaiting) = await Self.lineBehindABusySlot(group: group)

        awaiting.escalatePriority(to: .high)
        group.setPriority(.background)
        harness.transport.release(path: "/v1/blocker", with: .json(userJSON))
        _ = try await awaiting.value
        await harness.transport.arrivals.wait(for: 3)

        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/blocker", "/v1/users/2", "/v1/users/1"])
    }

    @Test func withoutEscalationTheLineKeepsItsOrder() async throws {
        let (harness, awaiting) = await Self.lineBehindABusySlot()

        harness.transport.release(path: "/v1/blocker", with: .json(userJSON))
        _ = try await awaiting.value
        await harness.transport.arrivals.wait(for: 3)

        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/blocker", "/v1/users/2", "/v1/users/1"])
    }

    @Test(arguments: [
        (TaskPriority.background, RequestPriority.background), (.utility, .low), (.low, .low),
        (.medium, .normal), (.userInitiated, .high), (.high, .high), (TaskPriority(rawValue: 40), .high),
    ])
    func aTaskPriorityMapsToTheRequestPriorityItMeans(task: TaskPriority, request: RequestPriority) {
        #expect(RequestPriority(escalatedTo: task) == request)
    }
}

/// A scheduler with no callback queue: each completion runs on the thread that ended its
/// caller, with no hop.
@Suite struct NoCallbackQueueTests {
    @Test func aCompletionRunsOnTheThreadThatEndedItsCaller() async throws {
        let harness = Harness(reply: { _ in .hold }, configure: { $0.callbackQueue = nil })
        let ended = Locked<[String]>([])

        harness.api.send(Resource<User>(path: "users/1")) { result in
            ended.withLock { $0.append((try? result.get()).map { "user \($0.id)" } ?? "failed") }
        }
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON))

        #expect(ended.withLock { $0 } == ["user 1"], "ran before the release returned")
    }

    @Test func aCancelledCallersCompletionRunsBeforeCancelReturns() async throws {
        let harness = Harness(reply: { _ in .hold }, configure: { $0.callbackQueue = nil })
        let ended = Locked<[ServiceError?]>([])

        let handle = harness.api.send(Resource<User>(path: "users/1")) { result in
            ended.withLock { state in
                if case .failure(let error) = result { state.append(error) } else { state.append(nil) }
            }
        }
        await harness.transport.arrivals.wait(for: 1)
        handle.cancel()

        #expect(ended.withLock { $0 } == [.cancelled])
        #expect(handle.isFinished)
    }
}

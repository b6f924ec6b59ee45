import Foundation
import Testing
@testable import NetworkScheduler

@Suite struct SchedulerCancellationTests {
    @Test func cancellingOneCallerEndsItAtOnceWhileTheOtherKeepsTheCall() async throws {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let request = harness.api.resolve(Resource<User>(path: "users/1"))
        let leaving = harness.scheduler.send(request, completion: outcomes.completion("leaving"))
        harness.scheduler.send(request, completion: outcomes.completion("staying"))
        await harness.transport.arrivals.wait(for: 1)

        leaving.cancel()
        let cancelled = await outcomes.wait(for: 1)
        #expect(cancelled["leaving"]?.failure == .cancelled)
        #expect(harness.transport.cancellations.count == 0)

        harness.transport.release(with: .json(userJSON))
        let all = await outcomes.wait(for: 2)
        #expect(try all["staying"]?.get().name == "Ada")
        #expect(outcomes.log.count == 2)
    }

    @Test func cancellingTheLastCallerCancelsTheDataTask() async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let request = harness.api.resolve(Resource<User>(path: "users/1"))
        let first = harness.scheduler.send(request, completion: outcomes.completion("first"))
        let second = harness.scheduler.send(request, completion: outcomes.completion("second"))
        await harness.transport.arrivals.wait(for: 1)

        first.cancel()
        second.cancel()

        #expect(await harness.transport.cancellations.wait(for: 1).count == 1)
        let results = await outcomes.wait(for: 2)
        #expect(results["first"]?.failure == .cancelled)
        #expect(results["second"]?.failure == .cancelled)
    }

    @Test func callCancelledBeforeItStartsNeverTouchesTheNetwork() async {
        let harness = Harness(budget: 1) { _ in .hold }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "blocker"), completion: outcomes.completion("blocker"))
        await harness.transport.arrivals.wait(for: 1)
        let queued = harness.api.send(Resource<User>(path: "queued"), completion: outcomes.completion("queued"))

        queued.cancel()
        #expect(await outcomes.wait(for: 1)["queued"]?.failure == .cancelled)

        harness.transport.release(with: .json(userJSON))
        _ = await outcomes.wait(for: 2)
        // A request sent after the cancelled one proves the queue moved past it.
        harness.api.send(Resource<User>(path: "after"), completion: outcomes.completion("after"))
        harness.transport.release(path: "/v1/after", with: .json(userJSON))
        let arrivals = await harness.transport.arrivals.wait(for: 2)
        #expect(arrivals.map(\.path) == ["/v1/blocker", "/v1/after"])
    }

    @Test func cancellingTheSwiftTaskCancelsThatCallerOnly() async throws {
        let harness = Harness { _ in .hold }
        let request = harness.api.resolve(Resource<User>(path: "users/1"))
        let staying = Outcomes<User>()
        harness.scheduler.send(request, completion: staying.completion("staying"))
        let task = Task { try await harness.scheduler.value(for: request) }
        await harness.transport.arrivals.wait(for: 1)
        #expect(await harness.events.joined.wait(for: 1).count == 1)

        task.cancel()
        await #expect(throws: ServiceError.cancelled) { try await task.value }

        harness.transport.release(with: .json(userJSON))
        #expect(try await staying.wait(for: 1)["staying"]?.get().id == 1)
    }

    /// A task that cancels itself, then awaits `users/1`: it throws `.cancelled`.
    private static func awaitInATaskCancelledBeforeItAsks(_ harness: Harness) async {
        let request = harness.api.resolve(Resource<User>(path: "users/1"))
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await harness.scheduler.value(for: request)
        }
        await #expect(throws: ServiceError.cancelled) { try await task.value }
    }

    @Test func aTaskCancelledBeforeSendingNeverTouchesTheNetwork() async {
        let harness = Harness()
        await Self.awaitInATaskCancelledBeforeItAsks(harness)
        // One more request through the same queue shows the cancelled one was skipped.
        _ = try? await harness.scheduler.value(for: harness.api.resolve(Resource<User>(path: "after")))
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/after"])
    }

    /// A monitor hears every caller end, this one too, though it never had a handle.
    @Test func aTaskCancelledBeforeSendingIsHeardToEndCancelled() async {
        let harness = Harness()
        await Self.awaitInATaskCancelledBeforeItAsks(harness)

        let ended = await harness.events.ended.wait(for: 1)
        guard case .cancelled(let caller)? = ended.first else {
            Issue.record("expected a cancelled caller, heard \(ended)")
            return
        }
        #expect(caller.method == "GET")
        #expect(caller.url?.path == "/v1/users/1")
        #expect(caller.callNumber == nil)
        #expect(harness.events.enqueued.count + harness.events.joined.count == 0, "it never began")
        #expect(harness.transport.arrivals.count == 0)
    }

    @Test func fiveThousandTasksCancelledBeforeSendingNeverTouchTheNetwork() async {
        // Before, an already cancelled task's request was enqueued and then cancelled, and its
        // operation could start on a queue's thread in between (1 to 8 times in 400 against a real server).
        let harness = Harness()
        let request = harness.api.resolve(Resource<User>(path: "users/1"))
        await withTaskGroup(of: ServiceError?.self) { group in
            for _ in 0..<5_000 {
                group.addTask {
                    withUnsafeCurrentTask { $0?.cancel() }
                    do throws(ServiceError) {
                        _ = try await harness.scheduler.value(for: request)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            var cancelled = 0
            for await error in group where error == .cancelled { cancelled += 1 }
            #expect(cancelled == 5_000)
        }
        #expect(harness.transport.arrivals.count == 0)
    }

    @Test func cancellingAfterCompletionChangesNothing() async throws {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let handle = harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("only"))
        _ = await outcomes.wait(for: 1)

        handle.cancel()
        handle.cancel()

        #expect(try outcomes.log.elements.single.result.get().id == 1)
        #expect(handle.outcome == .succeeded)
    }
}

extension Array {
    var single: Element {
        get throws {
            guard count == 1, let first else { throw ExpectedOne(count: count) }
            return first
        }
    }
}

struct ExpectedOne: Error {
    let count: Int
}

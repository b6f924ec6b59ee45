import Foundation
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct SchedulerGroupTests {
    @Test func cancellingAGroupCancelsExactlyItsOwnCallers() async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let leaving = RequestGroup()
        let staying = RequestGroup()
        harness.api.send(Resource<User>(path: "a"), group: leaving, completion: outcomes.completion("leaving a"))
        harness.api.send(Resource<User>(path: "b"), group: leaving, completion: outcomes.completion("leaving b"))
        harness.api.send(Resource<User>(path: "c"), group: staying, completion: outcomes.completion("staying c"))
        await harness.transport.arrivals.wait(for: 3)
        #expect(leaving.count == 2)

        leaving.cancelAll()

        let cancelled = await outcomes.wait(for: 2)
        #expect(cancelled["leaving a"]?.failure == .cancelled)
        #expect(cancelled["leaving b"]?.failure == .cancelled)
        #expect(cancelled["staying c"] == nil)
        #expect(await harness.transport.cancellations.wait(for: 2).count == 2)
        #expect(await leaving.settled(timeout: 10))
        #expect(leaving.count == 0)

        harness.transport.release(path: "/v1/c", with: .json(userJSON))
        #expect(await outcomes.wait(for: 3)["staying c"]?.success?.id == 1)
        withExtendedLifetime(staying) {}
    }

    @Test func aGroupCancelsItsCallersOnEverySchedulerItWasUsedWith() async {
        let first = Harness { _ in .hold }
        let second = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let screen = RequestGroup()
        first.api.send(Resource<User>(path: "a"), group: screen, completion: outcomes.completion("first a"))
        second.api.send(Resource<User>(path: "b"), group: screen, completion: outcomes.completion("second b"))
        first.api.send(Resource<User>(path: "c"), group: screen, completion: outcomes.completion("first c"))
        await first.transport.arrivals.wait(for: 2)
        await second.transport.arrivals.wait(for: 1)

        screen.cancelAll()

        let cancelled = await outcomes.wait(for: 3)
        #expect(cancelled.count == 3 && cancelled.values.allSatisfy { $0.failure == .cancelled }, "\(cancelled)")
        #expect(await first.transport.cancellations.wait(for: 2).count == 2)
        #expect(await second.transport.cancellations.wait(for: 1).count == 1)
    }

    @Test func aCallSharedWithAnotherGroupKeepsRunningForIt() async throws {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let friendsScreen = RequestGroup()
        let profileScreen = RequestGroup()
        let request = harness.api.resolve(Resource<User>(path: "users/1"))
        harness.scheduler.send(request, group: friendsScreen, completion: outcomes.completion("friends"))
        harness.scheduler.send(request, group: profileScreen, completion: outcomes.completion("profile"))
        await harness.transport.arrivals.wait(for: 1)

        friendsScreen.cancelAll()
        #expect(await outcomes.wait(for: 1)["friends"]?.failure == .cancelled)

        harness.transport.release(with: .json(userJSON))
        #expect(try await outcomes.wait(for: 2)["profile"]?.get().id == 1)
        #expect(harness.transport.cancellations.count == 0)
        withExtendedLifetime(profileScreen) {}
    }

    @Test func releasingAGroupCancelsWhatIsLeft() async {
        let harness = Harness(budget: 1) { _ in .hold }
        let outcomes = Outcomes<User>()
        var screen: RequestGroup? = RequestGroup()
        harness.api.send(Resource<User>(path: "running"), group: screen, completion: outcomes.completion("running"))
        harness.api.send(Resource<User>(path: "queued"), group: screen, completion: outcomes.completion("queued"))
        await harness.transport.arrivals.wait(for: 1)

        screen = nil

        let results = await outcomes.wait(for: 2)
        #expect(results["running"]?.failure == .cancelled)
        #expect(results["queued"]?.failure == .cancelled)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/running"])
    }

    @Test func finishedRequestsLeaveTheirGroup() async {
        let harness = Harness { _ in .hold }
        let screen = RequestGroup()
        for index in 0..<10 {
            harness.api.send(Resource<User>(path: "users/\(index)"), group: screen) { _ in }
        }
        #expect(screen.count == 10)

        for answered in 1...10 {
            await harness.transport.arrivals.wait(for: answered)
            harness.transport.release(with: .json(userJSON))
        }
        await harness.events.ended.wait(for: 10)

        #expect(screen.count == 0)
    }

    @Test func aRequestThatEndsBeforeItIsListedDoesNotStayInItsGroup() async {
        // The async API delivers on the ending thread: an invalid request ends inside `send`,
        // before the group lists it.
        let harness = Harness()
        let screen = RequestGroup()
        let invalid = Resource<User>(path: "me", body: .json(["x": 1]))

        await #expect(throws: ServiceError.invalidRequest(reason: "a GET request cannot carry a body")) {
            try await harness.api.value(for: invalid, group: screen)
        }

        #expect(screen.count == 0)
    }

    @Test func aGroupCanBeUsedAgainAfterCancelling() async throws {
        let harness = Harness()
        let screen = RequestGroup()
        screen.cancelAll()
        let user = try await harness.api.value(for: Resource<User>(path: "users/1"), group: screen)
        #expect(user.id == 1)
    }

    // MARK: - Settling

    @Test func aGroupSettlesOnceEveryRequestsCompletionHasRun() async {
        let harness = Harness { _ in .hold }
        let screen = RequestGroup()
        let done = EventLog<String>()
        for index in 0..<3 {
            harness.api.send(Resource<User>(path: "users/\(index)"), group: screen) { _ in done.append("users/\(index)") }
        }
        await harness.transport.arrivals.wait(for: 3)
        let settling = Task { await screen.settled(timeout: 10) ? done.count : -1 }

        for _ in 0..<3 { harness.transport.release(with: .json(userJSON)) }

        #expect(await settling.value == 3)
        #expect(screen.count == 0)
    }

    @Test func aCancelledGroupSettlesOnceItsCallersHaveBeenTold() async {
        let harness = Harness { _ in .hold }
        let screen = RequestGroup()
        let outcomes = Outcomes<User>()
        for index in 0..<3 {
            harness.api.send(Resource<User>(path: "users/\(index)"), group: screen, completion: outcomes.completion("\(index)"))
        }
        await harness.transport.arrivals.wait(for: 3)

        screen.cancelAll()

        #expect(await screen.settled(timeout: 10))
        #expect(outcomes.log.count == 3)
        #expect(outcomes.log.elements.allSatisfy { $0.result.failure == .cancelled })
    }

    @Test func anEmptyGroupIsSettledAtOnce() async {
        #expect(await RequestGroup().settled(timeout: 0))
    }

    @Test func settlingGivesUpAtItsBoundAndWhenItsTaskIsCancelled() async {
        let harness = Harness { _ in .hold }
        let screen = RequestGroup()
        harness.api.send(Resource<User>(path: "stuck"), group: screen) { _ in }
        await harness.transport.arrivals.wait(for: 1)

        #expect(await screen.settled(timeout: 0.05) == false)
        let cancelled = Task { await screen.settled(timeout: 600) }
        cancelled.cancel()
        #expect(await cancelled.value == false)
        #expect(screen.count == 1)

        screen.cancelAll()
        #expect(await screen.settled(timeout: 10))
    }
}

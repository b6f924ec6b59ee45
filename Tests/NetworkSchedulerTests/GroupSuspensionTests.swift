import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler

/// A suspended group: its requests that have not started wait, those sent to it meanwhile too,
/// and all start again in their places once it resumes; requests on the wire go on.
@Suite struct GroupSuspensionTests {
    @Test func aSuspendedGroupsRequestsWaitThenResumeInTheirOrder() async {
        // Given a busy slot, a screen's request, another request, then the screen suspended
        // and a second request sent to it while suspended
        let harness = Harness(budget: 1) { _ in .hold }
        let screen = RequestGroup()
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "screen-0"), group: screen) { _ in }
        harness.api.send(Resource<User>(path: "other")) { _ in }
        screen.suspend()
        harness.api.send(Resource<User>(path: "screen-1"), group: screen) { _ in }
        #expect(screen.isSuspended)

        // When the slot frees twice, only the other request starts
        harness.transport.release(with: .json(userJSON))
        #expect(await harness.transport.arrivals.wait(for: 2).last?.path == "/v1/other")
        harness.transport.release(with: .json(userJSON))
        await harness.events.ended.wait(for: 2)
        #expect(harness.transport.arrivals.count == 2)

        // Then, resumed, the screen's requests start in the order they were sent
        screen.resume()
        #expect(await harness.transport.arrivals.wait(for: 3).last?.path == "/v1/screen-0")
        harness.transport.release(with: .json(userJSON))
        #expect(await harness.transport.arrivals.wait(for: 4).last?.path == "/v1/screen-1")
        harness.transport.release(with: .json(userJSON))
        await harness.events.ended.wait(for: 4)
        #expect(harness.isIdle && screen.count == 0)
    }

    @Test func aRequestOnTheWireGoesOnWhenItsGroupIsSuspended() async throws {
        let harness = Harness { _ in .hold }
        let screen = RequestGroup()
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "running"), group: screen, completion: outcomes.completion("running"))
        await harness.transport.arrivals.wait(for: 1)

        screen.suspend()
        harness.transport.release(with: .json(userJSON))

        #expect(await outcomes.wait(for: 1)["running"]?.success?.id == 1)
        #expect(harness.transport.cancellations.count == 0)
    }

    @Test func aSuspendedGroupStillCancelsItsRequests() async {
        let harness = Harness(budget: 1) { _ in .hold }
        let screen = RequestGroup()
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "held"), group: screen, completion: outcomes.completion("held"))
        screen.suspend()

        screen.cancelAll()

        #expect(await outcomes.wait(for: 1)["held"]?.failure == .cancelled)
        harness.transport.release(with: .json(userJSON))
        await harness.events.ended.wait(for: 2)
        #expect(harness.isIdle && harness.transport.arrivals.count == 1)
    }
}

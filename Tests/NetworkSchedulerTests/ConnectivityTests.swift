import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct ConnectivityTests {
    @Test func requestsWaitWhileOfflineAndRunWhenTheNetworkReturns() async throws {
        let connectivity = StubConnectivity(connected: false)
        let harness = Harness(connectivity: connectivity)
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("a"))

        let line = harness.scheduler.state.withLock { $0.machine.lineCounts }
        #expect(line.running == 0 && line.waiting == 1)
        #expect(harness.transport.arrivals.count == 0)

        connectivity.set(connected: true)

        #expect(try await outcomes.wait(for: 1)["a"]?.get().id == 1)
    }

    @Test func aCallThatLosesTheNetworkWaitsForItInsteadOfFailing() async throws {
        let connectivity = StubConnectivity(connected: true)
        let attempts = Counter()
        let harness = Harness(connectivity: connectivity) { _ in
            guard attempts.next() == 1 else { return .json(userJSON) }
            connectivity.set(connected: false)
            return .fail(URLError(.notConnectedToInternet))
        }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "users/1"), completion: outcomes.completion("a"))
        #expect(await harness.events.retried.wait(for: 1).count == 1)
        #expect(outcomes.log.count == 0)

        connectivity.set(connected: true)

        #expect(try await outcomes.wait(for: 1)["a"]?.get().id == 1)
        #expect(harness.transport.arrivals.count == 2)
    }

    @Test func withoutAMonitorALostNetworkFailsTheRequest() async {
        let harness = Harness { _ in .fail(URLError(.notConnectedToInternet)) }
        let error = await #expect(throws: ServiceError.self) { try await harness.api.value(for: Resource<User>(path: "a")) }
        if case .noConnection? = error {} else { Issue.record("expected noConnection, got \(String(describing: error))") }
    }
}

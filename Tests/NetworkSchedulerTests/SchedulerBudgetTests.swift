import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler

@Suite struct SchedulerBudgetTests {
    @Test func noMoreCallsRunAtOnceToOneHostThanTheBudget() async {
        let harness = Harness(budget: 3) { _ in .hold }
        let outcomes = Outcomes<User>()
        for index in 0..<20 {
            harness.api.send(Resource<User>(path: "users/\(index)"), completion: outcomes.completion("\(index)"))
        }
        await harness.transport.arrivals.wait(for: 3)
        #expect(harness.transport.heldCount == 3)

        for answered in 1...20 {
            await harness.transport.arrivals.wait(for: min(20, answered + 2))
            harness.transport.release(with: .json(userJSON))
        }

        #expect(await outcomes.wait(for: 20).count == 20)
        #expect(harness.transport.maxInFlight == 3)
    }

    @Test func eachHostHasItsOwnBudget() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "https://one.test/a")) { _ in }
        harness.api.send(Resource<User>(path: "https://two.test/a")) { _ in }
        harness.api.send(Resource<User>(path: "https://one.test/b")) { _ in }

        let arrivals = await harness.transport.arrivals.wait(for: 2)
        #expect(Set(arrivals.compactMap(\.request.url?.host)) == ["one.test", "two.test"])
        #expect(harness.transport.heldCount == 2)
    }

    @Test func theBudgetNeverExceedsWhatTheTransportCanRun() {
        let transport = StubTransport(maximumConnectionsPerHost: 4)
        let tooMany = RequestScheduler(configuration: .init(transport: transport, maximumConcurrentRequestsPerHost: 50))
        let fewer = RequestScheduler(configuration: .init(transport: transport, maximumConcurrentRequestsPerHost: 2))
        let unset = RequestScheduler(configuration: .init(transport: transport))

        #expect(tooMany.maximumConcurrentRequestsPerHost == 4)
        #expect(fewer.maximumConcurrentRequestsPerHost == 2)
        #expect(unset.maximumConcurrentRequestsPerHost == 4)
    }

    @Test func theDefaultBudgetIsTheSessionsConnectionLimit() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 5
        let session = URLSession(configuration: configuration)
        let scheduler = RequestScheduler(configuration: .init(transport: URLSessionTransport(session: session)))
        #expect(scheduler.maximumConcurrentRequestsPerHost == 5)
        session.invalidateAndCancel()
    }
}

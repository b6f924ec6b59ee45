import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// The scheduler never relies on the transport to call back: an attempt that outlives its
/// timeout ends as `.timedOut`, its task is cancelled and its budget slot freed.
@Suite struct AttemptDeadlineTests {
    @Test func aTransportThatNeverCallsBackEndsAtTheDeadlineAndFreesItsSlot() async {
        // Given a host with one slot, held by a request whose transport never answers. The
        // deadline counts from the attempt's start, so it is long enough for a queue thread to
        // reach the transport on a machine busy with the other suites.
        let harness = Harness(budget: 1) { request in request.url?.path == "/v1/stuck" ? .never : .json(userJSON) }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "stuck", timeout: 1), completion: outcomes.completion("stuck"))
        #expect(await harness.transport.arrivals.wait(for: 1).map(\.path) == ["/v1/stuck"])
        harness.api.send(Resource<User>(path: "next"), completion: outcomes.completion("next"))

        // Then it ends as timed out, its task is cancelled, and the next request gets the slot
        let results = await outcomes.wait(for: 2)
        #expect(results["stuck"]?.failure == .timedOut)
        #expect(results["next"]?.success?.id == 1)
        #expect(harness.transport.cancellations.elements.map { $0.url?.path } == ["/v1/stuck"])
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/stuck", "/v1/next"])
    }

    @Test func everyCallerOfASharedCallGetsTheTimeout() async {
        let harness = Harness { _ in .never }
        let outcomes = Outcomes<User>()
        let stuck = Resource<User>(path: "stuck", timeout: 1)
        harness.api.send(stuck, completion: outcomes.completion("a"))
        harness.api.send(stuck, completion: outcomes.completion("b"))
        #expect(await harness.transport.arrivals.wait(for: 1).count == 1)

        let results = await outcomes.wait(for: 2)
        #expect(results.values.map(\.failure) == [.timedOut, .timedOut])
        #expect(harness.transport.arrivals.count == 1)
        await harness.events.ended.wait(for: 2)
        #expect(harness.isIdle)
    }

    @Test func anAttemptEndedInTimeIsNoLongerWatched() async {
        let deadlines = AttemptDeadlines()
        let transport = StubTransport()
        let outcomes = EventLog<Result<TransportResponse, ServiceError>>()
        let operation = DataTaskOperation(request: PreparedRequest(URLRequest(url: URL(string: "https://api.test/x")!)),
                                          transport: transport, deadlines: deadlines, onStart: nil) { result, _ in
            outcomes.append(result)
        }
        OperationQueue().addOperation(operation)
        #expect(await outcomes.wait(for: 1).first?.failure == nil)
        #expect(deadlines.count == 0)
    }

    @Test func theDeadlineCountsTheWholeAttemptNotIdleTime() async {
        // A request on the wire for longer than its timeout ends then, even if its transport
        // would have answered later: what a trickling body looks like from here.
        let deadlines = AttemptDeadlines()
        let transport = StubTransport { _ in .hold }
        let outcomes = EventLog<Result<TransportResponse, ServiceError>>()
        var request = URLRequest(url: URL(string: "https://api.test/slow")!)
        request.timeoutInterval = 0.2
        let operation = DataTaskOperation(request: PreparedRequest(request), transport: transport, deadlines: deadlines,
                                          onStart: nil) { result, _ in outcomes.append(result) }
        OperationQueue().addOperation(operation)

        #expect(await outcomes.wait(for: 1).map(\.failure) == [.timedOut])
        #expect(await transport.cancellations.wait(for: 1).count == 1)
        #expect(transport.release(with: .json(userJSON)) == false)
        #expect(outcomes.count == 1)
        #expect(deadlines.count == 0)
    }
}

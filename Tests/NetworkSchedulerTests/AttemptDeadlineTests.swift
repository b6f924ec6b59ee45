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

    @Test func aTransportThatCallsBackTwiceEndsEachCallerOnce() async {
        // Given a transport that reports every request twice: first as `first` says, then the
        // other way, from another thread, while the scheduler may be delivering the first
        let transport = TwiceReportingTransport()
        let harness = Harness { _ in .json(userJSON) } configure: { configuration in
            configuration.transport = transport
        }
        let outcomes = Outcomes<User>()
        let shared = Resource<User>(path: "users/1")
        harness.api.send(shared, completion: outcomes.completion("a"))
        harness.api.send(shared, completion: outcomes.completion("b"))
        harness.api.send(Resource<User>(path: "lost"), completion: outcomes.completion("lost"))

        // Then each caller gets the first report, once, and nothing is left
        let results = await outcomes.wait(for: 3)
        #expect(results["a"]?.success?.id == 1)
        #expect(results["b"]?.success?.id == 1)
        #expect(results["lost"]?.failure == .connectionLost(URLError(.networkConnectionLost)))
        // A caller sent once every second report has been fed to the scheduler: its outcome
        // comes after any second outcome of the others would have, on the same callback queue.
        await transport.secondReports.wait(for: 2)
        harness.api.send(Resource<User>(path: "users/2"), completion: outcomes.completion("last"))
        await outcomes.log.wait(for: 4)
        #expect(outcomes.log.elements.map(\.label).sorted() == ["a", "b", "last", "lost"])
        await harness.scheduler.queuesDrained()
        #expect(harness.isIdle)
    }
}

/// Reports each request twice: `/v1/lost` as a lost connection then a 200, anything else as a
/// 200 then a lost connection. The second report comes from another thread.
private struct TwiceReportingTransport: HTTPTransport {
    var maximumConnectionsPerHost: Int { 6 }
    /// The paths whose second report has been made (and handled, since it runs inline).
    let secondReports = EventLog<String>()

    private struct Task: TransportTask {
        func cancel() {}
    }

    func startTask(
        for request: TransportRequest, policy: TransportPolicy, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        let url = request.urlRequest.url!
        let answer: Result<TransportResponse, any Error> = .success(TransportResponse(
            data: Data(userJSON.utf8), head: ResponseHead(url: url, statusCode: 200, headerFields: ["Content-Type": "application/json"])))
        let lost: Result<TransportResponse, any Error> = .failure(URLError(.networkConnectionLost))
        let (first, second) = url.path == "/v1/lost" ? (lost, answer) : (answer, lost)
        DispatchQueue.global().async {
            completion(first)
            DispatchQueue.global().async { [secondReports] in
                completion(second)
                secondReports.append(url.path)
            }
        }
        return Task()
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct MetricsCollectorTests {
    @Test func countsRequestsNetworkCallsAndDedupHits() async {
        let harness = Harness { _ in .hold }
        for _ in 0..<3 { harness.api.send(Resource<User>(path: "users/1")) { _ in } }
        harness.api.send(Resource<User>(path: "users/2")) { _ in }
        let cancelled = harness.api.send(Resource<User>(path: "users/3")) { _ in }
        await harness.transport.arrivals.wait(for: 3)
        cancelled.cancel()
        harness.transport.release(path: "/v1/users/1", with: .json(userJSON))
        harness.transport.release(path: "/v1/users/2", with: .json("{}", status: 500))
        await harness.events.ended.wait(for: 5)

        let snapshot = harness.metrics.snapshot
        #expect(snapshot.requests == 5)
        #expect(snapshot.networkCalls == 3)
        #expect(snapshot.deduplicated == 2)
        #expect(snapshot.succeeded == 3)
        #expect(snapshot.failed == 1)
        #expect(snapshot.cancelled == 1)

        harness.metrics.reset()
        #expect(harness.metrics.snapshot == MetricsCollector.Snapshot())
    }

    @Test func aSnapshotPrintsOneLinePerFigure() {
        var snapshot = MetricsCollector.Snapshot()
        snapshot.networkCalls = 9
        snapshot.deduplicated = 3
        snapshot.retries = 1
        snapshot.succeeded = 10
        snapshot.failed = 1
        snapshot.cancelled = 1
        snapshot.servedFromCache = 2
        snapshot.revalidated = 1
        snapshot.queueWait[.high] = MetricsCollector.QueueWait(count: 4, p50: 0.0021, p99: 0.01, max: 1.5)
        snapshot.queueWait[.low] = MetricsCollector.QueueWait(count: 2, p50: 0.25, p99: 0.5, max: 0.5)

        #expect(snapshot.description == """
            requests: 14 (10 succeeded, 2 from the cache, 1 failed, 1 cancelled)
            network calls: 9, deduplicated: 3, retries: 1, promotions: 0, host pauses: 0
            cache: 2 served, 1 revalidated
            queue wait high: 4 callers, p50 0.002 s, p99 0.010 s, max 1.500 s
            queue wait low: 2 callers, p50 0.250 s, p99 0.500 s, max 0.500 s
            """)
    }

    @Test func aCollectorPrintsItsSnapshotsTable() {
        let metrics = MetricsCollector()
        metrics.record(.cancelled(RequestEvent.Caller(id: RequestHandle.ID(value: 1), priority: .normal, method: "GET",
                                                      url: URL(string: "https://api.test/a"), callNumber: nil, dependencies: [])))

        #expect("\(metrics)" == metrics.snapshot.description)
        #expect("\(metrics)".hasPrefix("requests: 1 (0 succeeded, 0 from the cache, 0 failed, 1 cancelled)"))
    }

    @Test func recordsQueueWaitByPriority() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "blocker"), priority: .critical) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        for index in 0..<4 {
            harness.api.send(Resource<User>(path: "low/\(index)"), priority: .low) { _ in }
        }
        for started in 1...5 {
            await harness.transport.arrivals.wait(for: started)
            harness.transport.release(with: .json(userJSON))
        }
        await harness.events.ended.wait(for: 5)

        let waits = harness.metrics.snapshot.queueWait
        #expect(waits[.critical]?.count == 1)
        #expect(waits[.low]?.count == 4)
        if let low = waits[.low] {
            #expect(low.p50 > 0 && low.p50 <= low.p99 && low.p99 <= low.max)
        }
        #expect(waits[.high] == nil)
    }

    @Test func monitorsSeeEachCallersStoryInOrder() async {
        let harness = Harness { _ in .hold }
        let story = StoryRecorder()
        let scheduler = RequestScheduler(configuration: .init(transport: harness.transport, eventMonitors: [story]))
        let api = APIClient(baseURL: URL(string: "https://api.test")!, scheduler: scheduler)
        let first = api.send(Resource<User>(path: "users/1"), priority: .high) { _ in }
        let second = api.send(Resource<User>(path: "users/1"), priority: .low) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON))
        let lines = await story.lines.wait(for: 5)

        // Enqueued comes first and the endings last; a joiner may join before or after the start.
        #expect(lines.first == "enqueued \(first.id) high")
        #expect(Set(lines.dropFirst().prefix(2)) == ["joined \(second.id) low", "started /users/1"])
        #expect(Set(lines.suffix(2)) == ["succeeded \(first.id) shared", "succeeded \(second.id) shared"])
    }

    @Test func histogramQuantilesAreWithinABucket() {
        var histogram = LatencyHistogram()
        for millisecond in 1...1_000 { histogram.record(Double(millisecond) / 1_000) }
        #expect(histogram.count == 1_000)
        #expect(abs(histogram.quantile(0.5) - 0.5) / 0.5 < 0.2)
        #expect(abs(histogram.quantile(0.99) - 0.99) / 0.99 < 0.2)
        #expect(histogram.quantile(1) == 1)
        #expect(LatencyHistogram().quantile(0.5) == 0)
    }
}

private final class StoryRecorder: RequestEvent.Monitor {
    let lines = EventLog<String>()

    func record(_ event: RequestEvent) {
        switch event {
        case let .enqueued(caller): lines.append("enqueued \(caller.id) \(caller.priority)")
        case let .joined(caller): lines.append("joined \(caller.id) \(caller.priority)")
        case let .started(call, _): lines.append("started \(call.url?.path ?? "")")
        case let .retried(_, attempt, _, _): lines.append("retried \(attempt)")
        case let .succeeded(caller, metrics): lines.append("succeeded \(caller.id)\(metrics.wasShared ? " shared" : "")")
        case let .failed(caller, error, _): lines.append("failed \(caller.id) \(error)")
        case let .cancelled(caller): lines.append("cancelled \(caller.id)")
        case let .promoted(call, _, to): lines.append("promoted \(call.url?.path ?? "") to \(to)")
        case let .hostHealthChanged(host, health): lines.append("\(host) \(health)")
        case let .outcomeKept(call, _): lines.append("kept \(call.url?.path ?? "")")
        case let .progressed(call, progress): lines.append("progressed \(call.url?.path ?? "") \(progress.bytesReceived)")
        case let .servedFromCache(caller, metrics): lines.append("served \(caller.id) \(metrics.cacheUse)")
        case let .revalidated(call, statusCode): lines.append("revalidated \(call.url?.path ?? "") \(statusCode)")
        }
    }
}

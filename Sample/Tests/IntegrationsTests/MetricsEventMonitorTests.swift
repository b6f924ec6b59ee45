import CoreMetrics
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MetricsTestKit
import NetworkScheduler
import NetworkSchedulerMetrics
import NetworkSchedulerTesting
import Testing

@Suite struct MetricsEventMonitorTests {
    private static func measured(_ transport: StubTransport) -> (APIClient, TestMetrics, @Sendable () async -> SchedulerAudit.Report) {
        let metrics = TestMetrics()
        let audit = SchedulerAudit()
        let scheduler = RequestScheduler { configuration in
            configuration.transport = transport
            configuration.retryPolicy = .never
            configuration.eventMonitors = [MetricsEventMonitor(factory: metrics), audit]
        }
        let api = APIClient(baseURL: URL(string: "https://metrics.test/v1")!, scheduler: scheduler)
        return (api, metrics, { await audit.report(for: scheduler) })
    }

    @Test func identicalCallersCountAsRequestsOfOneNetworkCallWithTheirQueueWait() async throws {
        let transport = StubTransport { _ in .hold }
        let (api, metrics, report) = Self.measured(transport)
        let done = EventLog<Result<Data, ServiceError>>()
        for _ in 0..<3 {
            api.send(Resource<Data>(path: "me"), priority: .high) { done.append($0) }
        }
        #expect(await transport.arrivals.wait(for: 1, timeout: 10).count == 1)

        #expect(transport.release(path: "/v1/me", with: .json("{}")))

        #expect(await done.wait(for: 3, timeout: 10).count == 3)
        let audit = await report()
        #expect(audit.isClean, "\(audit)")
        #expect(metrics.counterTotal(label: "network_scheduler_requests_total", dimensions: [("outcome", "succeeded")]) == 3)
        #expect(metrics.counterTotal(label: "network_scheduler_network_calls_total") == 1)
        #expect(metrics.counterTotal(label: "network_scheduler_deduplicated_total") == 2)
        let wait = try metrics.expectTimer("network_scheduler_queue_wait_seconds", [("priority", "high")])
        #expect(wait.values.count == 3)
    }

    @Test func aFailureCountsByItsCaseAndAPausedHostByItsOrigin() async throws {
        let transport = StubTransport { _ in .unavailable(retryAfter: 30) }
        let (api, metrics, report) = Self.measured(transport)

        let error = await #expect(throws: ServiceError.self) { try await api.value(for: Resource<Data>(path: "items")) }

        #expect(error?.statusCode == 503)
        let audit = await report()
        #expect(audit.isClean, "\(audit)")
        #expect(metrics.counterTotal(label: "network_scheduler_requests_total",
                                     dimensions: [("outcome", "failed"), ("error", "server")]) == 1)
        #expect(metrics.counterTotal(label: "network_scheduler_host_pauses_total",
                                     dimensions: [("host", "https://metrics.test:443")]) == 1)
        let health = try metrics.expectGauge("network_scheduler_host_available", [("host", "https://metrics.test:443")])
        #expect(health.lastValue == 0)
    }

    @Test func noDimensionHoldsAPathQueryOrIdentifier() async throws {
        let transport = StubTransport { _ in .serverError(500) }
        let (api, metrics, report) = Self.measured(transport)

        for user in 0..<5 {
            _ = try? await api.value(for: Resource<Data>(path: "users/\(user)", query: [URLQueryItem(name: "token", value: "secret")]))
        }

        let audit = await report()
        #expect(audit.isClean, "\(audit)")
        let dimensions = (metrics.counters.map(\.dimensions) + metrics.timers.map(\.dimensions)).flatMap { $0 }
        #expect(!dimensions.isEmpty)
        #expect(dimensions.allSatisfy { !$0.1.contains("users") && !$0.1.contains("secret") && !$0.1.contains("#") })
    }
}

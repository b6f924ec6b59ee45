import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import InMemoryLogging
import Logging
import NetworkScheduler
import NetworkSchedulerLogging
import NetworkSchedulerTesting
import Testing

@Suite struct LoggingEventMonitorTests {
    /// A scheduler over `transport` that logs to an in-memory handler at `level`.
    private static func logged(
        _ transport: StubTransport, level: Logger.Level = .trace
    ) -> (APIClient, InMemoryLogHandler, @Sendable () async -> SchedulerAudit.Report) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = level
        let audit = SchedulerAudit()
        let scheduler = RequestScheduler { configuration in
            configuration.transport = transport
            configuration.retryPolicy = .never
            configuration.eventMonitors = [LoggingEventMonitor(logger: logger), audit]
        }
        let api = APIClient(baseURL: URL(string: "https://logs.test/v1")!, scheduler: scheduler,
                            bearerToken: { "secret-token" })
        // The logger comes first, so an event the audit saw was logged.
        return (api, handler, { await audit.report(for: scheduler) })
    }

    private static func rendered(_ entries: [InMemoryLogHandler.Entry]) -> String {
        entries.map { "\($0.level) \($0.message) \($0.metadata)" }.joined(separator: "\n")
    }

    @Test func aRequestIsLoggedWithItsCallerMethodAndURLAndNoSecret() async throws {
        let transport = StubTransport { _ in .json(#"{"id": 1}"#) }
        let (api, handler, report) = Self.logged(transport)
        let resource = Resource<Data>(path: "items", query: [URLQueryItem(name: "api_key", value: "secret-key")],
                                      headers: ["Cookie": "session=secret-cookie"])

        _ = try await api.value(for: resource)
        let audit = await report()
        #expect(audit.isClean, "\(audit)")

        let entries = handler.entries
        #expect(entries.map(\.message.description).contains { $0.hasPrefix("enqueued #") })
        #expect(entries.map(\.message.description).contains { $0.hasPrefix("started GET https://logs.test/v1/items") })
        let success = try #require(entries.first { $0.message.description.hasPrefix("succeeded") })
        #expect(success.level == .debug)
        #expect(success.metadata["http.request.method"] == "GET")
        #expect(success.metadata["url.full"] == "https://logs.test/v1/items")
        #expect(success.metadata["http.response.status_code"] == "200")
        #expect(!Self.rendered(entries).contains("secret"))
    }

    @Test func aFailureIsANoticeNamingItsErrorAndAPausedHostAWarning() async throws {
        let transport = StubTransport { _ in .unavailable(retryAfter: 30) }
        let (api, handler, report) = Self.logged(transport, level: .info)

        let error = await #expect(throws: ServiceError.self) { try await api.value(for: Resource<Data>(path: "items")) }
        #expect(error?.statusCode == 503)

        let audit = await report()
        #expect(audit.isClean, "\(audit)")
        let entries = handler.entries
        #expect(entries.allSatisfy { $0.level >= .info })
        let failure = try #require(entries.first { $0.message.description.hasPrefix("failed") })
        #expect(failure.level == .notice)
        #expect(failure.metadata["error.type"] == "server")
        #expect(failure.metadata["http.response.status_code"] == "503")
        let pause = try #require(entries.first { $0.metadata["host.health"] != nil })
        #expect(pause.level == .warning)
        #expect(pause.metadata["server.address"] == "https://logs.test:443")
    }
}

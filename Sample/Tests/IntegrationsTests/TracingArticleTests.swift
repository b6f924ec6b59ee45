// The code of the DocC article "Tracing", as written there.
// `theArticleShowsThisFilesCodeAsWritten` fails when the two differ.
import Foundation
import InMemoryTracing
import NetworkScheduler
import NetworkSchedulerTesting
import NetworkSchedulerTracing
import Testing
import Tracing

@Suite struct TracingArticleTests {
    @Test func theArticlesTracingListensAndPropagates() {
        let tracing = RequestTracing()
        let scheduler = RequestScheduler { $0.eventMonitors.append(tracing) }
        var api = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, scheduler: scheduler)
        api.contextPropagation = tracing

        #expect(api.contextPropagation != nil)
        #expect(scheduler.configuration.eventMonitors.contains { $0 as? RequestTracing === tracing })
    }

    /// The process's tracer, as an app bootstraps it once: `withSpan` starts its spans there.
    private static let bootstrapped: InMemoryTracer = {
        let tracer = InMemoryTracer()
        InstrumentationSystem.bootstrap(tracer)
        return tracer
    }()

    @Test func theArticlesRequestIsTheChildOfItsSpan() async throws {
        let tracer = Self.bootstrapped
        let tracing = RequestTracing()
        let scheduler = RequestScheduler {
            $0.transport = StubTransport { _ in .json(#"["a post"]"#) }
            $0.eventMonitors.append(tracing)
        }
        var api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler)
        api.contextPropagation = tracing

        try await withSpan("refresh the feed") { _ in
            _ = try await api.value(for: Resource<[String]>(path: "feed"), priority: .high)
        }

        // The caller's end is told before its `value(for:)` returns: its spans have ended.
        let spans = tracer.finishedSpans
        let root = try #require(spans.first { $0.operationName == "refresh the feed" })
        let caller = try #require(spans.first { $0.attributes.get("networkscheduler.caller") != nil })
        let attempt = try #require(spans.first { $0.attributes.get("networkscheduler.attempt") != nil })
        #expect(caller.parentSpanID == root.spanID)
        #expect(attempt.parentSpanID == caller.spanID)
        #expect(caller.attributes.get("networkscheduler.priority") == .string("high"))
    }

    @Test func theArticleShowsThisFilesCodeAsWritten() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let article = try String(contentsOf: root.appendingPathComponent(
            "Sources/NetworkScheduler/NetworkScheduler.docc/Tracing.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        // The swift-otel block is built and run by `scripts/check-install.sh` (swift-otel does not
        // build under the thread sanitizer, which every Sample test runs under).
        let otel = try String(contentsOf: root.appendingPathComponent("scripts/TracingWithOTelTests.swift"), encoding: .utf8)
        let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count == 3)
        for block in blocks {
            let indented = block.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.isEmpty ? "" : "        " + $0 }.joined(separator: "\n")
            let compiler = block.contains("OTel.") ? otel : source
            #expect(compiler.contains(indented), "the article shows code that is compiled nowhere:\n\(block)")
        }
    }
}

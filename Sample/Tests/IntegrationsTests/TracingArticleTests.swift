// The code of the DocC article "Tracing", as written there.
// `theArticleShowsThisFilesCodeAsWritten` fails when the two differ.
import Foundation
import InMemoryTracing
import NetworkScheduler
import NetworkSchedulerTesting
import NetworkSchedulerTracing
import OTel
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

    /// RequestTracing over OpenTelemetry's own tracer, set up as an app does: the server gets
    /// the caller's `traceparent`, in the trace of the span its task was in, from OTel's W3C
    /// propagator.
    @Test func theArticlesOTelTracerSendsTheCallersTraceparentInTheAppsTrace() async throws {
        var otel = OTel.Configuration.default
        otel.serviceName = "friends"
        otel.logs.enabled = false
        otel.metrics.enabled = false
        otel.traces.otlpExporter.endpoint = "http://collector.internal:4318"
        otel.traces.otlpExporter.protocol = .httpProtobuf
        let (tracer, tracingService) = try OTel.makeTracingBackend(configuration: otel)
        let tracing = RequestTracing(tracer: tracer)

        // Not run here: nothing is exported, and the spans stay in its batch.
        _ = tracingService
        let stub = StubTransport { _ in .json(#"{"id": 1}"#) }
        let scheduler = RequestScheduler {
            $0.transport = stub
            $0.eventMonitors.append(tracing)
        }
        var api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler)
        api.contextPropagation = tracing

        let screen = try await tracer.withSpan("refresh the feed", context: .topLevel) { span in
            _ = try await api.value(for: Resource<Profile>(path: "me"))
            var fields: [String: String] = [:]
            tracer.inject(span.context, into: &fields, using: DictionaryInjector())
            return fields["traceparent"]
        }

        let sent = try #require(await stub.arrivals.wait(for: 1).first?.request.value(forHTTPHeaderField: "traceparent"))
        let screenParts = try #require(screen).split(separator: "-")
        let sentParts = sent.split(separator: "-")
        // version, trace ID, span ID, flags: the trace of the screen's span, a span of its own, sampled.
        #expect(sentParts.count == 4 && sentParts[0] == "00" && sentParts[1].count == 32 && sentParts[2].count == 16)
        #expect(sentParts[1] == screenParts[1])
        #expect(sentParts[2] != screenParts[2])
        #expect(sentParts[3] == "01")
    }

    @Test func theArticleShowsThisFilesCodeAsWritten() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let article = try String(contentsOf: root.appendingPathComponent(
            "Sources/NetworkScheduler/NetworkScheduler.docc/Tracing.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count == 3)
        for block in blocks {
            let indented = block.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.isEmpty ? "" : "        " + $0 }.joined(separator: "\n")
            #expect(source.contains(indented), "the article shows code this file does not compile:\n\(block)")
        }
    }
}

private struct Profile: Decodable, Sendable {
    let id: Int
}

/// Writes a propagator's fields into a dictionary.
private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

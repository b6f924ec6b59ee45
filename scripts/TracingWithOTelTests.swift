// The swift-otel setup of the DocC article "Tracing", as written there, built and run by
// `scripts/check-install.sh` in a package of its own that depends on swift-otel (which does not
// build under the thread sanitizer, so the Sample, whose tests run under it, cannot).
// The Sample's `TracingArticleTests` fail when the article and this file differ.
import Foundation
import NetworkScheduler
import NetworkSchedulerTesting
import NetworkSchedulerTracing
import OTel
import Testing
import Tracing

@Suite struct TracingWithOTelTests {
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

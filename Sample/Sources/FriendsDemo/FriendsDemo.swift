import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerTesting
import NetworkSchedulerTimeline
import SocialApp
import SocialServer

/// Runs the friends scenario against SocialServer, narrating what the scheduler does and
/// checking it against what the server saw.
@main
struct FriendsDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "friends-demo",
        abstract: "Shows NetworkScheduler at work against a small social-network API on loopback.",
        discussion: """
            Each step narrates what the scheduler does and ends with checks (✔ or ✘) against \
            what the server counted:

            \(Scenario.steps.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n"))

            Steps 6 to 12, 14 and 16 inject faults into the embedded server, and step 15 cuts its feed; with --base-url they are skipped, \
            as is the second half of step 17, which changes how the server marks its answers' freshness. \
            To run against a server in another terminal:
              swift run --package-path Sample social-server --port 8080
              swift run --package-path Sample friends-demo --base-url http://127.0.0.1:8080

            Exit codes: 0 when every step behaved as described, 1 when a step did not (the ✘ \
            lines say which), 64 for a usage error.
            """
    )

    @Option(help: "How many identical calls the burst sends at once.")
    var requests = 1_000

    @Option(help: "Run against this server (a SocialServer) instead of starting one in-process.")
    var baseURL: String?

    @Flag(help: "Print only failures and the final table.")
    var quiet = false

    @Option(help: "Where to write the picture of the schedule (schedule.svg, and schedule.json for Perfetto); a temporary folder by default.")
    var scheduleDirectory: String?

    mutating func run() async throws {
        guard requests > 0 else { throw ValidationError("--requests must be at least 1") }
        let narrator = Narrator(quiet: quiet)
        var server: SocialServer?
        let url: URL
        if let baseURL {
            guard let given = URL(string: baseURL), given.host != nil else {
                throw ValidationError("--base-url must be an absolute URL such as http://127.0.0.1:8080")
            }
            url = given
            narrator.say("Using the server at \(url.absoluteString)")
        } else {
            let started = try await SocialServer.start()
            server = started
            url = started.baseURL
            narrator.say("SocialServer is listening on \(url.absoluteString)")
        }

        let metrics = MetricsCollector()
        let recorder = ScheduleRecorder()
        let transport = URLSessionTransport()
        let timeline = SlotTimeline(transport)
        let connectivity = StubConnectivity()
        // A budget of two calls per host, so that the queue (and its priorities) can be seen.
        let api = SocialAPI(baseURL: url, configuration: .init(
            transport: timeline,
            hostBudget: 2,
            eventMonitors: [metrics, timeline, recorder],
            connectivityMonitor: connectivity
        ))
        let scenario = Scenario(api: api, server: server, narrator: narrator, metrics: metrics, timeline: timeline,
                                connectivity: connectivity, burst: requests, stats: ServerStats(baseURL: url))
        do {
            try await scenario.run()
        } catch {
            narrator.check(false, "the scenario ran to the end (it stopped: \(error.localizedDescription))")
        }

        narrator.show("\nWhat the scheduler did for the scenario (MetricsCollector; the demo's own reads of /_stats not counted):")
        narrator.show(MetricsTable.render(metrics.snapshot))
        transport.invalidate()
        await server?.stop()
        writeSchedule(recorder.timeline(), narrator: narrator)

        let failed = narrator.failed
        if failed.isEmpty {
            narrator.show("\nEvery step behaved as described.")
        } else {
            narrator.show("\n\(failed.count) step(s) did not behave as described.")
            throw ExitCode.failure
        }
    }

    /// Writes the run's timeline as an SVG picture and a Perfetto trace, and says where.
    private func writeSchedule(_ schedule: ScheduleTimeline, narrator: Narrator) {
        let directory = URL(fileURLWithPath: scheduleDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("friends-demo").path)
        let svg = directory.appendingPathComponent("schedule.svg")
        let trace = directory.appendingPathComponent("schedule.json")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try schedule.svg().write(to: svg, atomically: true, encoding: .utf8)
            try schedule.traceEvents().write(to: trace, options: .atomic)
            narrator.show("""

                The schedule of the main scheduler (\(schedule.callCount) calls, \(schedule.sharedCallerCount) callers that joined one):
                  a picture: \(svg.path)
                  a trace for ui.perfetto.dev or chrome://tracing: \(trace.path)
                """)
        } catch {
            narrator.check(false, "the schedule was written to \(directory.path) (\(error.localizedDescription))")
        }
    }
}

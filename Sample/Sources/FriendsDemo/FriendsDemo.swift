import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialApp
import SocialServer

/// Runs the friends scenario against SocialServer, narrating what the scheduler does and
/// checking it against what the server saw.
@main
struct FriendsDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "friends-demo",
        abstract: "Shows NetworkScheduler at work against a small social-network API on loopback."
    )

    @Option(help: "How many identical calls the burst sends at once.")
    var requests = 1_000

    @Option(help: "Run against this server (a SocialServer) instead of starting one in-process.")
    var baseURL: String?

    @Flag(help: "Print only failures and the final table.")
    var quiet = false

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
        let transport = URLSessionTransport()
        let timeline = SlotTimeline(transport)
        // A budget of two calls per host, so that the queue (and its priorities) can be seen.
        let api = SocialAPI(baseURL: url, configuration: .init(
            transport: timeline,
            hostBudget: 2,
            eventMonitors: [metrics, timeline]
        ))
        let scenario = Scenario(api: api, server: server, narrator: narrator, metrics: metrics, timeline: timeline,
                                burst: requests)
        do {
            try await scenario.run()
        } catch {
            narrator.check(false, "the scenario ran to the end (it stopped: \(error.localizedDescription))")
        }

        narrator.show("\nWhat the scheduler did (MetricsCollector):")
        narrator.show(MetricsTable.render(metrics.snapshot))
        transport.invalidate()
        await server?.stop()

        let failed = narrator.failed
        if failed.isEmpty {
            narrator.show("\nEvery step behaved as described.")
        } else {
            narrator.show("\n\(failed.count) step(s) did not behave as described.")
            throw ExitCode.failure
        }
    }
}

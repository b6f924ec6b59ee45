import ArgumentParser
import Foundation
import SocialServer

/// Serves SocialServer on its own, so that `friends-demo --base-url` (or curl) can reach it
/// from another terminal.
@main
struct SocialServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "social-server",
        abstract: "Serves the Sample's social-network API on 127.0.0.1 until interrupted (Ctrl-C).",
        discussion: """
            Log in with POST /login {"username": "ada", "password": "secret"}; every other route \\
            takes the token as a bearer token. GET /_stats returns what arrived, per route; \
            GET /_stats/connections how many TCP connections the requests came in on.
            """
    )

    @Option(help: "The port to listen on, on 127.0.0.1; 0 picks a free one.")
    var port = 8080

    mutating func run() async throws {
        let server = try await SocialServer.start(port: port)
        // Written at once, not buffered: a script or a second terminal waits for these lines.
        FileHandle.standardOutput.write(Data("""
            SocialServer is listening on \(server.baseURL.absoluteString)
            In another terminal: swift run --package-path Sample friends-demo --base-url \(server.baseURL.absoluteString)

            """.utf8))
        // Serves until the process is interrupted.
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3_600))
        }
    }
}

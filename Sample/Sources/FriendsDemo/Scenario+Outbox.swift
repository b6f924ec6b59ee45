import Foundation
import SocialServer
#if canImport(Glibc)
import Glibc
#endif

// Step 16: a write that survives the app being killed. A client process (OutboxChild, built
// beside the demo) enqueues a post in its outbox and is killed with SIGKILL while the POST is
// on the wire; the next launch sends it again with the same key, and the server has one post.
extension Scenario {
    func aWriteSurvivesTheAppBeingKilled() async throws {
        narrator.step(16, Self.steps[15])
        guard let server = faultyServer() else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("friends-demo-outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = "demo outbox \(UUID().uuidString.prefix(6))"
        let posted = server.arrivals.count(.createPost)

        // The server holds the POST: the app is killed while it is on the wire.
        server.faults.hold(.createPost)
        let first = try OutboxProcess(["enqueue", folder.path, server.baseURL.absoluteString, text, "0", "1"])
        _ = await first.line(startingWith: "ENQUEUED")
        narrator.say("   the app enqueued \"\(text) 0\": on disk when enqueue returned")
        _ = await server.arrivals.wait(for: posted + 1, at: .createPost)
        first.kill()
        narrator.say("   its POST reached the server, and the app was killed (SIGKILL) before the answer")
        server.faults.release(.createPost)

        let relaunched = try OutboxProcess(["drain", folder.path, server.baseURL.absoluteString])
        let drained = await relaunched.line(startingWith: "DRAINED")
        let posts = await server.posts(withTextPrefix: text)
        let sent = server.arrivals.count(.createPost) - posted
        narrator.say("   relaunched, it sent the write again with the same key: the server saw \(sent) POSTs, "
            + "and holds \(posts.count) post")
        narrator.check(drained != nil, "the relaunched app found the write in its outbox and sent it")
        narrator.check(sent == 2 && posts.count == 1, "the write reached the server once, by its key")
    }
}

/// The outbox's client process, its output read a line at a time.
private final class OutboxProcess: Sendable {
    private let process = Process()
    private let lines: AsyncStream<String>

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("OutboxChild")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        let reading = output.fileHandleForReading
        Thread.detachNewThread {
            var pending = ""
            while case let data = reading.availableData, !data.isEmpty {
                pending += String(decoding: data, as: UTF8.self)
                var parts = pending.split(separator: "\n", omittingEmptySubsequences: false)
                pending = String(parts.removeLast())
                for line in parts { continuation.yield(String(line)) }
            }
            continuation.finish()
        }
    }

    /// The first line that starts with `prefix`, or nil if the process ended without one.
    func line(startingWith prefix: String) async -> String? {
        for await line in lines where line.hasPrefix(prefix) { return line }
        return nil
    }

    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Sample's `social-server` in a process of its own, so that the server's CPU is not the
/// client's: on two cores an in-process server hid the cost of the client under its own.
/// Built in release from the Sample package (at once when it is up to date), started on a free
/// port of 127.0.0.1, and stopped at the end of the scenario.
final class ServerProcess: @unchecked Sendable {
    // Safety: set once in init, then only read; the process object is thread-safe to terminate.
    let baseURL: URL
    private let process: Process

    static func start() throws -> ServerProcess {
        let sample = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sample")
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = ["swift", "build", "-c", "release", "--package-path", sample.path, "--product", "social-server"]
        build.standardOutput = FileHandle.nullDevice
        try build.run()
        build.waitUntilExit()
        guard build.terminationStatus == 0 else { throw BenchmarkFailure("could not build social-server in \(sample.path)") }

        let process = Process()
        process.executableURL = sample.appendingPathComponent(".build/release/social-server")
        process.arguments = ["--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Its first line names the URL it listens on.
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, let range = line.range(of: "http://"),
              let url = URL(string: String(line[range.lowerBound...])) else {
            process.terminate()
            throw BenchmarkFailure("social-server said: \(text)")
        }
        return ServerProcess(baseURL: url, process: process)
    }

    private init(baseURL: URL, process: Process) {
        self.baseURL = baseURL
        self.process = process
    }

    /// The TCP connections the server has seen so far (asked over the shared session's own
    /// kept-alive connection, which counts once).
    func connections() async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent("_stats/connections"))
        return try JSONDecoder().decode([String: Int].self, from: data)["connections"] ?? 0
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

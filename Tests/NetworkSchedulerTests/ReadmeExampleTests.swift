import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NetworkSchedulerTesting
import Testing

/// The README's quick example, read from the README at test time, compiled as a program of its
/// own in Swift 6 mode against this build of the library, and run. One line differs: its
/// scheduler sends through a stub of the API instead of the network.
@Suite struct ReadmeExampleTests {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The stub the example's scheduler sends through: the login, then the friends, only with
    /// the login's token.
    private static let stub = """
        import Foundation
        #if canImport(FoundationNetworking)
        import FoundationNetworking
        #endif
        import NetworkSchedulerTesting

        let readmeAPI = StubTransport { request in
            switch (request.httpMethod ?? "GET", request.url?.path ?? "") {
            case ("POST", "/v1/login"):
                return .json(#"{"token": "abc"}"#)
            case ("GET", "/v1/users/42/friends") where request.value(forHTTPHeaderField: "Authorization") == "Bearer abc":
                return .delayed(0.05, .json(#"[{"id": 2, "name": "Grace"}, {"id": 3, "name": "Alan"}]"#))
            default:
                return .status(401)
            }
        }
        """

    /// The folder of this build's products, where SwiftPM lists the objects it linked this
    /// test binary from: beside the test executable on Linux, where a missing list fails the
    /// test. Elsewhere (a macOS `xctest` bundle) the test runs only if the list is there, and
    /// says that it was skipped otherwise.
    static let build: URL? = Bundle.main.executableURL?.deletingLastPathComponent()
    #if os(Linux)
    static let canCompile = true
    #else
    static var canCompile: Bool {
        build.map { FileManager.default.fileExists(atPath: $0.appendingPathComponent(linkList).path) } ?? false
    }
    #endif
    private static let linkList = "NetworkSchedulerPackageTests.product/Objects.LinkFileList"

    @Test(.enabled(if: canCompile, "needs SwiftPM's object list beside the test binary (Linux)"))
    func theQuickExampleCompilesAndRunsAsWritten() async throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try #require(Self.firstSwiftBlock(after: "## Quick example", in: readme))
        let line = "let scheduler = RequestScheduler()"
        #expect(example.components(separatedBy: line).count == 2, "the example makes its scheduler with `\(line)`")
        let program = example.replacingOccurrences(of: line, with: "let scheduler = RequestScheduler { $0.transport = readmeAPI }")

        let output = try await Self.compileAndRun(main: program, stub: Self.stub)

        #expect(output.contains("Friends: Grace, Alan"), "\(output)")
        #expect(output.contains("One call served both: true"), "\(output)")
    }

    /// The first ```swift block after `heading`.
    static func firstSwiftBlock(after heading: String, in text: String) -> String? {
        guard let section = text.range(of: heading),
              let open = text.range(of: "```swift\n", range: section.upperBound..<text.endIndex),
              let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }

    /// Compiles `main` and `stub` with the modules and objects of this build (instrumented for
    /// the thread sanitizer if this test is), runs the program, and returns what it printed.
    static func compileAndRun(main: String, stub: String) async throws -> String {
        let build = try #require(Self.build)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try main.write(to: folder.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
        try stub.write(to: folder.appendingPathComponent("Stub.swift"), atomically: true, encoding: .utf8)
        // The objects this test binary was linked from (a build folder may hold stale ones).
        let linked = try String(contentsOf: build.appendingPathComponent(linkList), encoding: .utf8)
        let objects = linked.split(separator: "\n").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) }
            .filter { object in Self.linkedModules.contains { object.contains("/\($0).build/") } }
        let executable = folder.appendingPathComponent("example").path
        var arguments = ["swiftc", "-swift-version", "6", "-module-name", "Example",
                         "-I", build.appendingPathComponent("Modules").path,
                         folder.appendingPathComponent("main.swift").path, folder.appendingPathComponent("Stub.swift").path]
        arguments += objects + ["-o", executable]
        if isThreadSanitized { arguments.append("-sanitize=thread") }

        let compiled = try await run("/usr/bin/env", arguments, timeout: 300)
        #expect(compiled.status == 0, "swiftc failed:\n\(compiled.output)")
        guard compiled.status == 0 else { return compiled.output }
        return try await run(executable, [], timeout: 60).output
    }

    /// The modules an app that uses the library and its testing kit links.
    private static let linkedModules = ["NetworkScheduler", "NetworkSchedulerMachine", "NetworkSchedulerTesting"]

    /// Whether this process runs under the thread sanitizer.
    private static var isThreadSanitized: Bool {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
    }

    /// Runs a program, at most `timeout` seconds, and returns its exit status and its output
    /// and errors together.
    private static func run(_ path: String, _ arguments: [String], timeout: TimeInterval) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let ended = EventLog<Int32>()
        process.terminationHandler = { ended.append($0.terminationStatus) }
        try process.run()
        // Read while it runs, so that a full pipe cannot stall it, on a thread of its own: the
        // read blocks for the whole compile, and a task doing it held one of the cooperative
        // pool's two threads here for 20-30 s, which starved every other suite's waits.
        async let read = onOwnThread { pipe.fileHandleForReading.readDataToEndOfFile() }
        let status = await ended.wait(for: 1, timeout: timeout).first
        if status == nil { process.terminate() }
        let output = String(decoding: await read, as: UTF8.self)
        return (status ?? -1, output)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Downloads against a server that lies about its length, and a disk that refuses them: each
/// ends with a clear error, the destination as it was, and the partial file kept only when it
/// can be resumed.
@Suite struct DownloadFaultTests {
    private static let body = Data((0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
    private static let old = Data("the version the user had".utf8)

    /// A folder of its own, with a destination that holds the user's old version.
    private static func withDestination(in parent: URL = FileManager.default.temporaryDirectory,
                                        _ body: (URL) async throws -> Void) async throws {
        let folder = parent.appendingPathComponent("DownloadFaultTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("export.bin")
        try old.write(to: destination)
        try await body(destination)
    }

    private static func partialExists(_ destination: URL) -> Bool {
        FileManager.default.fileExists(atPath: destination.appendingPathExtension("partial").path)
    }

    @Test func aBodyShorterThanItsContentLengthIsKeptAndResumedNeverSaved() async throws {
        try await Self.withDestination { destination in
            let ranges = EventLog<String?>()
            let harness = Harness(retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0, maxDelay: 0)) { request in
                ranges.append(request.value(forHTTPHeaderField: "Range"))
                guard request.value(forHTTPHeaderField: "Range") != nil else {
                    // A clean end after 400 of the 1,000 bytes it announced.
                    return .respond(body: Self.body.prefix(400), headers: ["Content-Length": "1000", "ETag": "\"v1\""])
                }
                return .respond(status: 206, body: Self.body.dropFirst(400), headers: ["Content-Range": "bytes 400-999/1000"])
            }

            _ = try await harness.api.value(for: .download("export", to: destination))

            #expect(ranges.elements == [nil, "bytes=400-"])
            #expect((try? Data(contentsOf: destination)) == Self.body)
        }
    }

    @Test func aBodyLongerThanItsContentLengthFailsAndLeavesTheDestinationAsItWas() async throws {
        try await Self.withDestination { destination in
            let harness = Harness { _ in .respond(body: Self.body + Self.body, headers: ["Content-Length": "1000", "ETag": "\"v1\""]) }

            let error = await #expect(throws: ServiceError.self) {
                try await harness.api.value(for: .download("export", to: destination))
            }

            #expect(error?.caseName == "badServerResponse")
            #expect(error?.urlError?.localizedDescription.contains("more than the 1000 bytes") == true)
            #expect((try? Data(contentsOf: destination)) == Self.old)
            #expect(!Self.partialExists(destination), "which bytes are the body's cannot be known: nothing is kept")
        }
    }

    #if os(Linux)
    @Test func aFolderThatRefusesTheFileFailsWithItsReasonAndNoFileBehind() async throws {
        // /proc takes no new file, whoever asks: root too.
        let destination = URL(fileURLWithPath: "/proc/export-\(UUID().uuidString).bin")
        let harness = Harness { _ in .respond(body: Self.body, headers: ["ETag": "\"v1\""]) }

        let error = await #expect(throws: ServiceError.self) {
            try await harness.api.value(for: .download("export", to: destination))
        }

        guard case .cannotWriteFile(let reason) = error else {
            Issue.record("expected cannotWriteFile, got \(String(describing: error))")
            return
        }
        #expect(reason.hasPrefix("\(destination.lastPathComponent).partial: "))
        #expect(!reason.contains("/proc"), "the reason names the file, not where it is")
    }

    @Test(.enabled(if: TinyDisk.isAvailable, "needs root, to mount a tmpfs"))
    func aDiskThatFillsFailsTheDownloadAndFreesItsPartialFile() async throws {
        let disk = try #require(TinyDisk(bytes: 64 * 1_024))
        defer { disk.remove() }
        try await Self.withDestination(in: disk.folder) { destination in
            let large = Data(repeating: 7, count: 512 * 1_024)
            let harness = Harness { _ in .respond(body: large, headers: ["ETag": "\"v1\""]) }

            let error = await #expect(throws: ServiceError.self) {
                try await harness.api.value(for: .download("export", to: destination))
            }

            guard case .cannotWriteFile(let reason) = error else {
                Issue.record("expected cannotWriteFile, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("export.bin.partial"))
            #expect((try? Data(contentsOf: destination)) == Self.old)
            #expect(!Self.partialExists(destination), "its space is given back")
        }
    }
    #endif
}

#if os(Linux)
/// A tmpfs of a few kilobytes, mounted on a folder of its own: a disk that fills.
struct TinyDisk {
    let folder: URL

    /// Whether this process may mount one (root, where mounts are allowed).
    static let isAvailable: Bool = {
        guard getuid() == 0, let probe = TinyDisk(bytes: 4_096) else { return false }
        probe.remove()
        return true
    }()

    init?(bytes: Int) {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("TinyDisk-\(UUID().uuidString)")
        guard (try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)) != nil,
              Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", folder.path]) else {
            try? FileManager.default.removeItem(at: folder)
            return nil
        }
    }

    func remove() {
        _ = Self.run("/bin/umount", [folder.path])
        try? FileManager.default.removeItem(at: folder)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
#endif

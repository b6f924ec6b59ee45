import Foundation
import NetworkScheduler
import NetworkSchedulerOutbox

/// Scenario 12: 10,000 small writes made durable, one after the other: through an `Outbox`
/// (each journaled and `fsync`ed before `enqueue` returns; its kind not registered, so nothing
/// is sent), and as the floor, the same JSON appended with a bare `FileHandle` and
/// `synchronize()` (fsync) after each. Per write, in microseconds of wall time and of CPU.
struct OutboxEnqueue {
    struct Cost {
        var wallMicroseconds: Double
        var cpuMicroseconds: Double
    }

    private struct Draft: Codable, Sendable {
        let text: String
    }

    static func outbox(writes: Int) throws -> Cost {
        try inFolder { folder in
            let api = APIClient(baseURL: URL(string: "http://127.0.0.1:9")!, scheduler: RequestScheduler())
            let outbox = try Outbox(folder: folder, client: api)
            defer { outbox.close() }
            let kind = OutboxKind<Draft>("draft", lane: "drafts") { Resource<Data>(.post, path: "drafts", body: .json($0), decoding: .data) }
            return try measure(writes) { index in try outbox.enqueue(Draft(text: "draft \(index)"), as: kind) }
        }
    }

    static func bareAppend(writes: Int) throws -> Cost {
        try inFolder { folder in
            let file = folder.appendingPathComponent("bare.log")
            guard FileManager.default.createFile(atPath: file.path, contents: nil) else { throw BenchmarkFailure("cannot write \(file.path)") }
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            let encoder = JSONEncoder()
            return try measure(writes) { index in
                try handle.write(contentsOf: try encoder.encode(Draft(text: "draft \(index)")))
                try handle.synchronize()
            }
        }
    }

    private static func measure(_ writes: Int, _ write: (Int) throws -> Void) rethrows -> Cost {
        let (wall, cpu) = (now(), processCPUNanoseconds())
        for index in 0..<writes { try write(index) }
        return Cost(wallMicroseconds: Double(now() - wall) / 1e3 / Double(writes),
                    cpuMicroseconds: Double(processCPUNanoseconds() - cpu) / 1e3 / Double(writes))
    }

    private static func inFolder<T>(_ body: (URL) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try body(folder)
    }
}

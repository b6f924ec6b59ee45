import Foundation
import NetworkScheduler
import SocialApp
import SocialServer
import Synchronization

// Steps 13 and 14: transfers are requests like any other. An upload at low priority leaves
// the screen's calls their slot; a download cut short is resumed where it stopped.
extension Scenario {
    /// 13: a 16 MB upload at `.low` takes the host's low-priority slot; the profile calls sent
    /// meanwhile at `.high` take the other and never wait behind it.
    func anUploadAtLowPriority() async throws {
        narrator.step(13, Self.steps[12])
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("holiday.mov")
        try Data((0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: photo)
        // The embedded server reads it slowly, as a phone's uplink would: about two seconds.
        server?.faults[.upload] = Fault(readPauseMilliseconds: 8)
        defer { server?.faults[.upload] = nil }

        let quarters = QuartersTold()
        let upload = Task { [api, narrator] in
            try await api.client.value(for: .upload(photo, contentType: "video/quicktime"), priority: .low) { progress in
                let quarter = Int((progress.fractionSent ?? 0) * 4)
                if quarters.isNew(quarter) { narrator.say("   the upload has sent \(quarter * 25) %") }
            }
        }
        var waits: [TimeInterval] = []
        var wires: [TimeInterval] = []
        for _ in 0..<10 {
            let reply = try await api.client.reply(for: .me, priority: .high)
            waits.append(reply.metrics.queuedDuration)
            wires.append(reply.metrics.networkDuration)
        }
        let receipt = try await upload.value
        let longestWait = waits.max() ?? 0
        let typicalWire = wires.sorted()[wires.count / 2]
        narrator.say("   10 profile calls at .high while it ran: longest queue wait \(Self.milliseconds(longestWait)), "
            + "a call's wire time \(Self.milliseconds(typicalWire)); the server read \(receipt.bytes) bytes")
        narrator.check(receipt.bytes == 16 << 20, "the whole file reached the server, streamed from disk")
        narrator.check(longestWait < typicalWire, "no profile call waited behind the upload for longer than a call takes")
    }

    /// 14: the server drops the connection 2 MB into a 6 MB export; the retry asks for the
    /// rest with `Range` and `If-Range`, and the file is whole.
    func aDownloadResumedAfterTheServerDropsIt() async throws {
        narrator.step(14, Self.steps[13])
        guard let server = faultyServer() else { return }
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("export-2026.bin")
        let size = 6 << 20
        server.faults[.export] = Fault(failFirst: 1, cutAfterBytes: 2_000_000)
        defer { server.faults[.export] = nil }
        let before = server.arrivals.all.count

        let saved = try await api.client.value(for: .export("2026", bytes: size, to: destination), priority: .low)

        let asked = server.arrivals.all.dropFirst(before).filter { $0.route == .export }
        narrator.say("   the server saw \(asked.count) requests: " + asked.map { $0.range.map { "Range: \($0)" } ?? "the whole file" }
            .joined(separator: ", then "))
        let data = try Data(contentsOf: saved)
        let intact = data.count == size && [0, 1_999_999, 2_000_000, size - 1].allSatisfy {
            data[$0] == ExportContent.byte(at: $0, version: server.faults.exportsVersion)
        }
        narrator.check(asked.count == 2 && asked.last?.range != nil, "the retry asked only for what was missing")
        narrator.check(intact, "the saved file is whole, and the same version throughout")
    }

    private static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("friends-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private static func milliseconds(_ seconds: TimeInterval) -> String {
        String(format: "%.1f ms", seconds * 1_000)
    }
}

/// The quarters of an upload already told, so that each is told once.
private final class QuartersTold: Sendable {
    private let seen = Mutex(0)

    func isNew(_ quarter: Int) -> Bool {
        seen.withLock { seen in
            defer { seen = max(seen, quarter) }
            return quarter > seen
        }
    }
}

import Foundation
import NetworkSchedulerTesting
import NIOConcurrencyHelpers
import SocialServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension HeavyTests {
    /// The durable outbox against real kills: client processes (`OutboxChild`) enqueue posts
    /// and are killed with SIGKILL at random moments (during an enqueue, a journal write, a
    /// request on the wire, or between the server's answer and the journal's record of it);
    /// each next one opens the same folder. Every write whose enqueue returned reaches the
    /// server once, in order, and its outcome is told.
    @Suite struct OutboxCrashTests {
        /// One child process, its output read a line at a time, to its end.
        private final class Child: Sendable {
            let process: Process
            let enqueued = EventLog<Int>()
            let told = EventLog<String>()
            /// Its last line: DRAINED, NOT DRAINED or FAILED.
            let ends = EventLog<String>()
            /// Told once its output is closed (it exited, or was killed), and read whole.
            let closed = EventLog<Void>()

            init(_ arguments: [String]) throws {
                process = Process()
                // The test bundle's sibling in the build folder, built as a dependency of the tests.
                process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                    .appendingPathComponent("OutboxChild")
                process.arguments = arguments
                let output = Pipe()
                process.standardOutput = output
                process.standardError = FileHandle.nullDevice
                try process.run()
                let reading = output.fileHandleForReading
                Thread.detachNewThread { [enqueued, told, ends, closed] in
                    var pending = ""
                    while case let data = reading.availableData, !data.isEmpty {
                        pending += String(decoding: data, as: UTF8.self)
                        var lines = pending.split(separator: "\n", omittingEmptySubsequences: false)
                        pending = String(lines.removeLast())
                        for line in lines {
                            if line.hasPrefix("ENQUEUED "), let index = Int(line.dropFirst("ENQUEUED ".count)) { enqueued.append(index) }
                            if line.hasPrefix("TOLD ") { told.append(String(line.dropFirst("TOLD ".count))) }
                            if line.hasPrefix("DRAINED") || line.hasPrefix("NOT DRAINED") || line.hasPrefix("FAILED") {
                                ends.append(String(line))
                            }
                        }
                    }
                    closed.append(())
                }
            }

            /// Kills it with SIGKILL, and waits until its output is read whole.
            func kill() async {
                Glibc.kill(process.processIdentifier, SIGKILL)
                await closed.wait(for: 1)
            }
        }

        @Test func everyWriteEnqueuedBeforeAKillReachesTheServerOnceInOrder() async throws {
            let kills = Int(ProcessInfo.processInfo.environment["OUTBOX_KILLS"] ?? "") ?? 12
            let server = try await SocialServer.start()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("OutboxCrashTests-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let prefix = "crash \(UUID().uuidString.prefix(6))"
            var random = SeededGenerator(seed: 2026)
            var enqueued: [Int] = []
            var told: [String] = []
            let perChild = 5

            for run in 0..<kills {
                let first = run * perChild
                let child = try Child(["enqueue", folder.path, server.baseURL.absoluteString, prefix, "\(first)", "\(perChild)"])
                // Killed once it said it enqueued this many: 0 kills it during its start.
                let waitFor = Int.random(in: 0...perChild, using: &random)
                if waitFor > 0 { await child.enqueued.wait(for: waitFor, timeout: 60) }
                await child.kill()
                enqueued += child.enqueued.elements
                told += child.told.elements
            }
            let drain = try Child(["drain", folder.path, server.baseURL.absoluteString])
            #expect(await drain.ends.wait(for: 1, timeout: 90) == ["DRAINED"])
            await drain.closed.wait(for: 1)
            told += drain.told.elements

            // Every write whose enqueue returned is at the server once, and the posts are in
            // the order they were enqueued.
            let posts = await server.posts(withTextPrefix: prefix + " ")
            let indices = posts.map { Int($0.text.dropFirst(prefix.count + 1)) ?? -1 }
            let lost = Set(enqueued).subtracting(indices)
            #expect(lost.isEmpty, "lost: \(lost.sorted())")
            #expect(indices.count == Set(indices).count, "applied twice: \(indices)")
            #expect(indices == indices.sorted(), "out of order: \(indices)")
            // Every outcome of those is told; more than once only for a kill while it was told.
            let toldIndices = told.compactMap { Int($0.dropFirst(prefix.count + 1)) }
            #expect(Set(enqueued).isSubset(of: Set(toldIndices)))
            print("outbox crash test: \(kills) kills, \(enqueued.count) writes enqueued, \(indices.count) applied, "
                + "\(lost.count) lost, \(indices.count - Set(indices).count) applied twice, "
                + "\(toldIndices.count - Set(toldIndices).count) told twice")
            await server.stop()
        }
    }
}

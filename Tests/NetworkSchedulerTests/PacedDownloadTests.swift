#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Downloads over FoundationNetworking, whose session cannot stop reading a connection: the
/// body is asked for in parts, each once the last is written, so that at most one waits in
/// memory.
@Suite struct PacedDownloadTests {
    private static let body = Data((0..<8_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    /// A server of `body` with a strong `ETag`, which serves `Range: bytes=A-B` (and `If-Range`)
    /// unless told to ignore ranges; every request's range is logged.
    private static func server(_ body: Data, ignoresRanges: Bool = false, ranges: EventLog<String?>) -> StubURLProtocol.Handler {
        { request, _ in
            let range = request.value(forHTTPHeaderField: "Range")
            ranges.append(range.map { range in request.value(forHTTPHeaderField: "If-Range").map { "\(range) if \($0)" } ?? range })
            let matches = request.value(forHTTPHeaderField: "If-Range").map { $0 == "\"v1\"" } ?? true
            guard !ignoresRanges, matches, let range, range.hasPrefix("bytes=") else {
                return .streams(headers: ["ETag": "\"v1\"", "Content-Length": "\(body.count)"], chunks: [body])
            }
            let bounds = range.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            let start = Int(bounds[0]) ?? 0
            guard start < body.count else { return .respond(status: 416, headers: ["Content-Range": "bytes */\(body.count)"]) }
            let end = min(body.count - 1, Int(bounds[1]) ?? body.count - 1)
            return .streams(status: 206, headers: ["ETag": "\"v1\"", "Content-Range": "bytes \(start)-\(end)/\(body.count)"],
                            chunks: [body.subdata(in: start..<(end + 1))])
        }
    }

    /// Downloads from `host` to a file of its own, in parts of `segment` bytes; returns the
    /// outcome and the file's bytes.
    private static func download(from host: String, segment: Int64, yieldingSegment: Int64 = 256 << 10,
                                 besideAnotherTask: Bool = false, handler: @escaping StubURLProtocol.Handler,
                                 cancelling: Bool = false) async throws -> (Result<TransportResponse, any Error>, Data?) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("PacedDownloadTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let transport = StubURLProtocol.transport(host: host, handler: handler)
        defer { transport.invalidate() }
        let file = try FileDownload(destination: destination, limit: 1 << 20) { _ in }
        let ended = EventLog<Result<TransportResponse, any Error>>()
        let request = TransportRequest(URLRequest(url: URL(string: "https://\(host)/export")!))
        if besideAnotherTask {
            // A task of the same session, registered and never resumed: it runs for as long as
            // the download does.
            let other = transport.session.dataTask(with: URL(string: "https://\(host)/other")!)
            transport.delegate.register(other, policy: TransportPolicy(), body: TransportRequest(URLRequest(url: other.originalRequest!.url!)),
                                        progress: nil) { _ in }
        }
        let download = PacedDownload(session: transport.session, lifecycle: transport.lifecycle, delegate: transport.delegate, request: request, sink: file,
                                     policy: TransportPolicy(), segment: segment, yieldingSegment: yieldingSegment) { ended.append($0) }
        download.start()
        if cancelling { download.cancel() }
        let outcome = try #require(await ended.wait(for: 1).first)
        if case .success = outcome { try file.finish() } else { file.abandon() }
        return (outcome, try? Data(contentsOf: destination))
    }

    @Test func theBodyIsAskedForInPartsEachAfterTheLastAndNamingItsVersion() async throws {
        let ranges = EventLog<String?>()

        let (outcome, saved) = try await Self.download(from: "parts.paced.test", segment: 3_000,
                                                       handler: Self.server(Self.body, ranges: ranges))

        #expect(throws: Never.self) { try outcome.get() }
        #expect(saved == Self.body)
        #expect(ranges.elements == ["bytes=0-2999", "bytes=3000-5999 if \"v1\"", "bytes=6000-8999 if \"v1\""])
    }

    /// FoundationNetworking reads a connection with data before another: a quick GET of the
    /// session waited for a whole part of a download (up to 20 ms for 8 MiB on loopback).
    @Test func whileAnotherTaskOfTheSessionRunsThePartsAreSmall() async throws {
        let ranges = EventLog<String?>()

        let (outcome, saved) = try await Self.download(from: "yielding.paced.test", segment: 6_000, yieldingSegment: 2_000,
                                                       besideAnotherTask: true, handler: Self.server(Self.body, ranges: ranges))

        #expect(throws: Never.self) { try outcome.get() }
        #expect(saved == Self.body)
        #expect(ranges.elements == ["bytes=0-1999", "bytes=2000-3999 if \"v1\"", "bytes=4000-5999 if \"v1\"",
                                    "bytes=6000-7999 if \"v1\""])
    }

    /// A task that ended while a download ran keeps its parts small for a while: the next of a
    /// few GETs one after another would otherwise wait for a large part started between two of
    /// them. One that ended before the download began (a login) does not.
    @Test func theSessionsOtherTasksCountForAWhileAfterTheyEndAndAPartDoesNot() throws {
        let transport = StubURLProtocol.transport(host: "activity.paced.test") { _, _ in .respond() }
        defer { transport.invalidate() }
        let url = URL(string: "https://activity.paced.test/a")!
        let part = transport.session.dataTask(with: url)
        transport.delegate.register(part, policy: TransportPolicy(), body: TransportRequest(URLRequest(url: url)), progress: nil,
                                    isPart: true) { _ in }
        #expect(!transport.delegate.othersAreActive(within: 60_000_000_000))

        let other = transport.session.dataTask(with: url)
        transport.delegate.register(other, policy: TransportPolicy(), body: TransportRequest(URLRequest(url: url)), progress: nil) { _ in }
        #expect(transport.delegate.othersAreActive(within: 0))
        transport.delegate.urlSession(transport.session, task: other, didCompleteWithError: URLError(.cancelled))
        #expect(transport.delegate.othersAreActive(within: 60_000_000_000))
        #expect(!transport.delegate.othersAreActive(within: 0))
        // Ended before a download began: it does not count for that download.
        #expect(!transport.delegate.othersAreActive(since: DispatchTime.now().uptimeNanoseconds, within: 60_000_000_000))
    }

    @Test func aServerThatIgnoresRangesSendsTheWholeBodyOnce() async throws {
        let ranges = EventLog<String?>()

        let (outcome, saved) = try await Self.download(from: "whole.paced.test", segment: 3_000,
                                                       handler: Self.server(Self.body, ignoresRanges: true, ranges: ranges))

        #expect(throws: Never.self) { try outcome.get() }
        #expect(saved == Self.body)
        #expect(ranges.count == 1)
    }

    @Test func anEmptyBodyAnsweredWith416IsAskedForWhole() async throws {
        let ranges = EventLog<String?>()

        let (outcome, saved) = try await Self.download(from: "empty.paced.test", segment: 3_000,
                                                       handler: Self.server(Data(), ranges: ranges))

        #expect(throws: Never.self) { try outcome.get() }
        #expect(saved == Data())
        #expect(ranges.elements == ["bytes=0-2999", nil])
    }

    @Test func cancellingItEndsItWithoutAnotherPart() async throws {
        let ranges = EventLog<String?>()

        let (outcome, _) = try await Self.download(from: "cancel.paced.test", segment: 3_000, handler: { request, body in
            _ = Self.server(Self.body, ranges: ranges)(request, body)
            return .hold
        }, cancelling: true)

        #expect((try? outcome.get()) == nil, "it ends as cancelled")
        #expect(ranges.count <= 1)
    }
}
#endif

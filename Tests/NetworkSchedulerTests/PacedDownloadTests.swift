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
    /// How the server misbehaves, within what RFC 9110 allows or not.
    private enum Quirk {
        case none
        /// `Content-Range: bytes A-B/*`: it does not say the body's length.
        case withholdsTheLength
        /// Sends no `ETag` (nor `Last-Modified`): nothing can name the version.
        case namesNoVersion
        /// Answers a part after the first, whatever `If-Range` names, from another version.
        case changesVersionAfterTheFirstPart
    }

    private static func server(_ body: Data, ignoresRanges: Bool = false, quirk: Quirk = .none,
                               ranges: EventLog<String?>) -> StubURLProtocol.Handler {
        { request, _ in
            let range = request.value(forHTTPHeaderField: "Range")
            ranges.append(range.map { range in request.value(forHTTPHeaderField: "If-Range").map { "\(range) if \($0)" } ?? range })
            let matches = request.value(forHTTPHeaderField: "If-Range").map { $0 == "\"v1\"" } ?? true
            let tag: HeaderFields = quirk == .namesNoVersion ? [:] : ["ETag": "\"v1\""]
            guard !ignoresRanges, matches, let range, range.hasPrefix("bytes=") else {
                var whole = tag
                whole["Content-Length"] = "\(body.count)"
                return .streams(headers: whole, chunks: [body])
            }
            let bounds = range.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            let start = Int(bounds[0]) ?? 0
            guard start < body.count else { return .respond(status: 416, headers: ["Content-Range": "bytes */\(body.count)"]) }
            let end = min(body.count - 1, Int(bounds[1]) ?? body.count - 1)
            let total = quirk == .withholdsTheLength ? "*" : "\(body.count)"
            var part = body.subdata(in: start..<(end + 1))
            var partTag = tag
            if quirk == .changesVersionAfterTheFirstPart, start > 0 {
                part = Data(repeating: 0xEE, count: part.count)
                partTag = ["ETag": "\"v2\""]
            }
            partTag["Content-Range"] = "bytes \(start)-\(end)/\(total)"
            return .streams(status: 206, headers: partTag, chunks: [part])
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

    /// `bytes 0-2999/*` is valid (RFC 9110 §14.4): the length is unknown, not 3,000 bytes. The
    /// first part's end was taken for the body's, and a 10 MB file saved as 8 MiB succeeded.
    @Test(arguments: [8_000, 9_000])
    func aBodyWhoseLengthTheServerWithholdsIsAskedForUntilItEnds(length: Int) async throws {
        let ranges = EventLog<String?>()
        let body = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13) })

        let (outcome, saved) = try await Self.download(from: "star-\(length).paced.test", segment: 3_000,
                                                       handler: Self.server(body, quirk: .withholdsTheLength, ranges: ranges))

        #expect(throws: Never.self) { try outcome.get() }
        #expect(saved == body)
        // 8,000 bytes end in a short part; 9,000 in a full one, past which the server finds nothing.
        let expected = ["bytes=0-2999", "bytes=3000-5999 if \"v1\"", "bytes=6000-8999 if \"v1\""]
            + (length == 9_000 ? ["bytes=9000-11999 if \"v1\""] : [])
        #expect(ranges.elements == expected)
    }

    /// Without a version the rest cannot be asked for safely: each attempt asked for the first
    /// part only, and a file larger than a part could never be delivered.
    @Test func aServerThatNamesNoVersionSendsTheWholeBodyAfterTheFirstPart() async throws {
        let ranges = EventLog<String?>()

        let (outcome, saved) = try await Self.download(from: "unversioned.paced.test", segment: 3_000,
                                                       handler: Self.server(Self.body, quirk: .namesNoVersion, ranges: ranges))

        #expect(throws: Never.self) { try outcome.get() }
        #expect(saved == Self.body)
        #expect(ranges.elements == ["bytes=0-2999", nil])
    }

    /// A 206 whose `ETag` is not the one `If-Range` named is another version's part: written
    /// after the first, it made one file of two versions.
    @Test func aPartOfAnotherVersionFailsTheDownloadAndLeavesNoFile() async throws {
        let ranges = EventLog<String?>()

        let (outcome, saved) = try await Self.download(from: "spliced.paced.test", segment: 3_000,
                                                       handler: Self.server(Self.body, quirk: .changesVersionAfterTheFirstPart,
                                                                            ranges: ranges))

        #expect { try outcome.get() } throws: { error in
            if case .badServerResponse = error as? ServiceError { return true }
            return false
        }
        #expect(saved == nil)
        #expect(ranges.elements == ["bytes=0-2999", "bytes=3000-5999 if \"v1\""])
    }

    /// A file that notes how many bytes it had written each time the next part was asked for.
    private final class RecordingFile: SegmentedSink, @unchecked Sendable {
        // Safety: the file is its own lock's; the lengths are an event log's.
        let file: FileDownload
        let writtenWhenAsked = EventLog<Int>()
        private let written = Locked(0)
        init(_ file: FileDownload) { self.file = file }
        var isAccepted: Bool { file.isAccepted }
        var endedWithoutLength: Bool { file.endedWithoutLength }
        func nextSegment(size: Int64) -> HeaderFields? {
            writtenWhenAsked.append(written.withLock { $0 })
            return file.nextSegment(size: size)
        }
        func accept(_ head: ResponseHead) throws -> Bool { try file.accept(head) }
        func write(_ chunk: Data) throws {
            try file.write(chunk)
            written.withLock { $0 += chunk.count }
        }
    }

    /// Each chunk is written as the session's delegate queue hands it over, and the part's end
    /// comes after its last chunk through the same queue: the next part is asked for once the
    /// last one is in the file, never while it waits in memory.
    @Test func theNextPartIsAskedForOnceTheLastIsWritten() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("PacedDownloadTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let ranges = EventLog<String?>()
        let transport = StubURLProtocol.transport(host: "written.paced.test", handler: Self.server(Self.body, ranges: ranges))
        defer { transport.invalidate() }
        let destination = folder.appendingPathComponent("export.bin")
        let file = RecordingFile(try FileDownload(destination: destination, limit: 1 << 20) { _ in })
        let ended = EventLog<Result<TransportResponse, any Error>>()
        let download = PacedDownload(session: transport.session, lifecycle: transport.lifecycle, delegate: transport.delegate,
                                     request: TransportRequest(URLRequest(url: URL(string: "https://written.paced.test/export")!)),
                                     sink: file, policy: TransportPolicy(), segment: 3_000) { ended.append($0) }

        download.start()
        let outcome = try #require(await ended.wait(for: 1).first)
        #expect(throws: Never.self) { try outcome.get() }
        try file.file.finish()
        #expect((try? Data(contentsOf: destination)) == Self.body)
        #expect(ranges.elements.count == 3)
        // Asked before the first part, then after each whole part of 3,000 bytes.
        #expect(file.writtenWhenAsked.elements.prefix(3) == [0, 3_000, 6_000])
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

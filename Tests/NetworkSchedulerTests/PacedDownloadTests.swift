#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// A sink whose disk is slow: each write waits at a gate the test opens. It can continue from
/// what it wrote, as a download's file with a version can.
private final class GatedSink: ContinuableSink, @unchecked Sendable {
    // Safety: `written` is an event log; `offset` is behind its lock; the gate is a semaphore.
    let written = EventLog<Data>()
    let heads = EventLog<Int>()
    private let gate = DispatchSemaphore(value: 0)
    private let offset = Locked(0)

    func accept(_ head: ResponseHead) throws -> Bool {
        heads.append(head.statusCode)
        return true
    }

    func write(_ chunk: Data) throws {
        gate.wait()
        written.append(chunk)
        offset.withLock { $0 += chunk.count }
    }

    /// Lets `count` more writes through.
    func open(_ count: Int) {
        for _ in 0..<count { gate.signal() }
    }

    var canContinue: Bool { true }

    func continuationHeaders() -> [String: String]? {
        ["Range": "bytes=\(offset.withLock { $0 })-", "If-Range": "\"v1\""]
    }
}

/// Downloads over FoundationNetworking, whose session cannot stop reading: past its limit of
/// bytes waiting for the disk, the data task is cancelled, and the rest asked for with `Range`
/// once the writer caught up.
@Suite struct PacedDownloadTests {
    @Test func aDiskBehindStopsTheConnectionAndTheRestIsAskedForWhereTheWriterStopped() async throws {
        let host = "paced.urlsession.test"
        let chunks = (0..<8).map { Data(repeating: UInt8($0), count: 1_000) }
        let ranges = EventLog<String?>()
        let transport = StubURLProtocol.transport(host: host) { request, _ in
            let range = request.value(forHTTPHeaderField: "Range")
            ranges.append(range)
            guard let range, let start = Int(range.dropFirst("bytes=".count).dropLast()) else {
                // Four chunks, then the connection stays open: only a cancel ends it.
                return .streams(headers: ["ETag": "\"v1\""], chunks: Array(chunks.prefix(4)), then: .hold)
            }
            return .streams(status: 206, headers: ["Content-Range": "bytes \(start)-7999/8000"],
                            chunks: [chunks.reduce(Data(), +).dropFirst(start)].map { Data($0) })
        }
        defer { transport.invalidate() }
        let sink = GatedSink()
        let ended = EventLog<Result<TransportResponse, any Error>>()
        let request = TransportRequest(URLRequest(url: URL(string: "https://\(host)/export")!))
        let download = PacedDownload(session: transport.session, delegate: transport.delegate, request: request, sink: sink,
                                     policy: TransportPolicy(), limit: 2_500) { ended.append($0) }

        download.start(request.urlRequest)
        // Past 2,500 bytes waiting, the task is cancelled; the writer then writes all four.
        await StubURLProtocol.stops(of: host).wait(for: 1)
        sink.open(4)
        #expect(await sink.written.wait(for: 4).count == 4)

        // The rest comes on a new connection, from byte 4,000.
        #expect(await ranges.wait(for: 2) == [nil, "bytes=4000-"])
        sink.open(1)
        let outcome = try #require(await ended.wait(for: 1).first)
        #expect(throws: Never.self) { try outcome.get() }
        #expect(sink.written.elements.reduce(Data(), +) == chunks.reduce(Data(), +))
        #expect(sink.heads.elements == [200, 206])
    }

    @Test func cancellingItWhileTheWriterCatchesUpEndsItWithoutAnotherConnection() async throws {
        let ranges = EventLog<String?>()
        let transport = StubURLProtocol.transport(host: "paced-cancel.urlsession.test") { request, _ in
            ranges.append(request.value(forHTTPHeaderField: "Range"))
            return .streams(headers: ["ETag": "\"v1\""], chunks: (0..<4).map { _ in Data(count: 1_000) }, then: .hold)
        }
        defer { transport.invalidate() }
        let sink = GatedSink()
        let ended = EventLog<Result<TransportResponse, any Error>>()
        let request = TransportRequest(URLRequest(url: URL(string: "https://paced-cancel.urlsession.test/export")!))
        let download = PacedDownload(session: transport.session, delegate: transport.delegate, request: request, sink: sink,
                                     policy: TransportPolicy(), limit: 2_500) { ended.append($0) }
        download.start(request.urlRequest)
        await ranges.wait(for: 1)

        download.cancel()
        sink.open(4)

        let outcome = try #require(await ended.wait(for: 1).first)
        #expect((try? outcome.get()) == nil, "it ends as cancelled")
        #expect(ranges.count == 1)
    }
}
#endif

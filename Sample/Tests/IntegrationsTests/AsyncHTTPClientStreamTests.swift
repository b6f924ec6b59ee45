import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import NetworkSchedulerTesting
import NIOConcurrencyHelpers
import Testing

/// A body sink whose reader is always behind: after each chunk it has no room, until the test
/// makes some. It notes each step, in order.
private final class SlowReaderSink: ResponseBodySink, @unchecked Sendable {
    // Safety: the event logs are safe from any thread; `waiting` is behind its lock.
    let steps = EventLog<String>()
    let bytes = EventLog<Data>()
    private let waiting = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)

    func accept(_ head: ResponseHead) throws -> Bool { head.statusCode == 200 }

    func write(_ chunk: Data) throws {
        steps.append("write")
        bytes.append(chunk)
    }

    func hasRoom(orWhenRoom resume: @escaping @Sendable () -> Void) -> Bool {
        waiting.withLockedValue { $0 = resume }
        steps.append("full")
        return false
    }

    /// Makes room: the transport may read the next chunk.
    func makeRoom() {
        let resume = waiting.withLockedValue { waiting in
            defer { waiting = nil }
            return waiting
        }
        steps.append("room")
        resume?()
    }
}

/// Streams over the AsyncHTTPClient transport: a reader behind holds the connection back.
@Suite struct AsyncHTTPClientStreamTests {
    @Test func theNextChunkIsReadOnlyOnceTheSinkHasRoom() async throws {
        let body = String(repeating: "0123456789abcdef", count: 64 * 1_024) // 1 MiB, read in many chunks
        let server = try await LoopbackServer.start { _ in
            .respond(status: .ok, headers: [("Content-Type", "application/octet-stream")], body: body)
        }
        let transport = AsyncHTTPClientTransport()
        let sink = SlowReaderSink()
        var request = TransportRequest(URLRequest(url: server.baseURL.appendingPathComponent("big")))
        request.responseSink = sink
        let ended = EventLog<Result<TransportResponse, any Error>>()

        _ = transport.startTask(for: request, policy: TransportPolicy(), progress: nil) { result in
            ended.append(result)
            sink.steps.append("end")
        }

        // Each chunk is followed by no room; while there is none, no other chunk comes.
        var chunks = 0
        while true {
            let steps = await sink.steps.wait(for: 3 * chunks + 1, timeout: 30)
            guard steps.count > 3 * chunks, steps[3 * chunks] == "write" else { break }
            chunks += 1
            #expect(await sink.steps.wait(for: 3 * chunks - 1, timeout: 30).last == "full")
            if chunks <= 3 {
                // A whole round trip to the server meanwhile: time enough for a transport that
                // ignored the sink to read on.
                let pinged = EventLog<Void>()
                _ = transport.startTask(for: URLRequest(url: server.baseURL.appendingPathComponent("ping"))) { _ in pinged.append(()) }
                await pinged.wait(for: 1, timeout: 30)
            }
            #expect(sink.bytes.count == chunks, "a chunk was read while the sink had no room")
            sink.makeRoom()
        }
        let outcome = try #require(await ended.wait(for: 1, timeout: 30).first)
        #expect(throws: Never.self) { try outcome.get() }
        #expect(chunks > 1)
        #expect(sink.bytes.elements.reduce(Data(), +) == Data(body.utf8))
        try await transport.shutdown()
        await server.stop()
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Streams through the default transport's session delegate, with a URLProtocol stub.
@Suite struct URLSessionStreamTests {
    private func client(host: String, handler: @escaping StubURLProtocol.Handler) -> (APIClient, URLSessionTransport) {
        StubURLProtocol.client(host: host, handler: handler)
    }

    @Test func eventsArriveThroughTheSessionDelegateInOrder() async throws {
        let (api, transport) = client(host: "events.urlsession.test") { _, _ in
            .streams(headers: ["Content-Type": "text/event-stream"], chunks: ["data: 1\n\nda", "ta: 2\n\n", "data: 3\n\n"].map { Data($0.utf8) })
        }
        defer { transport.invalidate() }

        var events: [String] = []
        for try await event in api.stream(.events("feed")) { events.append(event.data) }

        #expect(events == ["1", "2", "3"])
    }

    #if canImport(FoundationNetworking)
    @Test func aReaderFarBehindFailsTheStreamOnLinuxWhereTheSessionCannotStopReading() async throws {
        // FoundationNetworking's suspend takes a transfer off libcurl and starts it over: the
        // session cannot stop reading, so a buffer overrun twice over fails the stream.
        let chunks = (0..<40).map { _ in Data(repeating: UInt8(ascii: "x"), count: 100) }
        let (api, transport) = client(host: "overrun.urlsession.test") { _, _ in .streams(chunks: chunks) }
        defer { transport.invalidate() }
        let stream = api.stream(StreamResource.chunks("export").buffering(1_000))
        // Nobody reads until the stream has ended: a request after it learns when.
        let ended = EventLog<ServiceError?>()
        api.send(Resource<User>(path: "after"), after: [stream.handle]) { result in
            if case .failure(let error) = result { ended.append(error) } else { ended.append(nil) }
        }
        #expect(await ended.wait(for: 1).first??.rootCause == .streamBufferFull(limit: 1_000))

        await #expect(throws: ServiceError.streamBufferFull(limit: 1_000)) {
            var iterator = stream.makeAsyncIterator()
            while try await iterator.next() != nil {}
        }
    }
    #endif
}

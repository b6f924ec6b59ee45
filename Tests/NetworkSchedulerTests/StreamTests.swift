import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Streamed responses through the scheduler, over the stub transport: elements in order,
/// backpressure, reconnection, cancellation by every route, and a line of their own per host.
@Suite struct StreamTests {
    private static let eventHeaders: HeaderFields = ["Content-Type": "text/event-stream"]

    private static func chunks(_ texts: String...) -> [Data] { texts.map { Data($0.utf8) } }

    private static func read<Element>(_ stream: ResponseStream<Element>) async throws(ServiceError) -> [Element] {
        var elements: [Element] = []
        for try await element in stream { elements.append(element) }
        return elements
    }

    @Test func chunksArriveInOrderAndTheStreamEndsWithItsBody() async throws {
        let harness = Harness { _ in .streams(chunks: Self.chunks("a", "bc", "def")) }

        let chunks = try await Self.read(harness.api.stream(.chunks("export")))

        #expect(chunks == Self.chunks("a", "bc", "def"))
        #expect(harness.isIdle)
    }

    /// The *Streams* article's export, as written there.
    @Test func aChunkStreamWritesAnExportToAFileAsTheArticleShows() async throws {
        let harness = Harness { _ in .streams(chunks: Self.chunks("id,name\n", "1,Ada\n")) }
        let api = harness.api
        let screen = RequestGroup()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).csv")
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try FileHandle(forWritingTo: url)

        let export = api.stream(.chunks("exports/2026.csv"), priority: .low, group: screen)
        for try await chunk in export { // chunk: Data
            try file.write(contentsOf: chunk)
        }

        try file.close()
        #expect(try String(contentsOf: url, encoding: .utf8) == "id,name\n1,Ada\n")
    }

    @Test func aStreamsHeadHasTheAnswersStatusAndFieldsBeforeItsBodyIsRead() async throws {
        let harness = Harness { _ in .streams(headers: ["X-Export": "2026"], chunks: Self.chunks("a", "b")) }
        let export = harness.api.stream(.chunks("export"))

        let head = try await export.head()

        #expect(head.statusCode == 200)
        #expect(head.value(forHTTPHeaderField: "x-export") == "2026")
        #expect(try await Self.read(export) == Self.chunks("a", "b"))
    }

    @Test func aStreamThatEndsBeforeAnAnswerTellsItsHeadsWaiterTheError() async throws {
        let harness = Harness { _ in .json(#"{"message": "no export"}"#, status: 404) }
        let export = harness.api.stream(.chunks("export"))

        let error = await #expect(throws: ServiceError.self) { try await export.head() }

        guard case .server(let response)? = error else {
            Issue.record("expected .server, got \(String(describing: error))"); return
        }
        #expect(response.statusCode == 404)
    }

    @Test func linesAreReadAcrossChunks() async throws {
        let harness = Harness { _ in .streams(chunks: Self.chunks("{\"n\":1}\n{\"n\"", ":2}\n{\"n\":3}")) }

        let lines = try await Self.read(harness.api.stream(.lines("log")))

        #expect(lines == [#"{"n":1}"#, #"{"n":2}"#, #"{"n":3}"#])
    }

    @Test func anEventStreamAsksForEventsAndYieldsThem() async throws {
        let harness = Harness { _ in .streams(headers: Self.eventHeaders, chunks: Self.chunks("data: a\n\n", "event: b\ndata: 2\n\n")) }

        let events = try await Self.read(harness.api.stream(.events("feed")))

        #expect(events == [ServerSentEvent(data: "a"), ServerSentEvent(type: "b", data: "2")])
        let request = try #require(harness.transport.arrivals.elements.first?.request)
        #expect(request.value(forHTTPHeaderField: "Accept") == "text/event-stream")
    }

    @Test func anErrorStatusEndsTheStreamWithTheServersMessage() async throws {
        let harness = Harness { _ in .serverError(404, message: "no such feed") }

        let error = await #expect(throws: ServiceError.self) { try await Self.read(harness.api.stream(.events("feed"))) }

        #expect(error?.statusCode == 404)
        #expect(error?.serverResponse?.message == "no such feed")
    }

    @Test func anEventStreamAnsweredWithAnotherContentTypeFails() async throws {
        let harness = Harness { _ in .respond(body: Data("<html>".utf8), headers: ["Content-Type": "text/html"]) }

        let error = await #expect(throws: ServiceError.self) { try await Self.read(harness.api.stream(.events("feed"))) }

        #expect(error?.caseName == "badServerResponse")
    }

    @Test func aServerSendingOneEndlessLineFailsTheStreamWithinItsLimit() async throws {
        let endless = Array(repeating: Data(repeating: UInt8(ascii: "x"), count: 4_096), count: 64)
        let harness = Harness { _ in .streams(headers: Self.eventHeaders, chunks: endless) }

        await #expect(throws: StreamFraming.tooLong("a line", limit: 65_536)) {
            try await Self.read(harness.api.stream(.events("feed", maximumEventSize: 65_536)))
        }
        #expect(harness.isIdle)
    }

    @Test func aReaderBehindStopsTheTransportUntilItCatchesUp() async throws {
        // Given a buffer of 30 bytes, and a server with ten chunks of 10
        let chunks = (0..<10).map { Data(repeating: UInt8($0), count: 10) }
        let harness = Harness { _ in .streams(chunks: chunks) }
        let stream = harness.api.stream(StreamResource.chunks("export").buffering(30))

        // When nobody reads, the transport stops once 30 bytes wait
        #expect(await harness.transport.pauses.wait(for: 1) == [30])

        // Then reading lets it go on, and every chunk arrives once, in order
        let read = try await Self.read(stream)
        #expect(read == chunks)
    }

    @Test func aLostEventStreamReconnectsWithTheLastEventID() async throws {
        let requests = EventLog<URLRequest>()
        let harness = Harness { request in
            requests.append(request)
            if request.value(forHTTPHeaderField: "Last-Event-ID") == nil {
                return .streams(headers: Self.eventHeaders, chunks: Self.chunks("id: 1\ndata: a\n\nid: 2\ndata: b"), then: .lostConnection)
            }
            return .streams(headers: Self.eventHeaders, chunks: Self.chunks("id: 2\ndata: b\n\nid: 3\ndata: c\n\n"))
        }

        let events = try await Self.read(harness.api.stream(.events("feed", reconnectionDelay: 0)))

        #expect(events.map(\.data) == ["a", "b", "c"])
        #expect(requests.elements.map { $0.value(forHTTPHeaderField: "Last-Event-ID") } == [nil, "1"])
    }

    @Test func anEventStreamGivesUpAfterItsReconnectionsInARow() async throws {
        let harness = Harness { _ in .lostConnection }

        await #expect(throws: ServiceError.connectionLost(URLError(.networkConnectionLost))) {
            try await Self.read(harness.api.stream(.events("feed", reconnectionDelay: 0, maximumReconnections: 2)))
        }
        #expect(harness.transport.arrivals.count == 3)
    }

    @Test func aStreamOfBytesIsNotSentAgainOnceItDeliveredSome() async throws {
        let harness = Harness(retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 0, maxDelay: 0)) { _ in
            .streams(chunks: Self.chunks("part"), then: .lostConnection)
        }
        let stream = harness.api.stream(.chunks("export"))
        var iterator = stream.makeAsyncIterator()

        #expect(try await iterator.next() == Data("part".utf8))
        await #expect(throws: ServiceError.connectionLost(URLError(.networkConnectionLost))) { _ = try await iterator.next() }
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func aGroupCancelledEndsItsStreamAndItsTask() async throws {
        let harness = Harness { _ in .streams(headers: Self.eventHeaders, chunks: Self.chunks("data: a\n\n"), then: .hold) }
        let screen = RequestGroup()
        let stream = harness.api.stream(.events("feed"), group: screen)
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next()?.data == "a")

        screen.cancelAll()

        await #expect(throws: ServiceError.cancelled) { _ = try await iterator.next() }
        #expect(await harness.transport.cancellations.wait(for: 1).count == 1)
    }

    @Test func cancellingTheReadingTaskEndsTheStream() async throws {
        let harness = Harness { _ in .streams(chunks: Self.chunks("a"), then: .hold) }
        let stream = harness.api.stream(.chunks("export"))
        let reading = Task { try await Self.read(stream) }
        await harness.transport.arrivals.wait(for: 1)

        reading.cancel()

        await #expect(throws: ServiceError.cancelled) { try await reading.value }
        #expect(await harness.transport.cancellations.wait(for: 1).count == 1)
    }

    @Test func aStreamReleasedUnreadIsCancelled() async throws {
        let harness = Harness { _ in .streams(chunks: Self.chunks("a"), then: .hold) }
        var stream: ResponseStream<Data>? = harness.api.stream(.chunks("export"))
        await harness.transport.arrivals.wait(for: 1)
        #expect(stream != nil)

        stream = nil

        #expect(await harness.transport.cancellations.wait(for: 1).count == 1)
    }

    @Test func openStreamsWaitInALineOfTheirOwnAndLeaveTheBudgetToRequests() async throws {
        // Given one slot per host for requests and one for streams
        let harness = Harness(budget: 1) { request in
            request.url?.path == "/v1/me" ? .json(userJSON) : .streams(chunks: Self.chunks("a"), then: .hold)
        } configure: { $0.streamsPerHost = 1 }
        let first = harness.api.stream(.chunks("first"))
        let second = harness.api.stream(.chunks("second"))
        await harness.transport.arrivals.wait(for: 1)

        // When a request comes while a stream is open, it gets the host's slot at once
        let me = try await harness.api.value(for: Resource<User>(path: "me"))
        #expect(me.name == "Ada")

        // Then the second stream waits for the first one's slot
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/first", "/v1/me"])
        first.cancel()
        let arrivals = await harness.transport.arrivals.wait(for: 3)
        #expect(arrivals.map(\.path) == ["/v1/first", "/v1/me", "/v1/second"])
        second.cancel()
    }

    @Test func waitingStreamsStartByPriorityAndAHandleRaisedMovesUp() async throws {
        // Given one stream slot, held by an open feed, and three streams waiting behind it
        let harness = Harness { _ in .streams(chunks: Self.chunks("a"), then: .hold) } configure: { $0.streamsPerHost = 1 }
        let open = harness.api.stream(.chunks("open"))
        await harness.transport.arrivals.wait(for: 1)
        let low = harness.api.stream(.chunks("low"), priority: .low)
        let normal = harness.api.stream(.chunks("normal"))
        let raised = harness.api.stream(.chunks("raised"), priority: .background)

        // When the last one is raised above the others, and the slot frees
        raised.handle.priority = .high
        open.cancel()

        // Then it goes first, and the others by their priority as each slot frees
        #expect(await harness.transport.arrivals.wait(for: 2).last?.path == "/v1/raised")
        raised.cancel()
        #expect(await harness.transport.arrivals.wait(for: 3).last?.path == "/v1/normal")
        normal.cancel()
        #expect(await harness.transport.arrivals.wait(for: 4).last?.path == "/v1/low")
        low.cancel()
    }

    @Test func aStreamSilentPastItsTimeoutEndsAsTimedOut() async throws {
        let harness = Harness { _ in .streams(chunks: Self.chunks("a"), then: .hold) }
        let stream = harness.api.stream(.chunks("export", timeout: 0.3))
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == Data("a".utf8))

        await #expect(throws: ServiceError.timedOut) { _ = try await iterator.next() }
    }

    @Test func aStreamsProgressReachesTheMonitorsNamingItsCaller() async throws {
        let harness = Harness { _ in .streams(chunks: Self.chunks("abc", "de")) }
        let stream = harness.api.stream(.chunks("export"))

        _ = try await Self.read(stream)

        let steps = harness.events.progressed.elements
        #expect(steps.first?.call.callers == [stream.handle.id])
        #expect(steps.first?.progress == .received(3, of: nil), "the first chunk is a step")
        #expect(steps.allSatisfy { $0.call.url?.path == "/v1/export" })
    }

    @Test func aStreamWaitsForItsDependencies() async throws {
        let harness = Harness { request in
            request.url?.path == "/v1/login" ? .hold : .streams(headers: Self.eventHeaders, chunks: Self.chunks("data: a\n\n"))
        }
        let login = harness.api.send(Resource<User>(.post, path: "login")) { _ in }
        let stream = harness.api.stream(.events("feed"), after: [login])
        await harness.transport.arrivals.wait(for: 1)

        #expect(harness.transport.release(path: "/v1/login", with: .json(userJSON)))

        #expect(try await Self.read(stream).map(\.data) == ["a"])
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/login", "/v1/feed"])
    }
}

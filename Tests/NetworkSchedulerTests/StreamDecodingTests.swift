import Foundation
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// The framings of a streamed body, fed chunk by chunk, as a transport hands them over.
@Suite struct StreamDecodingTests {
    private static func decode<D: StreamDecoder>(_ decoder: inout D, _ chunks: [String], finish: Bool = true) throws(ServiceError) -> [D.Element] {
        var elements: [D.Element] = []
        for chunk in chunks { try decoder.decode(Data(chunk.utf8), into: &elements) }
        if finish { decoder.finish(into: &elements) }
        return elements
    }

    @Test func linesAreSplitAcrossChunksAtLFAndCRLFAndTheLastOneCountsAtTheEnd() throws {
        var decoder = LineDecoder(maximumLineLength: 100)

        let lines = try Self.decode(&decoder, [#"{"a":1}"#, "\r", "\n{\"b\"", ":2}\n\n", "tail\r"])

        #expect(lines == [#"{"a":1}"#, #"{"b":2}"#, "", "tail"])
    }

    @Test func aLineLongerThanItsLimitFailsEvenBeforeItEnds() throws {
        var decoder = LineDecoder(maximumLineLength: 10)

        #expect(throws: StreamFraming.tooLong("a line", limit: 10)) {
            _ = try Self.decode(&decoder, ["12345", "67890", "1"], finish: false)
        }
    }

    @Test func eventsFollowTheStandardsFieldRules() throws {
        var decoder = EventDecoder(maximumEventSize: 1_000)
        let stream = [
            "\u{FEFF}: a comment\n",
            "event: post\ndata: {\"id\":1}\nid: 7\n\n",
            "data: first\ndata:second\r\n\r\n",
            "data\rid: 8\r\rretry: 1500\nretry: soon\n",
            "event: ignored\n\n",          // no data: not an event, as the standard says
            "data: cut off by the end",     // never completed
        ]

        let events = try Self.decode(&decoder, stream)

        #expect(events == [
            ServerSentEvent(type: "post", data: #"{"id":1}"#, id: "7"),
            ServerSentEvent(data: "first\nsecond", id: "7"),
            ServerSentEvent(data: "", id: "8"),
        ])
        #expect(decoder.reconnectionDelay == 1.5)
        #expect(decoder.parser.lastEventID == "8")
    }

    @Test func aReconnectionAsksForWhatFollowsTheLastCompleteEvent() throws {
        var decoder = EventDecoder(maximumEventSize: 1_000)
        _ = try Self.decode(&decoder, ["id: 1\ndata: a\n\n", "id: 2\ndata: b"], finish: false)

        let headers = decoder.startConnection()

        // Event 2 never completed: the server must send it again.
        #expect(headers == ["Last-Event-ID": "1"])
        #expect(try Self.decode(&decoder, ["data: again\n\n"]) == [ServerSentEvent(data: "again", id: "1")])
    }

    @Test func aCRAtTheEndOfAChunkAndAnLFAtTheStartOfTheNextEndOneLine() throws {
        var decoder = EventDecoder(maximumEventSize: 1_000)

        let events = try Self.decode(&decoder, ["data: x\r", "\n\r", "\n"])

        #expect(events == [ServerSentEvent(data: "x")])
    }

    /// The standard splits a line's bytes: a combining mark after the colon once made one
    /// `Character` with it, the field was not found, and the event was lost.
    @Test func aCombiningMarkAfterAFieldsColonStartsItsValue() throws {
        var decoder = EventDecoder(maximumEventSize: 1_000)

        let events = try Self.decode(&decoder, ["data:\u{301}accent\n", "id:\u{301}7\n\n", "data: \u{301}kept\n\n"])

        #expect(events.map(\.data) == ["\u{301}accent", "\u{301}kept"])
        #expect(events.first?.id == "\u{301}7")
    }

    /// A transport may hand over an empty chunk anywhere: between a CR and its LF it once made
    /// the LF end an empty line of its own, which ended the event early and split it in two.
    @Test func anEmptyChunkBetweenACRAndItsLFSplitsNothing() throws {
        var events = EventDecoder(maximumEventSize: 1_000)
        var lines = LineDecoder(maximumLineLength: 100)

        let decoded = try Self.decode(&events, ["data: one\r", "", "\ndata: two\r\n\r\n"])
        let split = try Self.decode(&lines, ["a\r", "", "\nb\n"])

        #expect(decoded.map(\.data) == ["one\ntwo"])
        #expect(split == ["a", "b"])
    }

    @Test func anEventWhoseDataOutgrowsItsLimitFails() throws {
        var decoder = EventDecoder(maximumEventSize: 16)

        #expect(throws: StreamFraming.tooLong("an event's data", limit: 16)) {
            _ = try Self.decode(&decoder, ["data: 0123456789\n", "data: 0123456789\n"], finish: false)
        }
    }

    @Test func onlyAnEventStreamOrA204IsAcceptedAsEvents() {
        let decoder = EventDecoder(maximumEventSize: 16)
        let url = URL(string: "https://api.test/feed")!

        #expect(decoder.accepts(ResponseHead(url: url, statusCode: 200, headerFields: ["Content-Type": "text/event-stream; charset=utf-8"])))
        #expect(decoder.accepts(ResponseHead(url: url, statusCode: 204, headerFields: [:])))
        #expect(!decoder.accepts(ResponseHead(url: url, statusCode: 200, headerFields: ["Content-Type": "text/html"])))
    }
}

/// The channel between a stream's transport and its reader, driven directly.
@Suite struct StreamChannelTests {
    @Test func readingWhileTheTransportWaitsForRoomCountsAsTheStreamsProgress() async throws {
        let channel = StreamChannel<Data>(decoder: ChunkDecoder(), limit: 4, reconnection: nil)
        let told = EventLog<Int>()
        let sink = channel.makeSink { told.append($0) }
        _ = try sink.accept(ResponseHead(url: URL(string: "https://api.test/export")!, statusCode: 200, headerFields: [:]))
        try sink.write(Data("abcd".utf8))
        let resumed = EventLog<Void>()
        #expect(!sink.hasRoom { resumed.append(()) }, "4 bytes wait: the buffer is full")

        #expect(try await channel.nextResult().get() == Data("abcd".utf8))

        // Told once for the chunk, once for the read while paused; room made, so resumed.
        #expect(told.elements == [4, 0])
        #expect(resumed.count == 1)
    }

    @Test func aStaleConnectionsChunksAreRefused() throws {
        let channel = StreamChannel<Data>(decoder: ChunkDecoder(), limit: 100, reconnection: nil)
        let first = channel.makeSink { _ in }
        _ = channel.makeSink { _ in }

        #expect(throws: ServiceError.cancelled) { try first.write(Data("late".utf8)) }
    }

    @Test func aStreamStepIsSixtyFourKibibytesOrATenthOfASecond() {
        var steps = ProgressSteps()
        let told = [
            steps.isStreamStep(10, at: 0),
            steps.isStreamStep(20, at: 50_000_000),
            steps.isStreamStep(30, at: 100_000_000),
            steps.isStreamStep(30 + 64 * 1_024, at: 100_000_001),
        ]
        // The first; not 10 bytes 50 ms later; a tenth of a second later; 64 KiB more.
        #expect(told == [true, false, true, true])
    }
}

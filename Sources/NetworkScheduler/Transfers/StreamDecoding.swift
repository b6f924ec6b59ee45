import Foundation

/// Turns a streamed body, a chunk at a time, into the elements a ``ResponseStream`` yields.
/// One decoder serves a stream across its connections: ``startConnection()`` forgets what a
/// lost connection left half read, and keeps what the next connection needs (an event
/// stream's last event ID).
protocol StreamDecoder<Element>: Sendable {
    associatedtype Element: Sendable

    /// Appends the elements `chunk` completes.
    mutating func decode(_ chunk: Data, into elements: inout [Element]) throws(ServiceError)

    /// The body ended whole: appends what its last bytes complete.
    mutating func finish(into elements: inout [Element])

    /// A new connection starts: drops a partial element, and returns the headers that ask
    /// for the rest.
    mutating func startConnection() -> HeaderFields

    /// Whether a response of `head` carries elements of this kind (an event stream checks its
    /// content type).
    func accepts(_ head: ResponseHead) -> Bool

    /// The seconds the server asked a reconnection to wait, if it did.
    var reconnectionDelay: TimeInterval? { get }

    /// What `element` weighs in the stream's buffer, in bytes.
    func size(of element: Element) -> Int
}

extension StreamDecoder {
    mutating func startConnection() -> HeaderFields { [:] }
    func accepts(_ head: ResponseHead) -> Bool { true }
    var reconnectionDelay: TimeInterval? { nil }
}

/// The body as it comes off the wire.
struct ChunkDecoder: StreamDecoder {
    mutating func decode(_ chunk: Data, into elements: inout [Data]) throws(ServiceError) {
        if !chunk.isEmpty { elements.append(chunk) }
    }

    mutating func finish(into elements: inout [Data]) {}

    func size(of element: Data) -> Int { element.count }
}

/// Lines ended by LF or CRLF (JSON lines), decoded as UTF-8; a last line without its end
/// counts once the body ended whole.
struct LineDecoder: StreamDecoder {
    var lines: LineSplitter

    init(maximumLineLength: Int) {
        lines = LineSplitter(maximumLength: maximumLineLength, endsAtLoneCR: false)
    }

    mutating func decode(_ chunk: Data, into elements: inout [String]) throws(ServiceError) {
        try lines.split(chunk) { elements.append(String($0)) }
    }

    mutating func finish(into elements: inout [String]) {
        if let last = lines.rest() { elements.append(String(last)) }
    }

    mutating func startConnection() -> HeaderFields {
        lines.reset()
        return [:]
    }

    func size(of element: String) -> Int { element.utf8.count }
}

/// Server-sent events. A reconnection asks for what follows the last event it saw with
/// `Last-Event-ID`; an event cut off by the end of the body is dropped, as the standard says.
struct EventDecoder: StreamDecoder {
    var lines: LineSplitter
    var parser: EventStreamParser
    private var isFirstLine = true

    init(maximumEventSize: Int) {
        lines = LineSplitter(maximumLength: maximumEventSize, endsAtLoneCR: true)
        parser = EventStreamParser(maximumEventSize: maximumEventSize)
    }

    mutating func decode(_ chunk: Data, into elements: inout [ServerSentEvent]) throws(ServiceError) {
        try lines.split(chunk) { line throws(ServiceError) in
            var line = line
            if isFirstLine {
                isFirstLine = false
                if line.unicodeScalars.first == "\u{FEFF}" { line = Substring(line.unicodeScalars.dropFirst()) }
            }
            if let event = try parser.read(line: line) { elements.append(event) }
        }
    }

    mutating func finish(into elements: inout [ServerSentEvent]) {}

    mutating func startConnection() -> HeaderFields {
        lines.reset()
        parser.dropPartialEvent()
        isFirstLine = true
        return parser.lastEventID.map { ["Last-Event-ID": $0] } ?? [:]
    }

    var reconnectionDelay: TimeInterval? { parser.retryMilliseconds.map { TimeInterval($0) / 1_000 } }

    func accepts(_ head: ResponseHead) -> Bool {
        // 204 is how a server says "no more": an empty stream, not a wrong one.
        head.statusCode == 204 || head.value(forHTTPHeaderField: "Content-Type")?.lowercased()
            .hasPrefix("text/event-stream") == true
    }

    func size(of element: ServerSentEvent) -> Int { element.data.utf8.count + element.type.utf8.count }
}

/// Splits bytes into UTF-8 lines across chunk boundaries, none longer than a limit, so that a
/// server sending one endless line fails the stream instead of filling memory.
struct LineSplitter: Sendable {
    let maximumLength: Int
    /// Whether a CR alone ends a line (event streams), besides LF and CRLF.
    let endsAtLoneCR: Bool
    /// The bytes of the line not yet ended.
    private var partial = Data()
    /// The last chunk ended with a CR that ended a line: an LF starting the next belongs to it.
    private var afterCR = false

    init(maximumLength: Int, endsAtLoneCR: Bool) {
        self.maximumLength = maximumLength
        self.endsAtLoneCR = endsAtLoneCR
    }

    mutating func reset() {
        partial = Data()
        afterCR = false
    }

    /// Calls `body` with each line `chunk` ends, without its end.
    mutating func split(_ chunk: Data, _ body: (Substring) throws(ServiceError) -> Void) throws(ServiceError) {
        // An empty chunk between a CR and its LF must not forget the CR: the LF would then end
        // an empty line of its own, which ends an event early.
        guard !chunk.isEmpty else { return }
        var start = chunk.startIndex
        if afterCR, chunk.first == 0x0A { start += 1 }
        afterCR = false
        var index = start
        while index < chunk.endIndex {
            let byte = chunk[index]
            guard byte == 0x0A || (endsAtLoneCR && byte == 0x0D) else {
                index += 1
                continue
            }
            var end = index
            index += 1
            if byte == 0x0D {
                if index < chunk.endIndex {
                    if chunk[index] == 0x0A { index += 1 }
                } else {
                    afterCR = true
                }
            } else if !endsAtLoneCR, end > start ? chunk[end - 1] == 0x0D : partial.last == 0x0D {
                // CRLF: the CR is not part of the line.
                if end > start { end -= 1 } else { partial.removeLast() }
            }
            try body(line(partial, chunk[start..<end]))
            partial = Data()
            start = index
        }
        guard partial.count + (chunk.endIndex - start) <= maximumLength else { throw Self.tooLong(maximumLength) }
        partial.append(chunk[start..<chunk.endIndex])
    }

    /// The last line, if the body ended without ending it.
    mutating func rest() -> Substring? {
        defer { reset() }
        guard !partial.isEmpty else { return nil }
        if !endsAtLoneCR, partial.last == 0x0D { partial.removeLast() }
        return Substring(String(decoding: partial, as: UTF8.self))
    }

    private func line(_ head: Data, _ tail: Data) throws(ServiceError) -> Substring {
        guard head.count + tail.count <= maximumLength else { throw Self.tooLong(maximumLength) }
        if head.isEmpty { return Substring(String(decoding: tail, as: UTF8.self)) }
        return Substring(String(decoding: head + tail, as: UTF8.self))
    }

    private static func tooLong(_ limit: Int) -> ServiceError {
        StreamFraming.tooLong("a line", limit: limit)
    }
}

/// The errors of a stream's framing.
enum StreamFraming {
    /// A line or an event longer than `limit` bytes: the server breaks the stream's format.
    static func tooLong(_ what: String, limit: Int) -> ServiceError {
        .badServerResponse(URLError(.badServerResponse, userInfo: [
            NSLocalizedDescriptionKey: "\(what) of the stream was longer than \(limit) bytes"]))
    }
}

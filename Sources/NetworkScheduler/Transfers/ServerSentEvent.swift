import Foundation

/// One event of a `text/event-stream` response, as the HTML standard's event-stream format
/// defines it.
///
/// ```swift
/// for try await event in api.stream(.events("feed/live"), group: screen) {
///     if event.type == "post" { feed.insert(try JSONDecoder().decode(Post.self, from: Data(event.data.utf8))) }
/// }
/// ```
public struct ServerSentEvent: Sendable, Equatable {
    /// Its `event` field: `message` when the server named none.
    public var type: String
    /// Its `data` lines, joined by line feeds.
    public var data: String
    /// The last `id` the stream gave, at this event or before it: what a reconnection sends as
    /// `Last-Event-ID`. Nil while the stream has given none.
    public var id: String?

    /// An event.
    ///
    /// - Parameters:
    ///   - type: its type; `message` by default.
    ///   - data: its data.
    ///   - id: the last event ID, if any.
    public init(type: String = "message", data: String, id: String? = nil) {
        self.type = type
        self.data = data
        self.id = id
    }
}

/// Reads events from an event stream's lines, a line at a time: the standard's parsing rules,
/// within bounds a hostile server cannot stretch. Its last event ID and reconnection time
/// outlive one connection; the event being built does not.
struct EventStreamParser: Sendable {
    /// The most bytes one event's data may hold.
    let maximumEventSize: Int
    /// The last event ID the stream set, as of its last complete event: sent again as
    /// `Last-Event-ID`.
    private(set) var lastEventID: String?
    /// The ID the event being built sets, once complete.
    private var idBuffer: String?
    /// The reconnection time the server asked for with `retry`, in milliseconds.
    private(set) var retryMilliseconds: Int?
    private var type = ""
    private var data = ""
    private var hasData = false

    init(maximumEventSize: Int, lastEventID: String? = nil) {
        self.maximumEventSize = maximumEventSize
        self.lastEventID = lastEventID
        idBuffer = lastEventID
    }

    /// Forgets the event being built: a connection ended in the middle of it.
    mutating func dropPartialEvent() {
        type = ""
        data = ""
        hasData = false
        idBuffer = lastEventID
    }

    /// Reads one line (without its end): returns the event a blank line completes, if any.
    ///
    /// The line is read by its Unicode scalars, as the standard reads it, never by `Character`:
    /// a combining mark after `data:` makes one grapheme with the colon, which a split on
    /// characters did not find (and the event was lost).
    mutating func read(line: Substring) throws(ServiceError) -> ServerSentEvent? {
        let scalars = line.unicodeScalars
        if scalars.isEmpty { return dispatch() }
        if scalars.first == ":" { return nil }
        let field: Substring
        var value: Substring
        if let colon = scalars.firstIndex(of: ":") {
            field = Substring(scalars[..<colon])
            value = Substring(scalars[scalars.index(after: colon)...])
            if value.unicodeScalars.first == " " { value = Substring(value.unicodeScalars.dropFirst()) }
        } else {
            field = line
            value = ""
        }
        switch field {
        case "event":
            type = String(value)
        case "data":
            guard data.utf8.count + value.utf8.count < maximumEventSize else {
                throw StreamFraming.tooLong("an event's data", limit: maximumEventSize)
            }
            if hasData { data += "\n" }
            data += value
            hasData = true
        case "id":
            if !value.unicodeScalars.contains("\0") { idBuffer = value.isEmpty ? nil : String(value) }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { retryMilliseconds = Int(value) ?? Int.max }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        // The ID counts even for an event without data, as the standard says.
        lastEventID = idBuffer
        defer { dropPartialEvent() }
        guard hasData else { return nil }
        return ServerSentEvent(type: type.isEmpty ? "message" : type, data: data, id: lastEventID)
    }
}

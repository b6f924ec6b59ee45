import Foundation

/// An endpoint whose answer is read as it arrives, as a ``ResponseStream``: its body's chunks,
/// its lines, or its server-sent events. See <doc:Streams>.
///
/// ```swift
/// extension StreamResource where Element == ServerSentEvent {
///     static var liveFeed: Self { .events("feed/live") }
/// }
/// for try await event in api.stream(.liveFeed, priority: .high, group: screen) { … }
/// ```
public struct StreamResource<Element: Sendable>: Sendable {
    /// The request: its method, path, query, headers and body, its tags, lane and deadline.
    /// Its ``Resource/timeout`` is the most seconds the stream may go without a byte arriving
    /// or being read (a deadline on stalling, not on the whole stream); nil uses the client's.
    /// A stream is never shared with another caller: it starts where its caller joins.
    public var request: Resource<Void>
    /// The most bytes of elements that may wait for the reader before the transport stops
    /// reading the connection. 1 MiB by default.
    public var bufferSize = 1 << 20
    let makeDecoder: @Sendable () -> any StreamDecoder<Element>
    /// How it reconnects after a lost connection, if it does (event streams).
    let reconnection: StreamReconnection?

    init(request: Resource<Void>, reconnection: StreamReconnection? = nil,
         decoder: @escaping @Sendable () -> any StreamDecoder<Element>) {
        var request = request
        request.deduplication = .disabled
        self.request = request
        self.reconnection = reconnection
        makeDecoder = decoder
    }

    /// The request of a stream: its answer's body is read by the stream, not decoded.
    static func request(_ method: HTTPVerb, _ path: String, query: [URLQueryItem], headers: HeaderFields,
                        body: EndpointBody?, timeout: TimeInterval?) -> Resource<Void> {
        Resource(method, path: path, query: query, headers: headers, body: body, timeout: timeout,
                 deduplication: .disabled, decoding: ResponseDecoding(decode: { _, _ in () }, identity: nil))
    }

    /// This stream with a buffer of `bytes` for its reader to fall behind by.
    ///
    /// - Parameter bytes: the most bytes of elements waiting to be read.
    public func buffering(_ bytes: Int) -> Self {
        var copy = self
        copy.bufferSize = max(1, bytes)
        return copy
    }
}

extension StreamResource where Element == Data {
    /// The body's bytes, a chunk at a time, as the transport reads them.
    ///
    /// A stream that delivered some bytes is not tried again: a lost connection ends it with
    /// its error.
    ///
    /// - Parameters:
    ///   - path: the path below the client's base URL, or an absolute URL on another server.
    ///   - method: the HTTP method; GET by default.
    ///   - query: query items appended to the URL.
    ///   - headers: headers of this endpoint; they override the client's.
    ///   - body: the body, for POST, PUT and PATCH.
    ///   - timeout: the most seconds without a byte arriving or being read; nil uses the client's.
    public static func chunks(_ path: String, method: HTTPVerb = .get, query: [URLQueryItem] = [],
                              headers: HeaderFields = [:], body: EndpointBody? = nil,
                              timeout: TimeInterval? = nil) -> Self {
        StreamResource(request: request(method, path, query: query, headers: headers, body: body, timeout: timeout)) {
            ChunkDecoder()
        }
    }
}

extension StreamResource where Element == String {
    /// The body's lines (JSON lines, logs), ended by LF or CRLF, decoded as UTF-8, without
    /// their ends. A last line without an end counts once the body ended whole; a line longer
    /// than `maximumLineLength` fails the stream with ``ServiceError/badServerResponse(_:)``.
    ///
    /// A stream that delivered some lines is not tried again: a lost connection ends it with
    /// its error.
    ///
    /// - Parameters:
    ///   - path: the path below the client's base URL, or an absolute URL on another server.
    ///   - method: the HTTP method; GET by default.
    ///   - query: query items appended to the URL.
    ///   - headers: headers of this endpoint; they override the client's.
    ///   - body: the body, for POST, PUT and PATCH.
    ///   - timeout: the most seconds without a byte arriving or being read; nil uses the client's.
    ///   - maximumLineLength: the most bytes in one line; 1 MiB by default.
    public static func lines(_ path: String, method: HTTPVerb = .get, query: [URLQueryItem] = [],
                             headers: HeaderFields = [:], body: EndpointBody? = nil,
                             timeout: TimeInterval? = nil, maximumLineLength: Int = 1 << 20) -> Self {
        StreamResource(request: request(method, path, query: query, headers: headers, body: body, timeout: timeout)) {
            LineDecoder(maximumLineLength: maximumLineLength)
        }
    }
}

extension StreamResource where Element == ServerSentEvent {
    /// Server-sent events (`text/event-stream`), with `Accept: text/event-stream`.
    ///
    /// A lost connection, or one silent past `timeout` (send comments as a heartbeat),
    /// reconnects after the server's `retry` or `reconnectionDelay`, with the last event ID it
    /// saw as `Last-Event-ID`, at the stream's priority, in its host's stream line: the reader
    /// sees one sequence. After `maximumReconnections` in a row without an event, or when the
    /// server answers with an error, the stream fails; when it ends its body (or answers 204),
    /// the sequence ends.
    ///
    /// - Parameters:
    ///   - path: the path below the client's base URL, or an absolute URL on another server.
    ///   - query: query items appended to the URL.
    ///   - headers: headers of this endpoint; they override the client's.
    ///   - timeout: the most seconds without a byte arriving or being read; nil uses the client's.
    ///   - reconnectionDelay: seconds before reconnecting when the server sent no `retry`.
    ///   - maximumReconnections: reconnections in a row without an event before failing.
    ///   - maximumEventSize: the most bytes in one line, and in one event's data; 1 MiB by default.
    public static func events(_ path: String, query: [URLQueryItem] = [], headers: HeaderFields = [:],
                              timeout: TimeInterval? = nil, reconnectionDelay: TimeInterval = 3,
                              maximumReconnections: Int = 5, maximumEventSize: Int = 1 << 20) -> Self {
        var headers = headers
        if headers["Accept"] == nil { headers["Accept"] = "text/event-stream" }
        let reconnection = StreamReconnection(delay: max(0, reconnectionDelay), maximumInARow: max(0, maximumReconnections))
        return StreamResource(request: request(.get, path, query: query, headers: headers, body: nil, timeout: timeout),
                              reconnection: reconnection) {
            EventDecoder(maximumEventSize: maximumEventSize)
        }
    }
}

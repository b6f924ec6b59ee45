import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt's request as a transport sends it: the request the scheduler built once, read
/// by its parts (method, URL, headers, timeout, and its body when it is in memory), or as a
/// `URLRequest` by a transport over URLSession, or a body read from a file as it goes out.
///
/// A transport reads what it needs and nothing more: on Linux a `URLRequest` (and the `URL`
/// in it) costs about ten allocations, which a transport with a request type of its own
/// (AsyncHTTPClient's) never pays.
public struct TransportRequest: Sendable {
    /// A body read from a file as it is sent, never whole in memory.
    public struct BodyFile: Sendable, Equatable {
        /// The file.
        public let url: URL
        /// Its size in bytes as the attempt started: the request's `Content-Length`.
        public let length: Int64

        /// The file at `url`, of `length` bytes.
        ///
        /// - Parameters:
        ///   - url: a file URL.
        ///   - length: its size in bytes, sent as `Content-Length`.
        public init(url: URL, length: Int64) {
            self.url = url
            self.length = length
        }
    }

    /// The request as the scheduler built it.
    private(set) var prepared: PreparedRequest
    /// The body read from a file as it is sent, if it is one; the request then has none in
    /// memory.
    public var bodyFile: BodyFile?
    /// Where the response's body goes as it arrives, if not into memory: a download's file, or
    /// a stream's reader.
    /// A transport hands it the head first, as soon as it arrives (a host's probe opens its host
    /// on it), then each chunk, in order, before its completion, whose
    /// ``TransportResponse/data`` is then empty (or the body the sink declined).
    public var responseSink: (any ResponseBodySink)?

    /// A request whose body, if any, is in `urlRequest`, or in `bodyFile`.
    ///
    /// - Parameters:
    ///   - urlRequest: the method, URL, headers, timeout, and a body in memory.
    ///   - bodyFile: a body streamed from a file instead.
    public init(_ urlRequest: URLRequest, bodyFile: BodyFile? = nil) {
        self.init(PreparedRequest(urlRequest), bodyFile: bodyFile)
    }

    /// The request the scheduler built, with its body file for this attempt, if any.
    init(_ prepared: PreparedRequest, bodyFile: BodyFile? = nil) {
        self.prepared = prepared
        self.bodyFile = bodyFile
    }

    /// The method, such as `"GET"`.
    public var method: String { prepared.method }

    /// The absolute URL, as text (which `URL(string:)` accepts).
    public var urlString: String { prepared.urlString ?? "" }

    /// The absolute URL, made on each read.
    public var url: URL? { prepared.url }

    /// The header fields, each name as the request spells it, in the order the request has
    /// them (a request a caller built as a `URLRequest`: ordered by name).
    public var headerFields: HeaderFields { prepared.headerFields }

    /// The value of the header field `name`, whatever its case, or nil.
    ///
    /// - Parameter name: the field's name.
    public func value(forHTTPHeaderField name: String) -> String? { prepared.header(name) }

    /// The body when it is in memory; nil when there is none, or it is in ``bodyFile``.
    public var body: Data? { bodyFile == nil ? prepared.bodyInMemory : nil }

    /// Seconds an attempt may take, from its start to its end.
    public var timeoutInterval: TimeInterval { prepared.timeout }

    /// The request as URLSession takes it, built on each read: method, URL, headers, timeout,
    /// and the body when it is in memory (none when it is in ``bodyFile``). Setting it replaces
    /// the request.
    public var urlRequest: URLRequest {
        get {
            var request = prepared.urlRequest
            if bodyFile != nil { request.httpBody = nil }
            return request
        }
        set { prepared = PreparedRequest(newValue) }
    }

    /// The bytes of its body, or nil when it has none.
    public var bodyLength: Int64? {
        if let bodyFile { return bodyFile.length }
        return body.map { Int64($0.count) }
    }
}

/// Takes a response's body as it arrives, instead of the transport collecting it in memory:
/// a download writes it to its file. Called by one transport task at a time, in order.
public protocol ResponseBodySink: AnyObject, Sendable {
    /// The response's head has arrived: returns whether its body comes here (false leaves it to
    /// the transport, in memory under the size limit: an error's body). Throwing stops the task,
    /// which then fails with the error thrown.
    ///
    /// - Parameter head: the status and headers.
    func accept(_ head: ResponseHead) throws -> Bool

    /// The next bytes of an accepted body. Throwing stops the task, which then fails with the
    /// error thrown.
    ///
    /// - Parameter chunk: the bytes, after any content coding was removed.
    func write(_ chunk: Data) throws

    /// Whether it can take the next chunk now, asked after each write. When it cannot (a
    /// stream's reader is behind), it keeps `resume` and calls it once, on any thread, when it
    /// can (or when it no longer wants any): a transport that can stop reading the connection
    /// reads nothing more until then. One that cannot ignores the answer, and the sink decides
    /// what to do when it is overrun. The default always has room.
    ///
    /// - Parameter resume: what lets the transport read again.
    /// - Returns: true when it has room now (`resume` is then never called).
    func hasRoom(orWhenRoom resume: @escaping @Sendable () -> Void) -> Bool
}

extension ResponseBodySink {
    /// Always has room: a file takes whatever comes.
    ///
    /// - Parameter resume: never called.
    /// - Returns: true.
    public func hasRoom(orWhenRoom resume: @escaping @Sendable () -> Void) -> Bool { true }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler

/// What a ``StubTransport`` does with one request: answer, fail, wait, or never call back.
///
/// ```swift
/// let transport = StubTransport(script: [
///     "POST /v1/posts": [.lostConnection, .json(#"{"id": 7}"#, status: 201)],
///     "GET /v1/feed": [.tooManyRequests(retryAfter: 1), .json("[]")],
/// ])
/// ```
public enum StubResponse: Sendable {
    /// Answers with this status, body and headers.
    case respond(status: Int = 200, body: Data = Data(), headers: HeaderFields = [:])
    /// Fails with a transport error, as a dropped or refused connection does.
    case fail(URLError)
    /// Answers this head and the start of a body, then the connection breaks with `error`: a
    /// download cut short. What the body was written to so far stays written.
    case breaks(status: Int = 200, body: Data, headers: HeaderFields = [:], error: URLError = URLError(.networkConnectionLost))
    /// Holds the request until the test releases it (``StubTransport/release(path:with:)``):
    /// a gate. Cancelling the task ends it with `URLError.cancelled`.
    case hold
    /// Never calls back, not even when its task is cancelled: a transport stuck for good.
    case never
    /// Waits this many seconds of the transport's clock, then does what the second one says.
    indirect case delayed(TimeInterval, StubResponse)
    /// Reports these steps of the body going out (to whoever asked for the request's progress),
    /// then does what `then` says: `.progress(steps, then: .hold)` leaves an upload half sent.
    indirect case progress([TransferProgress], then: StubResponse)
    /// Answers this head, then hands the body over in these chunks, one at a time, as a
    /// streaming server: each waits while the request's sink has no room (a stream's reader is
    /// behind), as a transport that stops reading. Then the body ends, or `then` is done:
    /// `.hold` keeps the stream open until the test releases it, `.lostConnection` cuts it.
    /// A request without a sink, or whose sink declines the body, gets the chunks in memory, as
    /// one body; with a `then`, it gets what `then` does instead, after its head: `.hold` keeps
    /// a plain GET's body coming until the test releases it.
    indirect case streams(status: Int = 200, headers: HeaderFields = [:], chunks: [Data], then: StubResponse? = nil)

    /// A JSON body given as its text (`Content-Type: application/json`): `.json(#"{"id": 7}"#)`.
    /// For a model, see ``json(_:status:headers:encoder:)``.
    ///
    /// - Parameters:
    ///   - text: the JSON text.
    ///   - status: the status; 200 by default.
    ///   - headers: more headers of the answer, such as `Cache-Control` for a cache test; they
    ///     replace the `Content-Type` if they name one.
    public static func json(_ text: String, status: Int = 200, headers: HeaderFields = [:]) -> StubResponse {
        .respond(status: status, body: Data(text.utf8), headers: jsonHeaders(headers))
    }

    /// A model encoded as JSON (`Content-Type: application/json`), as the server would send it.
    ///
    /// ```swift
    /// let transport = StubTransport { _ in .json(User(id: 1, name: "Ada")) }
    /// // An answer a cache may keep for a minute:
    /// let cached = StubTransport { _ in .json(User(id: 1, name: "Ada"), headers: ["Cache-Control": "max-age=60"]) }
    /// ```
    ///
    /// A value the encoder refuses answers 500 with the encoder's error as the server's
    /// message, so that the test fails saying why.
    ///
    /// - Parameters:
    ///   - model: the value to encode.
    ///   - status: the status; 200 by default.
    ///   - headers: more headers of the answer; they replace the `Content-Type` if they name one.
    ///   - encoder: the encoder; a default one unless you pass another.
    public static func json(_ model: some Encodable, status: Int = 200, headers: HeaderFields = [:],
                            encoder: JSONEncoder = JSONEncoder()) -> StubResponse {
        do {
            return .respond(status: status, body: try encoder.encode(model), headers: jsonHeaders(headers))
        } catch {
            return .respond(status: 500, body: (try? JSONEncoder().encode(["message": "StubResponse.json could not encode \(type(of: model)): \(error)"])) ?? Data(),
                            headers: ["Content-Type": "application/json"])
        }
    }

    /// `extra`, with a JSON `Content-Type` unless it names one (in any case).
    private static func jsonHeaders(_ extra: HeaderFields) -> HeaderFields {
        var headers = extra
        if extra["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        return headers
    }

    /// A plain-text body.
    ///
    /// - Parameters:
    ///   - text: the text.
    ///   - status: the status; 200 by default.
    public static func text(_ text: String, status: Int = 200) -> StubResponse {
        .respond(status: status, body: Data(text.utf8), headers: ["Content-Type": "text/plain; charset=utf-8"])
    }

    /// A status with an empty body: `.status(204)`, `.status(503)`.
    ///
    /// - Parameters:
    ///   - status: the status.
    ///   - headers: the response's headers.
    public static func status(_ status: Int, headers: HeaderFields = [:]) -> StubResponse {
        .respond(status: status, headers: headers)
    }

    /// A 5xx with the server's JSON message, as a well-behaved API reports a failure.
    ///
    /// - Parameters:
    ///   - status: the status; 500 by default.
    ///   - message: the server's message, in the body's `message`.
    public static func serverError(_ status: Int = 500, message: String = "Internal error") -> StubResponse {
        .json(#"{"message": "\#(message)"}"#, status: status)
    }

    /// A 429 asking the client to wait `seconds` (`Retry-After`).
    ///
    /// - Parameter seconds: the `Retry-After` value.
    public static func tooManyRequests(retryAfter seconds: Int) -> StubResponse {
        .respond(status: 429, headers: ["Retry-After": String(seconds)])
    }

    /// A 503 asking the client to wait `seconds` (`Retry-After`).
    ///
    /// - Parameter seconds: the `Retry-After` value.
    public static func unavailable(retryAfter seconds: Int) -> StubResponse {
        .respond(status: 503, headers: ["Retry-After": String(seconds)])
    }

    /// A 200 whose JSON is cut short: the client must report an undecodable body.
    public static var malformedJSON: StubResponse { .json(#"{"id": 1, "name": "#) }

    /// An HTML error page, as a proxy or a misconfigured server answers.
    ///
    /// - Parameter status: the status; 502 by default.
    public static func htmlErrorPage(status: Int = 502) -> StubResponse {
        .respond(status: status, body: Data("<html><body><h1>\(status) Bad Gateway</h1></body></html>".utf8),
                 headers: ["Content-Type": "text/html"])
    }

    /// The connection was lost mid-request (`URLError.networkConnectionLost`).
    public static var lostConnection: StubResponse { .fail(URLError(.networkConnectionLost)) }

    /// The server reset the connection: URLSession reports it as a lost connection whose
    /// underlying error is `ECONNRESET`.
    public static var connectionReset: StubResponse {
        .fail(URLError(.networkConnectionLost, userInfo: [NSUnderlyingErrorKey: POSIXError(.ECONNRESET)]))
    }

    /// Nothing listens on the host's port (`URLError.cannotConnectToHost`).
    public static var refused: StubResponse { .fail(URLError(.cannotConnectToHost)) }

    /// The device is offline (`URLError.notConnectedToInternet`).
    public static var offline: StubResponse { .fail(URLError(.notConnectedToInternet)) }

    var isNever: Bool {
        switch self {
        case .never: true
        case .delayed(_, let then): then.isNever
        case .progress(_, let then): then.isNever
        case .streams(_, _, _, let then): then?.isNever ?? false
        default: false
        }
    }

    var isHold: Bool {
        if case .hold = self { true } else { false }
    }
}

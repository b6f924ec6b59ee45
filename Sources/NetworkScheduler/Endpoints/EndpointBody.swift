import Foundation

/// The body of a request, with its content type: a JSON-encoded value or bytes in memory, or
/// an upload read from disk as it is sent (a file, a `multipart/form-data` form with files).
///
/// A value is encoded, and a file measured, when the request is built, so a value that cannot
/// be encoded or a file that cannot be read ends its caller with
/// ``ServiceError/invalidRequest(reason:)`` instead of trapping. An upload's progress reaches
/// callers that ask for it (``TransferProgress``).
///
/// ```swift
/// Resource<Receipt>(.post, path: "sync", body: .json(changes))
/// Resource<Video>(.put, path: "videos/42", body: .file(movieURL, contentType: "video/mp4"))
/// Resource<User>(.post, path: "me/avatar", body: .multipart(form))
/// ```
public struct EndpointBody: Sendable {
    /// The `Content-Type` header sent with the body.
    public let contentType: String
    private let content: Content

    private enum Content: Sendable {
        case encoded(@Sendable () throws -> Data)
        /// A file, and its owner if the scheduler removes it once unneeded.
        case file(URL, owner: TemporaryFile?)
        case multipart(MultipartForm)
    }

    /// Raw bytes, sent as they are.
    ///
    /// - Parameters:
    ///   - data: the bytes to send.
    ///   - contentType: its `Content-Type`.
    public static func data(_ data: Data, contentType: String = "application/octet-stream") -> EndpointBody {
        EndpointBody(contentType: contentType, content: .encoded { data })
    }

    /// A value encoded as JSON, now, by `encoder` as it is now, so that equal values make
    /// equal bodies and two sends of one draft share one call: a `Set` anywhere in the value
    /// is written in one order whatever its storage's (and so is a dictionary written as a list
    /// of pairs), and object members are sorted by key even when the encoder does not sort
    /// them (Foundation's encoder on Linux otherwise writes them in an order that varies from
    /// one encode to the next). The encoder itself, a subclass included, writes every byte
    /// else, and is never changed.
    ///
    /// - Parameters:
    ///   - value: the value to encode.
    ///   - encoder: the encoder; a default one, which sorts keys, unless you pass another.
    ///     One that does not sort keys has its output's members sorted, token by token as it
    ///     wrote them, without the whitespace of `.prettyPrinted`.
    public static func json<Value: Encodable & Sendable>(
        _ value: Value,
        encoder: JSONEncoder = .sortingKeys
    ) -> EndpointBody {
        let encoded = Result { try CanonicalJSON.encode(value, with: encoder) }
        return EndpointBody(contentType: "application/json", content: .encoded { try encoded.get() })
    }

    /// A file, read as each attempt sends it and never whole into memory, with its size as
    /// `Content-Length`. It must be a regular file. It counts in the request's identity by its
    /// content (a SHA-256 digest of it, read once when the request is built), so that two sends
    /// of equal files to the same URL share one call, wherever each file is, and two files of
    /// different content never do.
    ///
    /// - Parameters:
    ///   - url: a file URL.
    ///   - contentType: its `Content-Type`.
    public static func file(_ url: URL, contentType: String = "application/octet-stream") -> EndpointBody {
        EndpointBody(contentType: contentType, content: .file(url, owner: nil))
    }

    /// A file that the scheduler takes over, sent as ``file(_:contentType:)`` sends one and
    /// removed once nothing needs it: not this body, nor any caller, nor a call that may send
    /// it again. For an upload spooled to a temporary file of its own per caller: identical
    /// uploads share one call, sent from the first one's file, which then stays until the call
    /// has ended even if its own caller left.
    ///
    /// - Parameters:
    ///   - url: a file URL, which nothing else removes.
    ///   - contentType: its `Content-Type`.
    public static func temporaryFile(_ url: URL, contentType: String = "application/octet-stream") -> EndpointBody {
        EndpointBody(contentType: contentType, content: .file(url, owner: TemporaryFile(url)))
    }

    /// A `multipart/form-data` form: its fields, and its files read as each attempt sends it.
    ///
    /// - Parameter form: the form.
    public static func multipart(_ form: MultipartForm) -> EndpointBody {
        EndpointBody(contentType: form.contentType, content: .multipart(form))
    }

    private init(contentType: String, content: Content) {
        self.contentType = contentType
        self.content = content
    }

    /// A body encoded by `encode` when the request is built.
    init(contentType: String, encode: @escaping @Sendable () throws -> Data) {
        self.init(contentType: contentType, content: .encoded(encode))
    }

    /// The body as the scheduler keeps it until it is sent.
    func makeBody() throws(ServiceError) -> RequestBody {
        switch content {
        case .encoded(let encode):
            do {
                return .data(try encode())
            } catch {
                throw .invalidRequest(reason: "the body cannot be encoded: \(error)")
            }
        case .file(let url, let owner):
            return try .file(at: url, owner: owner)
        case .multipart(let form):
            return try .multipart(form)
        }
    }
}

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
        case file(URL)
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

    /// A value encoded as JSON, with every object's keys sorted, so that equal values make
    /// equal bodies: two sends of one draft share one call (on Linux, Foundation's encoder
    /// otherwise writes a model's fields in an order that varies from one encode to the next).
    ///
    /// - Parameters:
    ///   - value: the value to encode.
    ///   - encoder: the encoder, as it is when this is called (its strategies are kept; keys
    ///     are sorted whatever its `outputFormatting` says); a default one unless you pass another.
    public static func json<Value: Encodable & Sendable>(
        _ value: Value,
        encoder: JSONEncoder = .sortingKeys
    ) -> EndpointBody {
        let encoder = encoder.sortingKeys()
        return EndpointBody(contentType: "application/json", content: .encoded { try encoder.encode(value) })
    }

    /// A file, read as each attempt sends it and never whole into memory, with its size as
    /// `Content-Length`. It must be a regular file. Two sends of one unchanged file (same path,
    /// size and modification time) to the same URL share one call.
    ///
    /// - Parameters:
    ///   - url: a file URL.
    ///   - contentType: its `Content-Type`.
    public static func file(_ url: URL, contentType: String = "application/octet-stream") -> EndpointBody {
        EndpointBody(contentType: contentType, content: .file(url))
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
        case .file(let url):
            return try .file(at: url)
        case .multipart(let form):
            return try .multipart(form)
        }
    }
}

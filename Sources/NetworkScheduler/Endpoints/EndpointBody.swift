import Foundation

/// The body of a request: a JSON-encoded value or raw bytes, with its content type.
///
/// Encoding happens when the request is built, so a value that cannot be encoded ends its
/// caller with ``ServiceError/invalidRequest(reason:)`` instead of trapping.
public struct EndpointBody: Sendable {
    /// The `Content-Type` header sent with the body.
    public let contentType: String
    let encode: @Sendable () throws -> Data

    /// Raw bytes, sent as they are.
    ///
    /// - Parameters:
    ///   - data: the bytes to send.
    ///   - contentType: its `Content-Type`.
    public static func data(_ data: Data, contentType: String = "application/octet-stream") -> EndpointBody {
        EndpointBody(contentType: contentType, encode: { data })
    }

    /// A value encoded as JSON.
    ///
    /// - Parameters:
    ///   - value: the value to encode.
    ///   - encoder: the encoder; a default one unless you pass another.
    public static func json<Value: Encodable & Sendable>(
        _ value: Value,
        encoder: JSONEncoder = JSONEncoder()
    ) -> EndpointBody {
        EndpointBody(contentType: "application/json", encode: { try encoder.encode(value) })
    }

    func makeData() throws(ServiceError) -> Data {
        do {
            return try encode()
        } catch {
            throw .invalidRequest(reason: "the body cannot be encoded: \(error)")
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a successful response becomes a model.
public struct ResponseDecoding<Model: Sendable>: Sendable {
    let decode: @Sendable (Data, HTTPURLResponse) throws -> Model

    /// Decodes the body with your own closure; a thrown error becomes
    /// ``ServiceError/undecodable(_:)``.
    public static func custom(_ decode: @escaping @Sendable (Data, HTTPURLResponse) throws -> Model) -> Self {
        Self(decode: decode)
    }

    func model(from data: Data, response: HTTPURLResponse) throws(ServiceError) -> Model {
        do {
            return try decode(data, response)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .undecodable(DecodingFailure(modelType: Model.self, error: error, body: data))
        }
    }
}

extension ResponseDecoding where Model: Decodable {
    /// Decodes a JSON body (the default for `Decodable` models).
    public static func json(_ decoder: JSONDecoder = JSONDecoder()) -> Self {
        Self { data, _ in try decoder.decode(Model.self, from: data) }
    }
}

extension ResponseDecoding where Model == Data {
    /// Hands back the body as it arrived: images, files, anything not JSON.
    public static var data: Self { Self { data, _ in data } }
}

extension ResponseDecoding where Model == Void {
    /// Ignores the body: for `204 No Content`, `DELETE` and the like.
    public static var empty: Self { Self { _, _ in () } }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a successful response becomes a model.
///
/// Callers that share a network call and read it the same way (the same model type through
/// the same decoder) share one decode too: 10,000 joiners cost one JSON parse, not 10,000.
public struct ResponseDecoding<Model: Sendable>: Sendable {
    let decode: @Sendable (Data, ResponseHead) throws -> Model
    /// Equal for two decodings that turn the same bytes into the same model; nil when that
    /// cannot be known (a custom closure), so the decode is never shared.
    let identity: DecodingIdentity?

    /// Decodes the body with your own closure; a thrown error becomes
    /// ``ServiceError/undecodable(_:)``.
    ///
    /// - Parameter decode: makes the model from the body and the response; what it throws becomes
    ///   ``ServiceError/undecodable(_:)``.
    public static func custom(_ decode: @escaping @Sendable (Data, HTTPURLResponse) throws -> Model) -> Self {
        Self(decode: { data, head in try decode(data, head.httpResponse) }, identity: nil)
    }

    func model(from data: Data, head: ResponseHead) throws(ServiceError) -> Model {
        do {
            return try decode(data, head)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .undecodable(ServiceError.DecodingFailure(modelType: Model.self, error: error, body: data))
        }
    }

    /// The model, decoded once per call for all the callers that read it the same way.
    func model(from data: Data, head: ResponseHead, sharing decodes: SharedDecodes?) throws(ServiceError) -> Model {
        guard let decodes, let identity else { return try model(from: data, head: head) }
        return try decodes.value(for: identity) { () throws(ServiceError) in try model(from: data, head: head) }
    }
}

extension ResponseDecoding where Model: Decodable {
    /// Decodes a JSON body (the default for `Decodable` models).
    ///
    /// - Parameter decoder: the decoder; a shared default one unless you pass another.
    public static func json(_ decoder: JSONDecoder = .standard) -> Self {
        Self(decode: { data, _ in try decoder.decode(Model.self, from: data) },
             identity: DecodingIdentity(model: Model.self, reader: ObjectIdentifier(decoder)))
    }
}

extension ResponseDecoding where Model == Data {
    /// Hands back the body as it arrived: images, files, anything not JSON.
    public static var data: Self { Self(decode: { data, _ in data }, identity: nil) }
}

extension ResponseDecoding where Model == String {
    /// Reads the body as text, in the charset its `Content-Type` names (UTF-8 if none); bytes
    /// that are not text in it make ``ServiceError/undecodable(_:)``.
    public static var text: Self {
        Self(decode: { data, head in
            let encoding = head.textEncodingName.flatMap(Self.encoding(named:)) ?? .utf8
            guard let text = String(data: data, encoding: encoding) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "The body is not text in \(encoding)."))
            }
            return text
        }, identity: nil)
    }

    /// The encodings servers name in practice; nil for another, read as UTF-8.
    private static func encoding(named name: String) -> String.Encoding? {
        switch name.lowercased() {
        case "utf-8", "utf8": .utf8
        case "utf-16": .utf16
        case "utf-16be": .utf16BigEndian
        case "utf-16le": .utf16LittleEndian
        case "iso-8859-1", "latin1", "iso_8859-1": .isoLatin1
        case "windows-1252", "cp1252": .windowsCP1252
        case "us-ascii", "ascii": .ascii
        default: nil
        }
    }
}

extension ResponseDecoding where Model == Void {
    /// Ignores the body: for `204 No Content`, `DELETE` and the like.
    public static var empty: Self { Self(decode: { _, _ in () }, identity: nil) }
}

extension JSONDecoder {
    /// One decoder with the default settings, shared by every resource that does not bring its
    /// own: making a decoder per request costs time, and sharing one lets joiners share a decode.
    /// Not public: a caller changing its settings would change every resource's.
    @usableFromInline static let standard = JSONDecoder()
}

/// Which model type, read by which decoder.
struct DecodingIdentity: Hashable, Sendable {
    let model: ObjectIdentifier
    let reader: ObjectIdentifier

    init(model: Any.Type, reader: ObjectIdentifier) {
        self.model = ObjectIdentifier(model)
        self.reader = reader
    }
}

/// The decodes made for one shared response, by identity, for the callers that follow.
final class SharedDecodes: Sendable, Equatable {
    private let decoded = Locked<[DecodingIdentity: Result<any Sendable, ServiceError>]>([:])

    func value<Model: Sendable>(
        for identity: DecodingIdentity,
        decode: () throws(ServiceError) -> Model
    ) throws(ServiceError) -> Model {
        if let earlier = decoded.withLock({ $0[identity] }) {
            // The identity includes the model type, so the cast cannot fail.
            if let model = try earlier.get() as? Model { return model }
        }
        let result = Result { () throws(ServiceError) in try decode() }
        decoded.withLock { $0[identity] = result.map { $0 } }
        return try result.get()
    }
}

extension SharedDecodes {
    /// The same cache: shared by the callers of one call.
    static func == (lhs: SharedDecodes, rhs: SharedDecodes) -> Bool { lhs === rhs }
}

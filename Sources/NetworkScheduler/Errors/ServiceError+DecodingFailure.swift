import Foundation

extension ServiceError {
    /// Why a response body could not become the model.
    public struct DecodingFailure: Sendable, Equatable, CustomStringConvertible {
        /// The model type that was asked for.
        public let modelType: String
        /// Where decoding stopped, such as `friends[2].email`; empty at the top level.
        public let codingPath: String
        /// What went wrong there.
        public let reason: String
        /// The start of the body, for logs: enough to tell JSON from an HTML error page.
        public let bodyPrefix: String

        /// A failure with every detail given.
        ///
        /// - Parameters:
        ///   - modelType: the name of the model type being decoded.
        ///   - codingPath: where in the body decoding failed (`friends[2].email`).
        ///   - reason: what was wrong there.
        ///   - bodyPrefix: the start of the body, for the log.
        public init(modelType: String, codingPath: String, reason: String, bodyPrefix: String) {
            self.modelType = modelType
            self.codingPath = codingPath
            self.reason = reason
            self.bodyPrefix = bodyPrefix
        }

        init(modelType: Any.Type, error: any Error, body: Data) {
            let path: [any CodingKey]
            let reason: String
            switch error {
            case DecodingError.keyNotFound(let key, let context):
                path = context.codingPath + [key]
                reason = "missing key"
            case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
                 DecodingError.dataCorrupted(let context):
                path = context.codingPath
                reason = body.isEmpty ? "the body is empty" : context.debugDescription
            default:
                path = []
                reason = String(describing: error)
            }
            self.init(
                modelType: String(describing: modelType),
                codingPath: Self.render(path),
                reason: reason,
                bodyPrefix: String(decoding: body.prefix(120), as: UTF8.self)
            )
        }

        /// The model type, where decoding stopped, and why.
        public var description: String {
            let location = codingPath.isEmpty ? "" : " at \(codingPath)"
            return "\(modelType)\(location): \(reason)"
        }

        private static func render(_ path: [any CodingKey]) -> String {
            var text = ""
            for key in path {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text
        }
    }
}

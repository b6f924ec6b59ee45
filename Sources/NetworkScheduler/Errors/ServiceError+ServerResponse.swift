import Foundation

extension ServiceError {
    /// What the server said when it answered with a status the resource does not accept.
    public struct ServerResponse: Sendable, Equatable {
        /// The HTTP status code.
        public let statusCode: Int
        /// The server's own message, when its JSON body has `message` or `error`
        /// (a string, or an object with a `message`).
        public let message: String?
        /// The raw body, as received.
        public let body: Data
        /// The response's header fields, looked up whatever the case of a name.
        public let headers: HeaderFields

        /// A server error with every detail given.
        ///
        /// - Parameters:
        ///   - statusCode: the status.
        ///   - message: the server's own message, if its body had one.
        ///   - body: the raw body.
        ///   - headers: the response's header fields.
        public init(statusCode: Int, message: String? = nil, body: Data = Data(), headers: HeaderFields = [:]) {
            self.statusCode = statusCode
            self.message = message
            self.body = body
            self.headers = headers
        }

        init(statusCode: Int, body: Data, headers: HeaderFields) {
            self.init(statusCode: statusCode, message: Self.message(in: body), body: body, headers: headers)
        }

        /// The server's message in a JSON error body, or nil for any other body (an HTML page, text).
        static func message(in body: Data) -> String? {
            guard !body.isEmpty,
                  let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
            else { return nil }
            for key in ["message", "error"] {
                if let text = object[key] as? String { return text }
                if let nested = object[key] as? [String: Any], let text = nested["message"] as? String { return text }
            }
            return nil
        }
    }
}

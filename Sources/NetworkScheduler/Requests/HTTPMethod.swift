/// An HTTP request method.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue.uppercased()
    }

    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    public static let get: HTTPMethod = "GET"
    public static let head: HTTPMethod = "HEAD"
    public static let post: HTTPMethod = "POST"
    public static let put: HTTPMethod = "PUT"
    public static let patch: HTTPMethod = "PATCH"
    public static let delete: HTTPMethod = "DELETE"
    public static let options: HTTPMethod = "OPTIONS"

    /// Whether sending the request twice has the effect of sending it once (RFC 9110 §9.2.2).
    public var isIdempotent: Bool {
        [.get, .head, .put, .delete, .options].contains(self)
    }

    /// Whether parameters travel in the query string rather than in a body.
    var sendsParametersInQuery: Bool {
        [.get, .head, .delete].contains(self)
    }
}

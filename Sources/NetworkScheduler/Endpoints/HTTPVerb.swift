/// An HTTP request method.
public struct HTTPVerb: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    /// The method's name, upper-cased.
    public let rawValue: String

    /// A method by name; the name is upper-cased. A name that is not an HTTP token (a space,
    /// a line break) makes every request of that method fail with
    /// ``ServiceError/invalidRequest(reason:)``.
    ///
    /// - Parameter rawValue: the method's name, as sent (checked when the request is built).
    public init(rawValue: String) {
        self.rawValue = rawValue.uppercased()
    }

    /// A method by name, from a string literal.
    ///
    /// - Parameter value: the method's name.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// Reads a resource.
    public static let get: HTTPVerb = "GET"
    /// Reads a resource's headers only.
    public static let head: HTTPVerb = "HEAD"
    /// Creates a resource or submits data.
    public static let post: HTTPVerb = "POST"
    /// Replaces a resource.
    public static let put: HTTPVerb = "PUT"
    /// Changes part of a resource.
    public static let patch: HTTPVerb = "PATCH"
    /// Deletes a resource.
    public static let delete: HTTPVerb = "DELETE"
    /// Asks what a resource supports.
    public static let options: HTTPVerb = "OPTIONS"

    /// Whether sending the request twice has the effect of sending it once (RFC 9110 §9.2.2).
    public var isIdempotent: Bool {
        [.get, .head, .put, .delete, .options].contains(self)
    }

    /// Whether a request of this method may carry a body: any but GET and HEAD (RFC 9110
    /// gives a body of theirs no meaning, and some servers reject it).
    var allowsBody: Bool {
        self != .get && self != .head
    }
}

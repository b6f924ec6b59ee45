import Foundation

/// A `multipart/form-data` body (RFC 7578): fields and files, as a browser's form sends them.
///
/// Files are read as each attempt starts and never held whole in memory: a form with files is
/// written, part by part, to a temporary file that the attempt then streams, and which is
/// removed when the attempt ends. A form of fields and in-memory data is sent from memory.
///
/// ```swift
/// var form = MultipartForm()
/// form.append("Ada", named: "name")
/// form.append(fileAt: photoURL, named: "avatar", contentType: "image/jpeg")
/// let upload = Resource<User>(.post, path: "me/avatar", body: .multipart(form))
/// ```
///
/// A field's name and a file's name are escaped as browsers do (`"`, CR and LF as `%22`,
/// `%0D`, `%0A`), so no name can add a header or a part. A content type with a line break, or
/// a boundary RFC 2046 does not allow, fails the request as
/// ``ServiceError/invalidRequest(reason:)``.
public struct MultipartForm: Sendable, Equatable {
    /// What one part holds.
    enum Content: Sendable, Equatable {
        case data(Data)
        case file(URL)
    }

    /// One part: its header lines, ending with the blank line, and its content.
    struct Part: Sendable, Equatable {
        let head: Data
        let content: Content
    }

    /// The boundary between parts, in the body's `Content-Type`.
    public let boundary: String
    private(set) var parts: [Part] = []
    /// Why the form cannot be sent, if something appended to it cannot be.
    private(set) var invalid: String?

    /// An empty form, with a random boundary unless you give one.
    ///
    /// - Parameter boundary: 1 to 70 characters that RFC 2046 allows (letters, digits and
    ///   `'()+_,-./:=?`, not ending with a space); one that never appears in the content.
    public init(boundary: String = "NetworkScheduler-\(UUID().uuidString)") {
        self.boundary = boundary
        if !Self.isValidBoundary(boundary) { invalid = "the multipart boundary \(boundary.debugDescription) is not one RFC 2046 allows" }
    }

    /// The body's `Content-Type`: `multipart/form-data` with its boundary.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Whether a part is read from a file.
    var hasFiles: Bool { parts.contains { if case .file = $0.content { true } else { false } } }

    /// Appends a text field.
    ///
    /// - Parameters:
    ///   - value: the field's value, sent as UTF-8.
    ///   - name: the field's name.
    public mutating func append(_ value: String, named name: String) {
        append(.data(Data(value.utf8)), named: name, filename: nil, contentType: nil)
    }

    /// Appends bytes in memory, as a file if you give it a name.
    ///
    /// - Parameters:
    ///   - data: the bytes.
    ///   - name: the field's name.
    ///   - filename: the file name the server sees, if it is a file.
    ///   - contentType: the part's `Content-Type`; none unless you give one.
    public mutating func append(_ data: Data, named name: String, filename: String? = nil, contentType: String? = nil) {
        append(.data(data), named: name, filename: filename, contentType: contentType)
    }

    /// Appends a file, read as the request is sent (never whole into memory).
    ///
    /// - Parameters:
    ///   - url: a file URL.
    ///   - name: the field's name.
    ///   - filename: the file name the server sees; the file's own unless you give another.
    ///   - contentType: the part's `Content-Type`.
    public mutating func append(fileAt url: URL, named name: String, filename: String? = nil,
                                contentType: String = "application/octet-stream") {
        append(.file(url), named: name, filename: filename ?? url.lastPathComponent, contentType: contentType)
    }

    private mutating func append(_ content: Content, named name: String, filename: String?, contentType: String?) {
        var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escaped(name))\""
        if let filename { head += "; filename=\"\(Self.escaped(filename))\"" }
        head += "\r\n"
        if let contentType {
            if HTTPSyntax.isFieldValue(contentType) {
                head += "Content-Type: \(contentType)\r\n"
            } else if invalid == nil {
                invalid = "the content type of the multipart part \(name.debugDescription) has a control character"
            }
        }
        head += "\r\n"
        parts.append(Part(head: Data(head.utf8), content: content))
    }

    /// The last line, after every part.
    var closing: Data { Data("--\(boundary)--\r\n".utf8) }

    /// A name as browsers escape it in `Content-Disposition` (WHATWG's form encoding).
    static func escaped(_ name: String) -> String {
        var escaped = ""
        for character in name.unicodeScalars {
            switch character {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// RFC 2046's `boundary`: 1 to 70 of its characters, not ending with a space.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ")
        return (1...70).contains(boundary.count) && boundary.allSatisfy(allowed.contains) && boundary.last != " "
    }
}

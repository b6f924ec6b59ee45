import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response's status and headers, as its transport read them.
///
/// A transport over URLSession hands over the `HTTPURLResponse` it already has; another
/// transport hands over the status and the fields as it read them, in order, and the URL as
/// text: the `URL` and the Foundation type are made only if a caller asks for them (on Linux
/// making them costs more than the scheduler's own work for a request).
public struct ResponseHead: Sendable, Equatable {
    /// The status code.
    public let statusCode: Int
    /// The version of HTTP the answer came over, as its transport told it (`"HTTP/1.1"`,
    /// `"HTTP/2"`, or URLSession's protocol name on Apple platforms, `"h2"`); nil when it did not
    /// say, as URLSession on Linux never does (the scheduler then reads the protocol from the
    /// scheme and the fields). A host's budget follows it: one that answers over HTTP/2 or
    /// HTTP/3 runs many attempts at once (see
    /// ``RequestScheduler/Configuration-swift.struct/multiplexedHostBudget``).
    public let httpVersion: String?
    let location: Location
    private let fields: Fields

    enum Location: Sendable {
        case url(URL)
        case text(String)
    }

    private enum Fields: Sendable {
        case foundation(HTTPURLResponse)
        /// The header fields as they came.
        case read(HeaderFields)
    }

    /// The head of a response URLSession read.
    ///
    /// - Parameters:
    ///   - response: the response.
    ///   - httpVersion: the protocol it came over, if the session told it (its task's metrics'
    ///     `networkProtocolName`, such as `"h2"`).
    public init(_ response: HTTPURLResponse, httpVersion: String? = nil) {
        location = .url(response.url ?? URL(fileURLWithPath: "/"))
        statusCode = response.statusCode
        fields = .foundation(response)
        self.httpVersion = httpVersion
    }

    /// The head of a response read by another transport.
    ///
    /// - Parameters:
    ///   - url: the URL that answered.
    ///   - statusCode: the status code.
    ///   - headerFields: the header fields in the order they came, a repeated name once per value.
    ///   - httpVersion: the version of HTTP it came over, such as `"HTTP/1.1"` or `"HTTP/2"`;
    ///     nil if the transport does not know (the scheduler then reads it from the scheme and
    ///     the fields, as on Linux: see <doc:PlatformNotes>).
    public init(url: URL, statusCode: Int, headerFields: HeaderFields, httpVersion: String? = nil) {
        location = .url(url)
        self.statusCode = statusCode
        fields = .read(headerFields)
        self.httpVersion = httpVersion
    }

    /// The head of a response read by another transport, with its URL as it read it: the
    /// `URL` is parsed only if asked for.
    ///
    /// - Parameters:
    ///   - url: the absolute URL that answered, as text.
    ///   - statusCode: the status code.
    ///   - headerFields: the header fields in the order they came, a repeated name once per value.
    ///   - httpVersion: the version of HTTP it came over, such as `"HTTP/1.1"` or `"HTTP/2"`;
    ///     nil if the transport does not know (the scheduler then reads it from the scheme and
    ///     the fields, as on Linux: see <doc:PlatformNotes>).
    public init(url: String, statusCode: Int, headerFields: HeaderFields, httpVersion: String? = nil) {
        location = .text(url)
        self.statusCode = statusCode
        fields = .read(headerFields)
        self.httpVersion = httpVersion
    }

    /// The URL that answered: the last one, after redirects.
    public var url: URL {
        switch location {
        case .url(let url): url
        case .text(let text): URL(string: text) ?? URL(fileURLWithPath: "/")
        }
    }

    /// The value of the header field `name`, whatever its case, or nil; a repeated field's
    /// values joined with ", ".
    ///
    /// - Parameter name: the field's name.
    public func value(forHTTPHeaderField name: String) -> String? {
        switch fields {
        case .foundation(let response): response.value(forHTTPHeaderField: name)
        case .read(let fields): fields[name]
        }
    }

    /// Every header field: in the order they came, a repeated name once per value, when its
    /// transport read them so; from URLSession's `HTTPURLResponse`, which joins a repeated
    /// name's values with ", ", ordered by name.
    public var headerFields: HeaderFields {
        switch fields {
        case .foundation(let response):
            var dictionary: [String: String] = [:]
            for case let (name as String, value as String) in response.allHeaderFields { dictionary[name] = value }
            return HeaderFields(dictionary)
        case .read(let fields):
            return fields
        }
    }

    /// The `charset` its `Content-Type` names, if any.
    var textEncodingName: String? {
        if case .foundation(let response) = fields { return response.textEncodingName }
        let parameters = value(forHTTPHeaderField: "Content-Type")?.split(separator: ";").dropFirst() ?? []
        for parameter in parameters {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            return pair[1].trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\"")))
        }
        return nil
    }

    /// The head as Foundation's type, built on each call when the transport gave none.
    public var httpResponse: HTTPURLResponse {
        switch fields {
        case .foundation(let response):
            return response
        case .read(let fields):
            let version = httpVersion ?? "HTTP/1.1"
            let headers = fields.dictionary
            // FoundationNetworking makes one for any status (0, 5,000 and -1 tried); should
            // another Foundation refuse one, the caller still gets a response, as a 500.
            return HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: version, headerFields: headers)
                ?? HTTPURLResponse(url: url, statusCode: 500, httpVersion: version, headerFields: headers)!
        }
    }
}

extension ResponseHead {
    /// Whether both have the same URL, status and fields (names compared whatever their
    /// case), whichever transport read them: a repeated name's values are compared joined, as
    /// URLSession gives them.
    public static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.url == rhs.url && lhs.statusCode == rhs.statusCode && lhs.joinedFields == rhs.joinedFields
    }

    private var joinedFields: [String: String] {
        Dictionary(headerFields.dictionary.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response's status and headers, as its transport read them.
///
/// A transport over URLSession hands over the `HTTPURLResponse` it already has; another
/// transport hands over the status and the fields as it read them, in order, and the URL as
/// text: the `URL`, a dictionary of the fields and the Foundation type are made only if a
/// caller asks for them (on Linux making them costs more than the scheduler's own work for a
/// request).
public struct ResponseHead: Sendable, Equatable {
    /// The status code.
    public let statusCode: Int
    private let location: Location
    private let fields: Fields

    private enum Location: Sendable {
        case url(URL)
        case text(String)
    }

    private enum Fields: Sendable {
        case foundation(HTTPURLResponse)
        /// The header fields, a repeated name's values joined with ", ", and the HTTP version.
        case plain([String: String], version: String)
        /// The header fields in the order they came, a repeated name once per value.
        case list([(name: String, value: String)], version: String)
    }

    /// The head of a response URLSession read.
    ///
    /// - Parameter response: the response.
    public init(_ response: HTTPURLResponse) {
        location = .url(response.url ?? URL(fileURLWithPath: "/"))
        statusCode = response.statusCode
        fields = .foundation(response)
    }

    /// The head of a response read by another transport.
    ///
    /// - Parameters:
    ///   - url: the URL that answered.
    ///   - statusCode: the status code.
    ///   - headerFields: the header fields, a repeated name's values joined with ", ".
    ///   - httpVersion: the version of HTTP, such as `"HTTP/1.1"`.
    public init(url: URL, statusCode: Int, headerFields: [String: String], httpVersion: String = "HTTP/1.1") {
        location = .url(url)
        self.statusCode = statusCode
        fields = .plain(headerFields, version: httpVersion)
    }

    /// The head of a response read by another transport, as it read it: nothing is copied
    /// into a dictionary or parsed until asked for.
    ///
    /// - Parameters:
    ///   - url: the absolute URL that answered, as text.
    ///   - statusCode: the status code.
    ///   - fields: the header fields in the order they came, a repeated name once per value.
    ///   - httpVersion: the version of HTTP, such as `"HTTP/1.1"`.
    public init(url: String, statusCode: Int, fields: [(name: String, value: String)], httpVersion: String = "HTTP/1.1") {
        location = .text(url)
        self.statusCode = statusCode
        self.fields = .list(fields, version: httpVersion)
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
        case .foundation(let response):
            return response.value(forHTTPHeaderField: name)
        case .plain(let headers, _):
            return headers.first { HeaderFields.isSameName($0.key, name) }?.value
        case .list(let list, _):
            var found: String?
            for field in list where HeaderFields.isSameName(field.name, name) {
                found = found.map { "\($0), \(field.value)" } ?? field.value
            }
            return found
        }
    }

    /// Every header field: in the order they came, a repeated name once per value, when its
    /// transport read them so; a repeated name's values joined with ", " when it gave a
    /// dictionary (URLSession's `HTTPURLResponse` among them), in no set order.
    public var headerFields: [(name: String, value: String)] {
        switch fields {
        case .foundation(let response):
            return response.allHeaderFields.compactMap { field in
                guard let name = field.key as? String, let value = field.value as? String else { return nil }
                return (name, value)
            }
        case .plain(let headers, _):
            return headers.map { ($0.key, $0.value) }
        case .list(let list, _):
            return list
        }
    }

    /// Every header field, by its name in lower case.
    var lowercasedHeaders: [String: String] {
        var headers: [String: String] = [:]
        switch fields {
        case .foundation(let response):
            for case let (name as String, value as String) in response.allHeaderFields { headers[name.lowercased()] = value }
        case .plain(let fields, _):
            for (name, value) in fields { headers[name.lowercased()] = value }
        case .list(let list, _):
            for (name, value) in list {
                let name = name.lowercased()
                headers[name] = headers[name].map { "\($0), \(value)" } ?? value
            }
        }
        return headers
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
        let headers: [String: String]
        let version: String
        switch fields {
        case .foundation(let response):
            return response
        case .plain(let plain, let plainVersion):
            (headers, version) = (plain, plainVersion)
        case .list(let list, let listVersion):
            var joined: [String: String] = [:]
            for (name, value) in list {
                let spelling = joined.keys.first { HeaderFields.isSameName($0, name) } ?? name
                joined[spelling] = joined[spelling].map { "\($0), \(value)" } ?? value
            }
            (headers, version) = (joined, listVersion)
        }
        // FoundationNetworking makes one for any status (0, 5,000 and -1 tried); should
        // another Foundation refuse one, the caller still gets a response, as a 500.
        return HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: version, headerFields: headers)
            ?? HTTPURLResponse(url: url, statusCode: 500, httpVersion: version, headerFields: headers)!
    }
}

extension ResponseHead {
    /// Whether both have the same URL, status and fields (names compared whatever their
    /// case), whichever transport read them.
    public static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.url == rhs.url && lhs.statusCode == rhs.statusCode && lhs.lowercasedHeaders == rhs.lowercasedHeaders
    }
}

import Foundation
import HTTPTypes
import NetworkScheduler

/// Between swift-http-types' request and response and the library's, in one place: what a
/// generated client asks for becomes a resource's method, URL and fields; what the scheduler
/// answers becomes an `HTTPResponse`.
enum HTTPConversion {
    /// Fields the transport sets itself, from the body it sends and its connection: a
    /// client's value for them would disagree with what goes on the wire.
    static let transportOwnedFields: Set<HTTPField.Name> = [
        .contentLength, .transferEncoding, .connection, .te, .upgrade, HTTPField.Name("Host")!, HTTPField.Name("Keep-Alive")!,
    ]

    /// The request's method as the library names it: any token, not only the common ones.
    static func verb(of request: HTTPRequest) -> HTTPVerb {
        HTTPVerb(rawValue: request.method.rawValue)
    }

    /// The absolute URL of `request`: its path and query (as the generated client encoded
    /// them) after `baseURL`, whose own path is kept.
    static func url(of request: HTTPRequest, baseURL: URL) throws(ServiceError) -> String {
        var base = baseURL.absoluteString
        guard let scheme = baseURL.scheme?.lowercased(), scheme == "http" || scheme == "https", baseURL.host != nil,
              baseURL.query == nil, baseURL.fragment == nil else {
            throw .invalidRequest(reason: "the server URL \(base) is not an http(s) URL without query")
        }
        while base.hasSuffix("/") { base.removeLast() }
        let path = request.path ?? "/"
        guard path.hasPrefix("/") else { throw .invalidRequest(reason: "the request's path \(path) does not start with /") }
        return base + path
    }

    /// The request's fields as a resource's headers, in order, a repeated name once per value,
    /// without the fields the transport owns. `Cookie` is the exception: an HTTP/1.1 request
    /// carries one (RFC 6265 §5.4), its values joined with "; ".
    static func headers(of fields: HTTPFields) -> HeaderFields {
        var headers = HeaderFields()
        for field in fields where !transportOwnedFields.contains(field.name) {
            if field.name == .cookie {
                headers[field.name.rawName] = headers[field.name.rawName].map { $0 + "; " + field.value } ?? field.value
            } else {
                headers.append(name: field.name.rawName, value: field.value)
            }
        }
        return headers
    }

    /// The answer's head as swift-http-types has it: its fields in the order the transport
    /// read them, a repeated name once per value. A field whose name is not a token is left
    /// out; a status outside 100...999 is a broken answer.
    static func response(_ head: ResponseHead) throws(ServiceError) -> HTTPResponse {
        try response(status: head.statusCode, fields: head.headerFields)
    }

    /// An answer the scheduler ended a stream with (``ServiceError/server(_:)``), which a
    /// generated client reads as any other answer.
    static func response(_ answer: ServiceError.ServerResponse) throws(ServiceError) -> HTTPResponse {
        try response(status: answer.statusCode, fields: answer.headers)
    }

    private static func response(status: Int, fields: HeaderFields) throws(ServiceError) -> HTTPResponse {
        guard (100...999).contains(status) else {
            throw .badServerResponse(URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: "status \(status)"]))
        }
        var headerFields = HTTPFields()
        headerFields.reserveCapacity(fields.count)
        for (name, value) in fields {
            guard let name = HTTPField.Name(name) else { continue }
            headerFields.append(HTTPField(name: name, value: value))
        }
        return HTTPResponse(status: .init(code: status), headerFields: headerFields)
    }
}

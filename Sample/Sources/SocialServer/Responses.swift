import Foundation
import Hummingbird

/// How the server writes its answers.
enum Reply {
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        raw(encode(value), status: status, contentType: "application/json")
    }

    static func encode(_ value: some Encodable) -> Data {
        (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
    }

    static func message(_ text: String, status: HTTPResponse.Status) -> Response {
        json(MessageBody(message: text), status: status)
    }

    static func raw(_ body: Data, status: HTTPResponse.Status, contentType: String) -> Response {
        Response(status: status, headers: [.contentType: contentType],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The answer a fault asks for, or nil to answer normally.
    static func faulty(_ fault: Fault) -> Response? {
        if let location = fault.redirectLocation {
            return Response(status: .found, headers: [.location: location, .contentLength: "0"])
        }
        if fault.basicChallenge {
            var response = message("a password is needed", status: .unauthorized)
            response.headers[.wwwAuthenticate] = #"Basic realm="SocialServer""#
            return response
        }
        if let interval = fault.trickleMilliseconds {
            let body = Data(#"{"id": 1, "name": "\#(String(repeating: "a", count: 574))"}"#.utf8)
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: ResponseBody(contentLength: body.count) { writer in
                                for byte in body {
                                    try await writer.write(ByteBuffer(bytes: [byte]))
                                    try await Task.sleep(for: .milliseconds(interval))
                                }
                                try await writer.finish(nil)
                            })
        }
        if let inflated = fault.gzipBombBytes {
            return Response(status: .ok, headers: [.contentType: "application/octet-stream", .contentEncoding: "gzip"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: GzipBomb.zeros(inflated))))
        }
        if fault.closeMidBody {
            // Promise a long body, send a little, then fail: the connection closes mid-body.
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: ResponseBody(contentLength: 4_096) { writer in
                                try await writer.write(ByteBuffer(string: #"{"id": 1, "name": "Ad"#))
                                throw ClosedMidBody()
                            })
        }
        if fault.htmlErrorPage {
            let page = "<html><head><title>Error</title></head><body><h1>Something broke</h1></body></html>"
            return raw(Data(page.utf8), status: HTTPResponse.Status(code: fault.status ?? 500), contentType: "text/html")
        }
        if fault.malformedJSON {
            return raw(Data(#"{"id": 1, "name": "#.utf8), status: .ok, contentType: "application/json")
        }
        if let status = fault.status {
            return message("fault injected: \(status)", status: HTTPResponse.Status(code: status))
        }
        return nil
    }

    private struct ClosedMidBody: Error {}
}

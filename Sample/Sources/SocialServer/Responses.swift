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

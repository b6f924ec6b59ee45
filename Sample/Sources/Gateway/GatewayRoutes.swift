import Foundation
import Hummingbird
import NetworkScheduler
import SocialApp

/// The gateway's one route, and how an upstream failure becomes the client's answer.
struct GatewayRoutes: Sendable {
    let upstream: SocialAPI
    let deadline: TimeInterval

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/profiles/:id") { _, context in
            guard let id = context.parameters.get("id", as: Int.self) else {
                return Self.message("the id is a number", status: .badRequest)
            }
            do {
                let reply = try await upstream.client.reply(for: Resource<User>.user(id).within(deadline))
                var response = Self.json(reply.value)
                if reply.wasShared { response.headers[.init("X-Shared")!] = "true" }
                return response
            } catch {
                return Self.answer(for: ServiceError(error))
            }
        }
        return router
    }

    /// What a client is told when the upstream call failed.
    static func answer(for error: ServiceError) -> Response {
        switch error {
        case .deadlineExceeded:
            return message("the upstream did not answer in time", status: .gatewayTimeout)
        case .server(let upstream) where upstream.statusCode == 404:
            return message(upstream.message ?? "not found", status: .notFound)
        case .server(let upstream) where upstream.statusCode == 429 || upstream.statusCode == 503:
            var response = message("the upstream asked to wait", status: .serviceUnavailable)
            if let retryAfter = upstream.headers["retry-after"] { response.headers[.retryAfter] = retryAfter }
            return response
        default:
            return message("the upstream failed: \(error.caseName)", status: .badGateway)
        }
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let body = (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    private static func message(_ text: String, status: HTTPResponse.Status) -> Response {
        json(["message": text], status: status)
    }
}

import Foundation
import Hummingbird
import NIOCore

/// The request context, keeping the connection so that a fault can reset it: the social API's,
/// and the test servers' that drop connections too.
package struct SocialContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    package let channel: any Channel

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The API's routes: each records its arrival, applies its fault, checks the token, then answers.
struct SocialRoutes: Sendable {
    let store: SocialStore
    let faults: FaultBoard
    let arrivals: ArrivalLog
    let liveFeeds: LiveFeeds
    let caching: CachingBoard

    typealias Context = SocialContext

    func router() -> Router<Context> {
        let router = Router(context: Context.self)
        router.post("/login") { request, context in
            await handle(.login, request, context, authenticated: false) { _ in
                guard let body = try? await request.decode(as: LoginBody.self, context: context) else {
                    return Reply.message("send a JSON body with username and password", status: .badRequest)
                }
                guard let session = await store.login(body) else {
                    return Reply.message("invalid username or password", status: .unauthorized)
                }
                return Reply.json(session)
            }
        }
        router.get("/me") { request, context in
            await handle(.me, request, context) { userID in
                guard let user = await store.user(userID) else { return Reply.message("no such user", status: .notFound) }
                return Reply.cacheable(user, route: .me, request: request, caching: caching)
            }
        }
        router.get("/users/:id") { request, context in
            await handle(.user, request, context) { _ in
                guard let id = context.parameters.get("id", as: Int.self), let user = await store.user(id) else {
                    return Reply.message("no such user", status: .notFound)
                }
                return Reply.cacheable(user, route: .user, request: request, caching: caching)
            }
        }
        router.get("/users/:id/friends") { request, context in
            await handle(.friends, request, context) { _ in
                guard let id = context.parameters.get("id", as: Int.self), let friends = await store.friends(of: id) else {
                    return Reply.message("no such user", status: .notFound)
                }
                return Reply.json(friends)
            }
        }
        router.get("/feed") { request, context in
            await handle(.feed, request, context) { _ in
                let page = request.uri.queryParameters.get("page", as: Int.self) ?? 1
                return Reply.json(await store.feed(page: max(1, page)))
            }
        }
        router.post("/posts") { request, context in
            await handle(.createPost, request, context) { userID in
                guard let body = try? await request.decode(as: PostBody.self, context: context), !body.text.isEmpty else {
                    return Reply.message("send a JSON body with a non-empty text", status: .badRequest)
                }
                guard let key = request.headers[.init("Idempotency-Key")!] else {
                    let (status, data) = await create(body, by: userID)
                    return Reply.raw(data, status: status, contentType: "application/json")
                }
                // The IETF httpapi Idempotency-Key, as Stripe uses it: replay the first answer to
                // a retry; refuse a key that is busy, or reused for another payload.
                switch await store.begin(key: key, user: userID, payload: body.text) {
                case .none:
                    let (status, data) = await create(body, by: userID)
                    await store.finish(key: key, user: userID, payload: body.text, status: Int(status.code), body: data)
                    return Reply.raw(data, status: status, contentType: "application/json")
                case .inProgress(let payload)?:
                    return payload == body.text
                        ? Reply.message("a request with this idempotency key is in progress", status: .conflict)
                        : Reply.message("this idempotency key was used with another payload", status: .unprocessableContent)
                case .completed(let payload, let status, let data)?:
                    guard payload == body.text else {
                        return Reply.message("this idempotency key was used with another payload", status: .unprocessableContent)
                    }
                    return Reply.raw(data, status: HTTPResponse.Status(code: status), contentType: "application/json")
                }
            }
        }
        router.get("/posts/:id") { request, context in
            await handle(.post, request, context) { _ in
                guard let id = context.parameters.get("id", as: Int.self), let post = await store.post(id) else {
                    return Reply.message("no such post", status: .notFound)
                }
                return Reply.cacheable(post, route: .post, request: request, caching: caching)
            }
        }
        router.delete("/posts/:id") { request, context in
            await handle(.deletePost, request, context) { userID in
                guard let id = context.parameters.get("id", as: Int.self) else {
                    return Reply.message("no such post", status: .notFound)
                }
                switch await store.deletePost(id, by: userID) {
                case .some(true): return Response(status: .noContent)
                case .some(false): return Reply.message("not your post", status: .forbidden)
                case .none: return Reply.message("no such post", status: .notFound)
                }
            }
        }
        router.get("/echo") { request, context in
            await handle(.echo, request, context, authenticated: false) { _ in
                var headers: [String: String] = [:]
                for field in request.headers { headers[field.name.canonicalName] = field.value }
                // Cacheable when a test says so: it tells apart who asked, as the cache must.
                return Reply.cacheable(headers, route: .echo, request: request, caching: caching)
            }
        }
        router.post("/echo") { request, context in
            await handle(.echoBody, request, context, authenticated: false) { _ in
                let body = try await request.body.collect(upTo: 1_024 * 1_024)
                return Reply.raw(Data(body.readableBytesView), status: .ok, contentType: "application/json")
            }
        }
        router.put("/me/presence") { request, context in
            await handle(.presence, request, context) { userID in
                guard let body = try? await request.decode(as: PresenceRecord.self, context: context) else {
                    return Reply.message("send a JSON body with a presence", status: .badRequest)
                }
                await store.setPresence(body.presence, of: userID)
                return Reply.json(body)
            }
        }
        addUploadRoutes(to: router)
        addExportRoutes(to: router)
        addLiveFeedRoutes(to: router)
        router.get("/_stats/connections") { _, _ in
            Reply.json(["connections": arrivals.connections])
        }
        router.get("/_stats") { _, _ in
            Reply.json(Stats(counts: Dictionary(uniqueKeysWithValues: arrivals.counts.map { ($0.key.rawValue, $0.value) }),
                             arrivals: arrivals.all))
        }
        return router
    }

    /// Records the arrival, waits and fails as the route's fault says, checks the bearer token
    /// (unless `authenticated` is false), then answers with `respond`.
    func handle(
        _ route: Route,
        _ request: Request,
        _ context: Context,
        authenticated: Bool = true,
        respond: (_ userID: Int) async throws -> Response
    ) async -> Response {
        arrivals.record(route, target: request.uri.description, clientPort: context.channel.remoteAddress?.port,
                        range: request.headers[.range], ifNoneMatch: request.headers[.ifNoneMatch])
        await faults.passGate(route)
        let fault = faults.take(for: route)
        if let latency = fault?.latencyMilliseconds {
            try? await Task.sleep(for: .milliseconds(latency))
        }
        if fault?.resetConnection == true {
            try? await context.channel.close()
            return Response(status: .internalServerError)
        }
        // Read by routes whose fault shapes their body (an export cut short).
        var response = await Fault.$taken.withValue(fault) {
            await answer(route, request, fault: fault, authenticated: authenticated, respond: respond)
        }
        if let seconds = fault?.retryAfterSeconds {
            response.headers[.retryAfter] = "\(seconds)"
        }
        if let cookie = fault?.setCookie {
            response.headers[.setCookie] = cookie
        }
        return response
    }

    private func answer(
        _ route: Route,
        _ request: Request,
        fault: Fault?,
        authenticated: Bool,
        respond: (_ userID: Int) async throws -> Response
    ) async -> Response {
        if let fault, let faulty = Reply.faulty(fault) { return faulty }
        var userID = 0
        if authenticated {
            let header = request.headers[.authorization] ?? ""
            guard header.hasPrefix("Bearer "), let id = await store.userID(forToken: String(header.dropFirst(7))) else {
                return Reply.message("missing or invalid token", status: .unauthorized)
            }
            userID = id
        }
        do {
            return try await respond(userID)
        } catch {
            return Reply.message("internal error: \(error)", status: .internalServerError)
        }
    }
}

extension SocialRoutes {
    /// Creates a post: its status and JSON body.
    fileprivate func create(_ body: PostBody, by userID: Int) async -> (HTTPResponse.Status, Data) {
        switch await store.createPost(by: userID, text: body.text) {
        case .created(let post): return (.created, Reply.encode(post))
        case .duplicate: return (.conflict, Reply.encode(MessageBody(message: "already exists")))
        }
    }
}

/// What `GET /_stats` returns.
public struct Stats: Codable, Sendable {
    /// Arrivals per route, keyed by the route's name (`POST /posts`).
    public let counts: [String: Int]
    /// Every arrival, oldest first.
    public let arrivals: [ArrivalLog.Arrival]
}

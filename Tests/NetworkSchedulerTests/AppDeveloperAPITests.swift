import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerTesting
import Testing

/// What an app developer reaches for: async tasks as dependencies, main-actor delivery, raw
/// bodies, a request adapter, a retry decision of their own.
/// Marks the main queue, to tell that a completion ran there.

@Suite struct AppDeveloperAPITests {
    private struct Session: Decodable, Sendable {
        let token: String
    }

    private struct Failure: Error, Equatable {}

    private static func client(_ transport: StubTransport, retryPolicy: RetryPolicy = .never,
                               tokens: TokenStore = TokenStore()) -> APIClient {
        let scheduler = RequestScheduler { configuration in
            configuration.transport = transport
            configuration.retryPolicy = retryPolicy
        }
        return APIClient(baseURL: URL(string: "https://app.test/v1")!, scheduler: scheduler, bearerToken: { tokens.token })
    }

    // MARK: - Dependencies from async code

    @Test func anAsyncCallerWaitsForAHandleItDependsOn() async throws {
        let transport = StubTransport(script: ["POST /v1/login": [.hold], "GET /v1/me": [.json(userJSON)]])
        let api = Self.client(transport)
        let sessions = EventLog<Result<Session, ServiceError>>()

        let login = api.send(Resource<Session>(.post, path: "login"), priority: .critical) { sessions.append($0) }
        async let profile = api.value(for: Resource<User>(path: "me"), after: [login])
        await transport.arrivals.wait(for: 1)
        #expect(transport.arrivals.elements.map(\.route) == ["POST /v1/login"])
        transport.release(path: "/v1/login", with: .json(#"{"token": "abc"}"#))

        #expect(try await sessions.wait(for: 1).first?.get().token == "abc")
        #expect(try await profile.name == "Ada")
        #expect(transport.arrivals.elements.map(\.route) == ["POST /v1/login", "GET /v1/me"])
    }

    @Test func anAsyncDependentOfAFailedRequestThrowsItsCauseUnsent() async {
        let transport = StubTransport(script: ["POST /v1/login": [.status(403)]])
        let api = Self.client(transport)

        let login = api.send(Resource<Session>(.post, path: "login")) { _ in }

        await #expect(throws: ServiceError.dependencyFailed(cause: .server(ServiceError.ServerResponse(statusCode: 403, body: Data())),
                                                           dependency: login.id)) {
            try await api.value(for: Resource<User>(path: "me"), after: [login])
        }
        #expect(transport.count("GET /v1/me") == 0)
    }

    // MARK: - The main actor

    @MainActor private final class ProfileModel {
        var name: String?

        func load(_ api: APIClient) async {
            // Compiles because `value(for:)` is nonisolated and its model is Sendable: the
            // assignment runs back on the main actor.
            name = try? await api.value(for: Resource<User>(path: "me")).name
        }
    }

    @MainActor @Test func aMainActorModelUpdatesItselfAfterAwaitingItsModel() async {
        let transport = StubTransport { _ in .json(userJSON) }
        let model = ProfileModel()

        await model.load(Self.client(transport))

        #expect(model.name == "Ada")
    }

    // MARK: - A URLRequest of one's own

    @Test func aURLRequestIsSentAsItIsWithTheClientsTokenOnlyOnItsOrigin() async throws {
        let harness = Harness { _ in .json(userJSON) }
        harness.tokens.token = "secret"
        var own = URLRequest(url: URL(string: "https://api.test/v1/users")!, timeoutInterval: 12)
        own.httpMethod = "PUT"
        own.httpBody = Data(#"{"name":"Ada"}"#.utf8)
        own.setValue("application/json", forHTTPHeaderField: "Content-Type")
        own.setValue("7", forHTTPHeaderField: "X-Revision")
        let elsewhere = URLRequest(url: URL(string: "https://cdn.test/avatar.png")!)

        _ = try await harness.api.value(for: Resource<User>(own, decoding: .json()))
        _ = try await harness.api.value(for: Resource(elsewhere, decoding: .data))

        let (first, second) = (harness.transport.arrivals.elements[0].request, harness.transport.arrivals.elements[1].request)
        #expect(first.httpMethod == "PUT")
        #expect(first.url?.absoluteString == "https://api.test/v1/users")
        #expect(first.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(first.value(forHTTPHeaderField: "X-Revision") == "7")
        #expect(first.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(first.timeoutInterval == 12)
        #expect(second.url?.absoluteString == "https://cdn.test/avatar.png")
        #expect(second.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func aURLRequestWithABodyStreamEndsItsCallerUnsent() async {
        let harness = Harness()
        var streamed = URLRequest(url: URL(string: "https://api.test/v1/upload")!)
        streamed.httpMethod = "POST"
        streamed.httpBodyStream = InputStream(data: Data("abc".utf8))

        await #expect {
            try await harness.api.value(for: Resource(streamed, decoding: .data))
        } throws: { error in
            guard case .invalidRequest(let reason) = error as? ServiceError else { return false }
            return reason.contains("httpBodyStream")
        }
        #expect(harness.transport.arrivals.count == 0)
    }

    // MARK: - Raw bodies

    @Test func dataAndStringModelsReadBytesAndTextByDefault() async throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let transport = StubTransport(script: [
            "GET /v1/avatar.png": [.respond(body: png, headers: ["Content-Type": "image/png"])],
            "GET /v1/motd": [.text("Grüße")],
            "GET /v1/legacy": [.respond(body: Data([0x47, 0x72, 0xFC, 0xDF, 0x65]),
                                        headers: ["Content-Type": "text/plain; charset=iso-8859-1"])],
        ])
        let api = Self.client(transport)

        #expect(try await api.value(for: Resource<Data>(path: "avatar.png")) == png)
        #expect(try await api.value(for: Resource<String>(path: "motd")) == "Grüße")
        #expect(try await api.value(for: Resource<String>(path: "legacy")) == "Grüße")
    }

    // MARK: - Adapting each attempt

    @Test func anAdapterSignsEveryAttemptAfterIdenticalRequestsWereMatched() async throws {
        let transport = StubTransport(script: ["GET /v1/me": [.hold]])
        var api = Self.client(transport, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0))
        let signatures = EventLog<Int>()
        // The signature does not depend on the user: the adapter states one identity.
        api.requestAdapter = RequestAdapter(identity: { "device-1" }) { request in
            var request = request
            signatures.append(signatures.count + 1)
            request.setValue("signature-\(signatures.count)", forHTTPHeaderField: "X-Signature")
            return request
        }
        let outcomes = EventLog<Result<User, ServiceError>>()
        for _ in 0..<2 { api.send(Resource<User>(path: "me")) { outcomes.append($0) } }
        await transport.arrivals.wait(for: 1)

        transport.release(path: "/v1/me", with: .status(503))
        await transport.arrivals.wait(for: 2)
        transport.release(path: "/v1/me", with: .json(userJSON))

        #expect(await outcomes.wait(for: 2).compactMap { try? $0.get().name } == ["Ada", "Ada"])
        #expect(transport.arrivals.elements.map { $0.request.value(forHTTPHeaderField: "X-Signature") }
            == ["signature-1", "signature-2"])
    }

    @Test func anAdapterCannotMoveARequestElsewhereNorAddALine() async {
        let transport = StubTransport()
        var elsewhere = Self.client(transport)
        elsewhere.requestAdapter = RequestAdapter { request in
            var request = request
            request.url = URL(string: "https://attacker.test/v1/me")
            return request
        }
        var injecting = Self.client(transport)
        injecting.requestAdapter = RequestAdapter { request in
            var request = request
            request.allHTTPHeaderFields?["X-Trace"] = "a\r\nX-Admin: 1"
            return request
        }
        var throwing = Self.client(transport)
        throwing.requestAdapter = RequestAdapter { _ in throw Failure() }

        await #expect(throws: ServiceError.invalidRequest(reason: "the request adapter moved the request to another origin")) {
            try await elsewhere.value(for: Resource<User>(path: "me"))
        }
        await #expect(throws: ServiceError.invalidRequest(
            reason: "the value of the header X-Trace has a control character, such as a line break")) {
            try await injecting.value(for: Resource<User>(path: "me"))
        }
        await #expect(throws: ServiceError.underlying(ServiceError.UnderlyingError(Failure()))) {
            try await throwing.value(for: Resource<User>(path: "me"))
        }
        #expect(transport.arrivals.count == 0)
    }

    // MARK: - Deciding retries

    @Test func aRetryDecisionRetriesWhatThePolicyPassesOverAndStopsWhatItWouldRetry() async throws {
        let transport = StubTransport(script: [
            "GET /v1/locked": [.status(423), .json(userJSON)],
            "GET /v1/broken": [.status(503), .json(userJSON)],
        ])
        let asked = EventLog<String>()
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0).deciding { attempt in
            asked.append("\(attempt.method) \(attempt.statusCode ?? 0) #\(attempt.attempt)")
            switch attempt.statusCode {
            case 423: return .retry(after: 0)
            case 503: return .doNotRetry
            default: return .usePolicy
            }
        }
        let api = Self.client(transport, retryPolicy: policy)

        #expect(try await api.value(for: Resource<User>(path: "locked")).name == "Ada")
        await #expect(throws: ServiceError.server(ServiceError.ServerResponse(statusCode: 503, body: Data()))) {
            try await api.value(for: Resource<User>(path: "broken"))
        }
        #expect(asked.elements == ["GET 423 #1", "GET 503 #1"])
        #expect(transport.count("GET /v1/locked") == 2)
        #expect(transport.count("GET /v1/broken") == 1)
    }

    // MARK: - Replies from a client

    @Test func aClientSendsForAReply() async throws {
        let transport = StubTransport { _ in .respond(status: 201, body: Data(userJSON.utf8), headers: ["ETag": "v7"]) }
        let api = Self.client(transport)

        let reply = try await api.reply(for: Resource<User>(.post, path: "users"))

        #expect(reply.value.name == "Ada")
        #expect(reply.httpResponse.statusCode == 201)
        #expect(reply.httpResponse.value(forHTTPHeaderField: "ETag") == "v7")
    }

    // MARK: - Events

    @Test func everyEventNamesItsCallersMethodAndURL() async {
        final class Events: RequestEvent.Monitor {
            let log = EventLog<RequestEvent>()
            func record(_ event: RequestEvent) { log.append(event) }
        }
        let events = Events()
        let transport = StubTransport(script: ["GET /v1/me": [.hold]])
        let scheduler = RequestScheduler { configuration in
            configuration.transport = transport
            configuration.eventMonitors = [events]
            configuration.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: 0)
        }
        let api = APIClient(baseURL: URL(string: "https://app.test/v1")!, scheduler: scheduler)
        let first = api.send(Resource<User>(path: "me", query: [URLQueryItem(name: "fields", value: "all")])) { _ in }
        let second = api.send(Resource<User>(path: "me", query: [URLQueryItem(name: "fields", value: "all")])) { _ in }
        await transport.arrivals.wait(for: 1)
        transport.release(path: "/v1/me", with: .status(503))
        await transport.arrivals.wait(for: 2)
        transport.release(path: "/v1/me", with: .json(userJSON))

        let recorded = await events.log.wait(for: 7)
        let me = URL(string: "https://app.test/v1/me")
        var calls: [RequestEvent.Call] = []
        var callers: [RequestEvent.Caller] = []
        for event in recorded {
            switch event {
            case .started(let call, _), .retried(let call, _, _, _): calls.append(call)
            case .enqueued(let caller), .joined(let caller), .succeeded(let caller, _): callers.append(caller)
            default: Issue.record("unexpected \(event)")
            }
        }
        // The first attempt started before the second caller joined; the retry and its attempt
        // name both.
        #expect(calls.map(\.callers) == [[first.id], [first.id, second.id], [first.id, second.id]])
        #expect(calls.allSatisfy { $0.method == "GET" && $0.url == me })
        #expect(callers.prefix(2).map(\.id) == [first.id, second.id])
        #expect(Set(callers.suffix(2).map(\.id)) == [first.id, second.id])
        #expect(callers.allSatisfy { $0.method == "GET" && $0.url == me && $0.priority == .normal })
    }
}

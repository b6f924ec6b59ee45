import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct ErrorMappingTests {
    @Test(arguments: [
        (URLError.Code.notConnectedToInternet, "noConnection"), (.cannotFindHost, "noConnection"),
        (.cannotConnectToHost, "cannotConnect"), (.networkConnectionLost, "connectionLost"),
        (.dnsLookupFailed, "noConnection"), (.timedOut, "timedOut"), (.cancelled, "cancelled"),
        (.badURL, "invalidRequest"), (.unsupportedURL, "invalidRequest"),
        (.badServerResponse, "badServerResponse"), (.secureConnectionFailed, "secureConnectionFailed"),
        (.serverCertificateUntrusted, "secureConnectionFailed"), (.httpTooManyRedirects, "transport"),
    ])
    func urlErrorsMapToWhatACallerCanActOn(code: URLError.Code, expected: String) {
        #expect(ServiceError(URLError(code)).caseName == expected)
    }

    @Test func aTransferClosedMidBodyIsALostConnection() {
        // What FoundationNetworking reports when the server closes the connection mid-body.
        let closed = URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "transfer closed with 4075 bytes remaining to read"])
        #expect(ServiceError(closed).urlError?.code == .networkConnectionLost)
        #expect(ServiceError(closed).caseName == "connectionLost")
        #expect(ServiceError(URLError(.unknown)).caseName == "transport")
        // And when it closes the connection without answering at all.
        let reset = URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: "Empty reply from server"])
        #expect(ServiceError(reset).urlError?.code == .networkConnectionLost)
        #expect(ServiceError(URLError(.badServerResponse)).caseName == "badServerResponse")
        // And when libcurl's own resends on fresh connections all died.
        let died = URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "Connection died, tried 5 times before giving up"])
        #expect(ServiceError(died).urlError?.code == .networkConnectionLost)
    }

    @Test(arguments: ["Send failure: Broken pipe", "Recv failure: Connection reset by peer"])
    func aConnectionResetWhileSendingOrReadingIsALostConnection(message: String) {
        // What FoundationNetworking reported, under code -1, for a POST sent on a kept-alive
        // connection that a restarting server had closed: lost, so a keyed POST is retried.
        let reset = URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: message])
        #expect(ServiceError(reset).urlError?.code == .networkConnectionLost)
        #expect(ServiceError(reset).caseName == "connectionLost")
    }

    @Test func aRefusedConnectionInLibcurlsWordsIsCannotConnect() {
        // What FoundationNetworking reported once, under code -1, while a server restarted.
        let refused = URLError(.unknown, userInfo: [
            NSLocalizedDescriptionKey: "Failed to connect to 127.0.0.1 port 37947 after 0 ms: Couldn't connect to server",
        ])
        #expect(ServiceError(refused).urlError?.code == .cannotConnectToHost)
        #expect(ServiceError(refused).caseName == "cannotConnect")
    }

    @Test func aNonURLErrorIsKeptAsItWasThrown() {
        struct Odd: Error {}
        #expect(ServiceError(Odd()) == .underlying(ServiceError.UnderlyingError(Odd())))
    }

    @Test(arguments: ["Received HTTP/0.9 when not allowed", "Weird server reply"])
    func anUnreadableReplyBlamesTheServerNotTheCaller(message: String) {
        // What libcurl says, under unsupportedURL, of a reply that is not HTTP.
        let garbled = URLError(.unsupportedURL, userInfo: [NSLocalizedDescriptionKey: message])
        #expect(ServiceError(garbled).caseName == "badServerResponse")
    }

    @Test func anErrorPrintsNoHeaderValueBodyOrURL() {
        let response = ServiceError.ServerResponse(statusCode: 500, message: "boom", body: Data(#"{"token": "body-secret"}"#.utf8),
                                           headers: ["set-cookie": "session=cookie-secret", "x-trace": "trace-secret"])
        let lost = URLError(.networkConnectionLost, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "https://h/p?key=url-secret")!])
        let errors: [ServiceError] = [
            .server(response), .idempotencyKeyInUse(response), .authenticationFailed(cause: .server(response)),
            .dependencyFailed(cause: .server(response), dependency: RequestHandle.ID(value: 7)), .connectionLost(lost),
        ]
        for error in errors {
            for text in [String(describing: error), String(reflecting: error), error.localizedDescription,
                         String(describing: Result<Int, ServiceError>.failure(error)), dumped(error)] {
                for secret in ["body-secret", "cookie-secret", "trace-secret", "url-secret"] {
                    #expect(!text.contains(secret), "\(secret) in \(text)")
                }
            }
        }
        #expect(ServiceError.server(response).description.contains("set-cookie"))
        #expect(ServiceError.server(response).unredactedDescription.contains("cookie-secret"))
    }

    @Test func noEventHoldsAHeaderQueryOrBody() async {
        // Given a request with a secret in its query, its token and its body, answered 503
        // with a cookie, retried once, then failed
        final class Events: RequestEvent.Monitor {
            let log = EventLog<RequestEvent>()
            func record(_ event: RequestEvent) { log.append(event) }
        }
        let events = Events()
        let transport = StubTransport { _ in .respond(status: 503, headers: ["Set-Cookie": "session=cookie-secret"]) }
        let scheduler = RequestScheduler { configuration in
            configuration.transport = transport
            configuration.eventMonitors = [events]
            configuration.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: 0)
        }
        let api = APIClient(baseURL: URL(string: "https://user:password-secret@api.test/v1")!, scheduler: scheduler,
                            bearerToken: { "token-secret" })
        let failed = EventLog<ServiceError>()
        api.send(Resource<User>(.put, path: "users", query: [URLQueryItem(name: "key", value: "url-secret")],
                                body: .data(Data("body-secret".utf8), contentType: "text/plain"))) { result in
            if let error = result.failure { failed.append(error) }
        }
        await failed.wait(for: 1)

        // Then every event names the request without them
        let recorded = await events.log.wait(for: 5)
        // In no set order: an event told after the lock is released may come after one told on
        // the thread of an attempt that started meanwhile.
        #expect(recorded.map { String(describing: $0).prefix(while: { $0 != " " }) }.sorted()
            == ["enqueued", "failed", "retried", "started", "started"])
        for event in recorded {
            for text in [String(describing: event), String(reflecting: event)] {
                for secret in ["token-secret", "url-secret", "body-secret", "cookie-secret", "password-secret"] {
                    #expect(!text.contains(secret), "\(secret) in \(text)")
                }
            }
        }
        #expect(recorded.allSatisfy { String(describing: $0).contains("PUT https://api.test/v1/users") })
        let failedCallers = recorded.compactMap { event -> RequestEvent.Caller? in
            if case .failed(let caller, _, _) = event { return caller }
            return nil
        }
        #expect(failedCallers.map(\.url) == [URL(string: "https://api.test/v1/users")])
        #expect(failedCallers.map(\.method) == ["PUT"])
    }

    private func dumped(_ error: ServiceError) -> String {
        var text = ""
        dump(error, to: &text)
        return text
    }

    @Test(arguments: [
        (#"{"message": "already exists"}"#, "already exists"),
        (#"{"error": "invalid token"}"#, "invalid token"),
        (#"{"error": {"message": "quota exceeded", "code": 7}}"#, "quota exceeded"),
    ])
    func aServerErrorCarriesTheServersOwnMessage(body: String, message: String) async {
        let failure = await failure(for: .json(body, status: 409))
        guard case .server(let response)? = failure else {
            Issue.record("expected a server error, got \(String(describing: failure))")
            return
        }
        #expect(response.statusCode == 409)
        #expect(response.message == message)
        #expect(response.body == Data(body.utf8))
        #expect(failure?.localizedDescription.contains(message) == true)
    }

    @Test func anHTMLErrorPageIsAServerErrorWithItsRawBody() async {
        let page = "<html><body><h1>502 Bad Gateway</h1></body></html>"
        let failure = await failure(for: .respond(status: 502, body: Data(page.utf8), headers: ["Content-Type": "text/html"]))
        guard case .server(let response)? = failure else {
            Issue.record("expected a server error, got \(String(describing: failure))")
            return
        }
        #expect(response.statusCode == 502)
        #expect(response.message == nil)
        #expect(String(decoding: response.body, as: UTF8.self) == page)
        #expect(response.headers["content-type"] == "text/html")
    }

    @Test func anHTMLPageWhereJSONWasExpectedIsUndecodable() async {
        let failure = await failure(for: .respond(status: 200, body: Data("<html>login</html>".utf8)))
        guard case .undecodable(let details)? = failure else {
            Issue.record("expected undecodable, got \(String(describing: failure))")
            return
        }
        #expect(details.modelType == "User")
        #expect(details.bodyPrefix == "<html>login</html>")
    }

    @Test func malformedJSONIsUndecodable() async {
        let failure = await failure(for: .json(#"{"id": 1, "name": "Ada""#))
        if case .undecodable = failure {} else { Issue.record("expected undecodable, got \(String(describing: failure))") }
    }

    @Test func anEmptyBodyIsUndecodableAndSaysSo() async {
        let failure = await failure(for: .respond(status: 200))
        guard case .undecodable(let details)? = failure else {
            Issue.record("expected undecodable, got \(String(describing: failure))")
            return
        }
        #expect(details.reason == "the body is empty")
    }

    @Test func aMissingFieldNamesItsCodingPath() async {
        let failure = await failure(for: .json(#"[{"id": 1, "name": "Ada"}, {"id": 2}]"#), resource: Resource<[User]>(path: "users"))
        guard case .undecodable(let details)? = failure else {
            Issue.record("expected undecodable, got \(String(describing: failure))")
            return
        }
        #expect(details.codingPath == "[1].name")
        #expect(details.reason == "missing key")
        #expect(failure?.localizedDescription.contains("[1].name") == true)
    }

    @Test func aWrongTypeNamesItsCodingPath() async {
        let failure = await failure(for: .json(#"{"id": "one", "name": "Ada"}"#))
        guard case .undecodable(let details)? = failure else {
            Issue.record("expected undecodable, got \(String(describing: failure))")
            return
        }
        #expect(details.codingPath == "id")
    }

    @Test func anEmptyResponseNeedsNoBody() async throws {
        let harness = Harness { _ in .respond(status: 204) }
        try await harness.api.value(for: Resource<Void>(.delete, path: "posts/1"))
        #expect(harness.transport.arrivals.elements.first?.request.httpMethod == "DELETE")
    }

    @Test func aCustomDecoderThatThrowsIsUndecodable() async {
        struct Rejected: Error {}
        let harness = Harness()
        let resource = Resource<Int>(path: "n", decoding: .custom { _, _ in throw Rejected() })
        await #expect {
            try await harness.api.value(for: resource)
        } throws: { error in
            if case .undecodable = error as? ServiceError { return true }
            return false
        }
    }

    @Test func everyErrorHasADescriptionAPersonCanRead() {
        let errors: [ServiceError] = [
            .noConnection(URLError(.notConnectedToInternet)), .timedOut, .cancelled,
            .server(ServiceError.ServerResponse(statusCode: 500)), .server(ServiceError.ServerResponse(statusCode: 404, message: "no such user")),
            .undecodable(ServiceError.DecodingFailure(modelType: "User", codingPath: "email", reason: "missing key", bodyPrefix: "{}")),
            .invalidRequest(reason: "the body cannot be encoded"), .dependencyFailed(cause: .timedOut, dependency: RequestHandle.ID(value: 1)),
            .idempotencyKeyInUse(ServiceError.ServerResponse(statusCode: 409)), .idempotencyKeyMismatch(ServiceError.ServerResponse(statusCode: 422)),
            .authenticationFailed(cause: .server(ServiceError.ServerResponse(statusCode: 401))),
            .transport(URLError(.badServerResponse)), .cannotConnect(URLError(.cannotConnectToHost)),
            .connectionLost(URLError(.networkConnectionLost)), .secureConnectionFailed(URLError(.secureConnectionFailed)),
            .badServerResponse(URLError(.badServerResponse)), .responseTooLarge(limit: 1_000),
            .underlying(ServiceError.UnderlyingError(CocoaError(.fileNoSuchFile))),
        ]
        for error in errors {
            let text = error.localizedDescription
            #expect(text.count > 15 && !text.contains("NetworkScheduler.ServiceError"), "\(error): \(text)")
        }
        #expect(ServiceError.server(ServiceError.ServerResponse(statusCode: 500)).localizedDescription.contains("500"))
    }

    private func failure<Model>(for reply: StubResponse, resource: Resource<Model>) async -> ServiceError? {
        let harness = Harness { _ in reply }
        let outcomes = Outcomes<Model>()
        harness.api.send(resource, completion: outcomes.completion("only"))
        return await outcomes.wait(for: 1)["only"]?.failure
    }

    private func failure(for reply: StubResponse) async -> ServiceError? {
        await failure(for: reply, resource: Resource<User>(path: "users/1"))
    }
}

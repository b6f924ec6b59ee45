import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// The default transport, through the real URLSession stack with a URLProtocol stub.
@Suite struct URLSessionTransportTests {
    private func client(host: String, handler: @escaping StubURLProtocol.Handler) -> (APIClient, URLSessionTransport) {
        StubURLProtocol.client(host: host, handler: handler)
    }

    /// Cookies the session kept and added on the wire would tell users apart where
    /// deduplication and the cache cannot see them.
    @Test func itsSessionKeepsAndSetsNoCookiesWhateverItsConfigurationSays() {
        let configuration = URLSessionConfiguration.default
        configuration.httpCookieStorage = HTTPCookieStorage.shared
        configuration.httpShouldSetCookies = true
        for transport in [URLSessionTransport(), URLSessionTransport(configuration: configuration)] {
            #expect(transport.session.configuration.httpCookieStorage == nil)
            #expect(!transport.session.configuration.httpShouldSetCookies)
            #expect(transport.session.configuration.httpCookieAcceptPolicy == .never)
        }
    }

    @Test func aGetIsDecodedFromTheSessionsResponse() async throws {
        let (api, transport) = client(host: "get.urlsession.test") { _, _ in .json(userJSON) }
        defer { transport.invalidate() }
        let response = try await api.reply(for: Resource<User>(path: "users/1"))
        #expect(response.value.name == "Ada")
        #expect(response.statusCode == 200)
        #expect(response.metrics.networkDuration > 0)
    }

    @Test func aPostsBodyReachesTheServer() async throws {
        let received = EventLog<Data>()
        let (api, transport) = client(host: "post.urlsession.test") { _, body in
            received.append(body ?? Data())
            return .json(userJSON, status: 201)
        }
        defer { transport.invalidate() }
        _ = try await api.value(for: Resource<User>(.post, path: "posts", body: .json(NewPost(text: "hello"))))
        #expect(received.elements == [Data(#"{"text":"hello"}"#.utf8)])
    }

    @Test func aServerErrorComesBackTyped() async {
        let (api, transport) = client(host: "error.urlsession.test") { _, _ in .json(#"{"message": "no such user"}"#, status: 404) }
        defer { transport.invalidate() }
        await #expect(throws: ServiceError.server(ServiceError.ServerResponse(
            statusCode: 404, message: "no such user", body: Data(#"{"message": "no such user"}"#.utf8),
            headers: ["content-type": "application/json"]))) {
            try await api.value(for: Resource<User>(path: "users/9"))
        }
    }

    @Test func aRefusedConnectionIsCannotConnect() async {
        let (api, transport) = client(host: "refused.urlsession.test") { _, _ in .fail(URLError(.cannotConnectToHost)) }
        defer { transport.invalidate() }
        await #expect {
            try await api.value(for: Resource<User>(path: "users/1"))
        } throws: { error in
            if case .cannotConnect = error as? ServiceError { return true }
            return false
        }
    }

    @Test func cancellingARunningRequestCancelsTheSessionTask() async {
        let arrived = EventLog<Void>()
        let (api, transport) = client(host: "cancel.urlsession.test") { _, _ in
            arrived.append(())
            return .hold
        }
        defer { transport.invalidate() }
        let task = Task { try await api.value(for: Resource<User>(path: "slow")) }
        await arrived.wait(for: 1)

        task.cancel()

        await #expect(throws: ServiceError.cancelled) { try await task.value }
    }

    @Test(arguments: [(0.5, 1.0), (1.5, 2.0), (2.0, 2.0), (60.0, 60.0)])
    func timeoutsAreWholeSecondsWhereFoundationNetworkingTruncatesThem(asked: Double, sent: Double) {
        var request = URLRequest(url: URL(string: "https://timeout.test")!)
        request.timeoutInterval = asked
        #if canImport(FoundationNetworking)
        #expect(URLSessionTransport.prepared(request).timeoutInterval == sent)
        #else
        #expect(URLSessionTransport.prepared(request).timeoutInterval == asked)
        #endif
    }

    #if canImport(FoundationNetworking)
    @Test func onLinuxATransportsSessionHasNoCache() async throws {
        let cached = StubURLProtocol.configuration(host: "cache.urlsession.test", cached: true) { _, _ in .json(userJSON) }
        let transport = URLSessionTransport(configuration: cached)
        defer { transport.invalidate() }
        #expect(cached.urlCache != nil && transport.session.configuration.urlCache == nil)
        let defaultTransport = URLSessionTransport()
        #expect(defaultTransport.session.configuration.urlCache == nil)

        // It keeps the rest of the configuration: here, the stub that answers.
        let scheduler = RequestScheduler(configuration: .init(transport: transport))
        let api = APIClient(baseURL: URL(string: "https://cache.urlsession.test")!, scheduler: scheduler)
        #expect(try await api.value(for: Resource<User>(path: "users/1")).name == "Ada")
    }

    @Test func aBodyPastTheLimitStopsTheReadAndFailsAsTooLarge() async throws {
        let big = Data(repeating: UInt8(ascii: "a"), count: 64 * 1_024)
        let (api, transport) = client(host: "large.urlsession.test") { _, _ in .respond(body: big) }
        defer { transport.invalidate() }
        await #expect(throws: ServiceError.responseTooLarge(limit: 1_024)) {
            try await api.value(for: Resource<Data>(path: "big", decoding: .data).limitingResponses(to: 1_024))
        }
        #expect(try await api.value(for: Resource<Data>(path: "big", decoding: .data)).count == big.count)
    }

    @Test func aTransportThatIgnoresTheLimitIsCheckedByTheOperation() async {
        let harness = Harness { _ in .respond(body: Data(count: 2_048)) }
        await #expect(throws: ServiceError.responseTooLarge(limit: 1_024)) {
            try await harness.api.value(for: Resource<Data>(path: "big", decoding: .data).limitingResponses(to: 1_024))
        }
    }

    /// FoundationNetworking traps when a task is cancelled during its cache lookup; 200 tasks
    /// cancelled as they start did it every time through a session with a cache.
    @Test func tasksCancelledAsTheyStartEndWithoutTrapping() async {
        let transport = StubURLProtocol.transport(host: "race.urlsession.test", cached: true) { _, _ in .json(userJSON) }
        defer { transport.invalidate() }
        let endings = EventLog<Bool>()
        for index in 0..<200 {
            let task = transport.startTask(for: URLRequest(url: URL(string: "https://race.urlsession.test/\(index)")!)) { result in
                switch result {
                case .success: endings.append(true)
                case .failure(let error): endings.append((error as? URLError)?.code == .cancelled)
                }
            }
            if index.isMultiple(of: 2) { task.cancel() } else { DispatchQueue.global().async { task.cancel() } }
        }

        let ended = await endings.wait(for: 200)
        #expect(ended.count == 200 && ended.allSatisfy { $0 })
    }
    #endif
}

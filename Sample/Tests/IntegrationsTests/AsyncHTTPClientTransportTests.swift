import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
@testable import NetworkSchedulerAsyncHTTPClient
import NetworkSchedulerTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// The AsyncHTTPClient transport against a server on loopback: deadlines, cancellation, the
/// budget, and who shuts the client down. The Sample's suites run it against a real API too.
@Suite struct AsyncHTTPClientTransportTests {
    private static let ok = LoopbackServer.Answer.respond(status: .ok, headers: [("Content-Type", "application/json")], body: "{}")

    /// Runs `body` with a server answering as `answer` says and a client over a transport of
    /// `connections` connections per host; shuts both down afterwards.
    private static func with(
        connections: Int = 8, timeout: TimeInterval = 30,
        answer: @escaping @Sendable (String) -> LoopbackServer.Answer,
        _ body: (LoopbackServer, APIClient) async throws -> Void
    ) async throws {
        let server = try await LoopbackServer.start { answer($0.uri) }
        let transport = AsyncHTTPClientTransport(maximumConnectionsPerHost: connections)
        let scheduler = RequestScheduler {
            $0.transport = transport
            $0.retryPolicy = .never
        }
        let api = APIClient(baseURL: server.baseURL, scheduler: scheduler, timeout: timeout)
        do {
            try await body(server, api)
        } catch {
            try await transport.shutdown()
            await server.stop()
            throw error
        }
        try await transport.shutdown()
        await server.stop()
    }

    @Test func aReplyCarriesTheHeadTheServerSentAndFoundationsResponseWhenAsked() async throws {
        let answer = LoopbackServer.Answer.respond(status: .created, headers: [("Content-Type", "text/plain; charset=utf-8"),
                                                                              ("ETag", "\"v7\""), ("Vary", "Accept"), ("Vary", "Cookie")],
                                                   body: "hello")
        try await Self.with(answer: { _ in answer }) { _, api in
            let reply = try await api.reply(for: Resource<String>(path: "note", decoding: .text))
            #expect(reply.value == "hello")
            #expect(reply.statusCode == 201)
            #expect(reply.head.value(forHTTPHeaderField: "etag") == "\"v7\"")
            // A repeated field arrives as one value, as URLSession reads it.
            #expect(reply.head.value(forHTTPHeaderField: "vary") == "Accept, Cookie")
            #expect(reply.httpResponse.statusCode == 201)
            #expect(reply.httpResponse.value(forHTTPHeaderField: "ETag") == "\"v7\"")
        }
    }

    @Test func aDeadlineUnderASecondEndsAHeldRequestAndClosesItsConnection() async throws {
        try await Self.with(timeout: 0.3, answer: { _ in .hold }) { server, api in
            await #expect(throws: ServiceError.timedOut) {
                try await api.value(for: Resource<Data>(path: "held"))
            }
            #expect(await server.closed.wait(for: 1, timeout: 10).count == 1)
        }
    }

    /// What the scheduler does with an answer must not hold up the loop that reads the
    /// connection's other answers: the transport completes answers and failures off its loops.
    @Test func completionsArriveOffTheClientsEventLoops() async throws {
        let server = try await LoopbackServer.start { head in head.uri.hasSuffix("held") ? .hold : Self.ok }
        let transport = AsyncHTTPClientTransport()
        var held = URLRequest(url: server.baseURL.appendingPathComponent("held"))
        held.timeoutInterval = 0.3
        let onALoop = EventLog<Bool>()

        for request in [URLRequest(url: server.baseURL.appendingPathComponent("ok")), held] {
            _ = transport.startTask(for: request, policy: TransportPolicy()) { _ in
                onALoop.append(MultiThreadedEventLoopGroup.currentEventLoop != nil)
            }
        }

        #expect(await onALoop.wait(for: 2, timeout: 10) == [false, false])
        try await transport.shutdown()
        await server.stop()
    }

    @Test func theTransportEndsARequestAtItsOwnDeadlineWithoutTheScheduler() async throws {
        let server = try await LoopbackServer.start { _ in .hold }
        let transport = AsyncHTTPClientTransport()
        var request = URLRequest(url: server.baseURL.appendingPathComponent("held"))
        request.timeoutInterval = 0.3
        let outcome = EventLog<Result<TransportResponse, any Error>>()

        _ = transport.startTask(for: request, policy: TransportPolicy()) { outcome.append($0) }

        let error = await outcome.wait(for: 1, timeout: 10).first.flatMap { result -> URLError? in
            if case .failure(let error) = result { return error as? URLError }
            return nil
        }
        #expect(error?.code == .timedOut)
        try await transport.shutdown()
        await server.stop()
    }

    @Test func cancellingTheOnlyCallerStopsTheRequestOnTheWire() async throws {
        try await Self.with(answer: { _ in .hold }) { server, api in
            let outcome = EventLog<Result<Data, ServiceError>>()
            let handle = api.send(Resource<Data>(path: "held")) { outcome.append($0) }
            #expect(await server.requests.wait(for: 1, timeout: 10).count == 1)

            handle.cancel()

            #expect(await outcome.wait(for: 1, timeout: 10).first.map { (try? $0.get()) == nil } == true)
            #expect(await server.closed.wait(for: 1, timeout: 10).count == 1)
        }
    }

    @Test func noMoreConnectionsOpenThanTheBudget() async throws {
        try await Self.with(connections: 2, answer: { _ in Self.ok }) { server, api in
            let done = EventLog<Result<Data, ServiceError>>()
            for index in 0..<40 {
                api.send(Resource<Data>(path: "items/\(index)")) { done.append($0) }
            }
            let outcomes = await done.wait(for: 40, timeout: 30)

            #expect(outcomes.count == 40)
            #expect(outcomes.allSatisfy { (try? $0.get()) != nil })
            #expect(server.requests.count == 40)
            #expect(server.mostOpenAtOnce <= 2)
            #expect(server.opened.count <= 2)
        }
    }

    @Test func aTransportThatOwnsItsClientShutsItDownEvenWhenForgotten() async throws {
        let server = try await LoopbackServer.start { _ in Self.ok }
        do {
            let transport = AsyncHTTPClientTransport()
            let scheduler = RequestScheduler { $0.transport = transport }
            let api = APIClient(baseURL: server.baseURL, scheduler: scheduler)
            _ = try await api.value(for: Resource<Data>(path: "me"))
        }
        // A client deinitialised without a shutdown traps in a debug build: this one was shut
        // down by the transport's deinit, and its connection closes.
        #expect(await server.closed.wait(for: 1, timeout: 10).count == 1)
        await server.stop()
    }

    @Test func aClientYouGiveIsLeftRunningForYouToShutDown() async throws {
        let server = try await LoopbackServer.start { _ in Self.ok }
        let client = HTTPClient(eventLoopGroupProvider: .singleton,
                                configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
        let transport = AsyncHTTPClientTransport(client: client)
        try await transport.shutdown()

        let response = try await client.execute(HTTPClientRequest(url: server.baseURL.absoluteString + "/me"), timeout: .seconds(10))

        #expect(response.status == .ok)
        try await client.shutdown()
        await server.stop()
    }

    @Test(arguments: [
        (HTTPClientError.readTimeout, URLError.Code.timedOut),
        (.deadlineExceeded, .timedOut),
        (.remoteConnectionClosed, .networkConnectionLost),
        (.connectTimeout, .cannotConnectToHost),
        (.cancelled, .cancelled),
        (.invalidURL, .badURL),
    ])
    func clientErrorsBecomeTheURLErrorsTheLibraryMaps(_ error: HTTPClientError, _ code: URLError.Code) {
        #expect((AsyncHTTPClientTransport.mapped(error, limit: 1) as? URLError)?.code == code)
    }

    @Test func aResponseCutShortIsALostConnectionAndAGarbledOneABadResponse() {
        let cutShort = AsyncHTTPClientTransport.mapped(HTTPParserError.invalidEOFState, limit: 1)
        let garbled = AsyncHTTPClientTransport.mapped(HTTPParserError.invalidHeaderToken, limit: 1)

        #expect((cutShort as? URLError)?.code == .networkConnectionLost)
        #expect((garbled as? URLError)?.code == .badServerResponse)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import NetworkScheduler
@testable import NetworkSchedulerOpenAPI
import NetworkSchedulerTesting
import OpenAPIRuntime
import Testing

/// The OpenAPI transport's conversions between swift-http-types and the library, its scopes,
/// and its requests as they reach a stub transport.
@Suite struct OpenAPITransportTests {
    private static let base = URL(string: "https://api.test/v1")!

    private static func transport(_ stub: StubTransport) -> SchedulerClientTransport {
        let scheduler = RequestScheduler { $0.transport = stub }
        return SchedulerClientTransport(client: APIClient(baseURL: base, scheduler: scheduler, bearerToken: { "secret" }))
    }

    @Test func repeatedRequestFieldsKeepTheirOrderCookiesAreJoinedAndTheTransportsOwnAreDropped() {
        let fields: HTTPFields = [
            .accept: "application/json", .init("X-Trace")!: "a", .cookie: "a=1", .init("x-trace")!: "b",
            .cookie: "b=2", .contentLength: "12", .transferEncoding: "chunked", .connection: "close",
        ]

        let headers = HTTPConversion.headers(of: fields)

        #expect(headers.values(for: "X-Trace") == ["a", "b"])
        #expect(headers == ["Accept": "application/json", "X-Trace": "a", "Cookie": "a=1; b=2", "x-trace": "b"])
    }

    @Test func anAnswersFieldsKeepTheirOrderAndRepeatedNames() throws {
        let head = ResponseHead(url: "https://api.test/v1/me", statusCode: 201, headerFields: HeaderFields([
            (name: "Set-Cookie", value: "a=1"), (name: "Content-Type", value: "application/json"),
            (name: "Set-Cookie", value: "b=2"), (name: "bad name", value: "x"),
        ]))

        let response = try HTTPConversion.response(head)

        #expect(response.status.code == 201)
        #expect(response.headerFields.map { "\($0.name): \($0.value)" } == [
            "Set-Cookie: a=1", "Content-Type: application/json", "Set-Cookie: b=2",
        ])
    }

    @Test func aStatusOutsideWhatHTTPAllowsIsABrokenAnswer() {
        let head = ResponseHead(url: "https://api.test/v1/me", statusCode: 1_200, headerFields: [:])

        let error = #expect(throws: ServiceError.self) { try HTTPConversion.response(head) }
        guard case .badServerResponse? = error else {
            Issue.record("expected .badServerResponse, got \(String(describing: error))"); return
        }
    }

    @Test func theURLJoinsTheServersPathAndTheRequestsPathAndQuery() throws {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/users/2?fields=name%2Cemail")

        #expect(try HTTPConversion.url(of: request, baseURL: URL(string: "https://api.test/v1/")!)
            == "https://api.test/v1/users/2?fields=name%2Cemail")
        let error = #expect(throws: ServiceError.self) {
            try HTTPConversion.url(of: request, baseURL: URL(string: "ftp://api.test/v1")!)
        }
        guard case .invalidRequest? = error else {
            Issue.record("expected .invalidRequest, got \(String(describing: error))"); return
        }
    }

    @Test func anAnswerIsStreamedWhenOnlyStreamedKindsAreAccepted() {
        func asks(_ accept: String) -> Bool {
            SchedulerClientTransport.asksForAStream(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/",
                                                                headerFields: [.accept: accept]))
        }
        #expect(asks("application/octet-stream"))
        #expect(asks("text/event-stream; q=1, application/jsonl"))
        #expect(!asks("application/json"))
        #expect(!asks("application/octet-stream, application/json"))
    }

    @Test func anInnerScopeKeepsWhatItDoesNotSetAndTheDefaultsFillTheRest() async {
        let screen = RequestGroup()
        let defaults = SchedulingOptions(priority: .low, cachePolicy: .reload, tags: ["default"])

        let options = await withScheduling(priority: .high, group: screen, tags: ["outer"]) {
            await withScheduling(priority: .critical, within: 5, tags: ["inner"]) {
                defaults.overridden(by: SchedulingScope.current)
            }
        }

        #expect(options.priority == .critical)
        #expect(options.group === screen)
        #expect(options.deadline == 5)
        #expect(options.cachePolicy == .reload)
        #expect(options.tags == ["default", "outer", "inner"])
        #expect(defaults.overridden(by: SchedulingScope.current).priority == .low)
    }

    @Test func aMethodBeyondTheCommonOnesReachesTheServerAsItIs() async throws {
        let stub = StubTransport { _ in .json(#"{"ok": true}"#, status: 207) }

        let (response, body) = try await Self.transport(stub).send(
            HTTPRequest(method: HTTPRequest.Method("PROPFIND")!, scheme: nil, authority: nil, path: "/files",
                        headerFields: [.init("Depth")!: "1"]),
            body: nil, baseURL: Self.base, operationID: "listFiles")

        let arrival = try #require(await stub.arrivals.wait(for: 1).first)
        #expect(arrival.route == "PROPFIND /v1/files")
        #expect(arrival.request.value(forHTTPHeaderField: "Depth") == "1")
        #expect(response.status.code == 207)
        #expect(try await String(collecting: #require(body), upTo: 100) == #"{"ok": true}"#)
    }

    @Test func theClientsTokenGoesToItsOwnOriginOnly() async throws {
        let stub = StubTransport { _ in .json("{}") }
        let transport = Self.transport(stub)
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/me")

        _ = try await transport.send(request, body: nil, baseURL: Self.base, operationID: "getMe")
        _ = try await transport.send(request, body: nil, baseURL: URL(string: "https://elsewhere.test")!, operationID: "getMe")

        let arrivals = await stub.arrivals.wait(for: 2)
        #expect(arrivals.map { $0.request.value(forHTTPHeaderField: "Authorization") } == ["Bearer secret", nil])
    }

    @Test func aBodyOfUnknownLengthIsSentFromAFileItWasWrittenTo() async throws {
        let stub = StubTransport { _ in .json("{}") }
        let (stream, writer) = AsyncStream<ArraySlice<UInt8>>.makeStream()
        for part in ["first ", "second"] { writer.yield(ArraySlice(part.utf8)) }
        writer.finish()

        _ = try await Self.transport(stub).send(
            HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/uploads", headerFields: [.contentType: "text/plain"]),
            body: HTTPBody(stream, length: .unknown), baseURL: Self.base, operationID: "upload")

        let arrival = try #require(await stub.arrivals.wait(for: 1).first)
        let file = try #require(arrival.bodyFile)
        #expect(arrival.request.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(file.length == 12)
        #expect(arrival.body == Data("first second".utf8))
        #expect(!FileManager.default.fileExists(atPath: file.url.path), "the spooled body outlived its call")
    }
}

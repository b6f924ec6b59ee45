import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// What a caller, a token provider or a client's defaults give is checked where it enters:
/// nothing that could add a header line, rewrite the request line, leave the base path or
/// use another scheme reaches the transport.
@Suite struct InputValidationTests {
    /// Sends `resource` through a client of `https://api.test/v1` and returns its error, if
    /// any, and what reached the stub.
    private func send(
        _ resource: Resource<Void>,
        token: String? = nil,
        defaultHeaders: HeaderFields = ["Accept": "application/json"]
    ) async -> (error: ServiceError?, arrivals: [StubTransport.Arrival]) {
        let transport = StubTransport { _ in .respond() }
        let scheduler = RequestScheduler(configuration: .init(transport: transport, retryPolicy: .never))
        let api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler,
                            defaultHeaders: defaultHeaders, bearerToken: { token })
        do throws(ServiceError) {
            try await api.value(for: resource)
            return (nil, transport.arrivals.elements)
        } catch {
            return (error, transport.arrivals.elements)
        }
    }

    private static func isInvalidRequest(_ error: ServiceError?) -> Bool {
        if case .invalidRequest? = error { return true }
        return false
    }

    @Test(arguments: [
        ["X-Note": "a\r\nX-Injected: 1"], ["X-Note": "a\nb"], ["X-Note": "a\u{0}b"],
        ["X-Bad Name": "a"], ["X-Bad:Name": "a"], ["X-Bad\r\nName": "a"], ["": "a"],
    ])
    func aResourceHeaderThatCouldAddLinesIsRefused(headers: HeaderFields) async {
        let (error, arrivals) = await send(Resource(path: "echo", headers: headers))
        #expect(Self.isInvalidRequest(error), "\(String(describing: error))")
        #expect(arrivals.isEmpty)
    }

    @Test func aTokenWithALineBreakIsRefusedWithoutShowingIt() async {
        let (error, arrivals) = await send(Resource(path: "echo"), token: "t0k3n\r\nX-Admin: yes")
        #expect(Self.isInvalidRequest(error))
        #expect(!(error?.localizedDescription.contains("t0k3n") ?? true))
        #expect(arrivals.isEmpty)
    }

    @Test func aDefaultHeaderWithALineBreakIsRefused() async {
        let (error, arrivals) = await send(Resource(path: "echo"), defaultHeaders: ["X-App": "1\r\nX-Injected: 1"])
        #expect(Self.isInvalidRequest(error))
        #expect(arrivals.isEmpty)
    }

    @Test(arguments: ["GET /admin HTTP/1.1\r\nX:", "GE T", "PO\nST", ""])
    func aMethodThatIsNotATokenIsRefused(method: String) async {
        let (error, arrivals) = await send(Resource(HTTPVerb(rawValue: method), path: "echo"))
        #expect(Self.isInvalidRequest(error))
        #expect(arrivals.isEmpty)
    }

    @Test func aURLRequestIsCheckedTheSameWay() async {
        let transport = StubTransport { _ in .respond() }
        let scheduler = RequestScheduler(configuration: .init(transport: transport, retryPolicy: .never))
        let api = APIClient(baseURL: URL(string: "https://api.test")!, scheduler: scheduler)
        // (URLRequest.setValue drops a value with a line break by itself; its method it keeps.)
        var injected = URLRequest(url: URL(string: "https://api.test/echo")!)
        injected.httpMethod = "GET /admin HTTP/1.1\r\nX:"
        var ftp = URLRequest(url: URL(string: "ftp://api.test/file")!)
        ftp.httpMethod = "GET"
        for request in [injected, ftp] {
            await #expect {
                try await api.value(for: Resource(request, decoding: .data))
            } throws: { Self.isInvalidRequest($0 as? ServiceError) }
        }
        #expect(transport.arrivals.count == 0)
    }

    @Test(arguments: ["echo/../../../admin", "../admin", "a/../../admin", "%2e%2e/admin", "a/%2E%2e/../admin", "./../x"])
    func aPathThatClimbsAboveTheBasePathIsRefused(path: String) async {
        let (error, arrivals) = await send(Resource(path: path))
        #expect(Self.isInvalidRequest(error), "\(String(describing: error))")
        #expect(arrivals.isEmpty)
    }

    @Test(arguments: [
        ("a/../b", "/v1/b"), ("a/./b", "/v1/a/b"), ("files/a%2Fb", "/v1/files/a%2Fb"),
        ("files/100%25", "/v1/files/100%25"), ("files/50%", "/v1/files/50%25"), ("files/a b", "/v1/files/a%20b"),
        ("files/a/..", "/v1/files/"),
    ])
    func dotSegmentsResolveWithinTheBasePathAndEscapesAreKept(path: String, expected: String) async throws {
        let (error, arrivals) = await send(Resource(path: path))
        #expect(error == nil)
        let url = try #require(arrivals.first?.request.url)
        #expect(url.absoluteString == "https://api.test" + expected)
    }

    @Test(arguments: ["ftp://api.test/file", "file:///etc/passwd", "gopher://api.test/x"])
    func onlyHTTPAndHTTPSAreSent(path: String) async {
        let (error, arrivals) = await send(Resource(path: path))
        #expect(Self.isInvalidRequest(error), "\(String(describing: error))")
        #expect(arrivals.isEmpty)
    }

    @Test func aDeleteMayCarryABodyButAGetOrHeadMayNot() async {
        let body = EndpointBody.json(["reason": "spam"])
        #expect(await send(Resource(.delete, path: "posts/1", body: body)).error == nil)
        #expect(Self.isInvalidRequest(await send(Resource(.get, path: "posts/1", body: body)).error))
        #expect(Self.isInvalidRequest(await send(Resource(.head, path: "posts/1", body: body)).error))
    }

    @Test func theTokenAndDefaultHeadersGoToTheClientsOwnOriginOnly() async throws {
        let headers: HeaderFields = ["Accept": "application/json", "X-Api-Key": "client-secret"]
        let (_, elsewhere) = await send(Resource(path: "https://cdn.test/image.png"), token: "t0k3n", defaultHeaders: headers)
        let (_, otherPort) = await send(Resource(path: "https://api.test:8443/v1/me"), token: "t0k3n", defaultHeaders: headers)
        let (_, own) = await send(Resource(path: "https://api.test/v2/me"), token: "t0k3n", defaultHeaders: headers)
        for request in [elsewhere, otherPort].compactMap(\.first?.request) {
            #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
            #expect(request.value(forHTTPHeaderField: "X-Api-Key") == nil)
        }
        let ownRequest = try #require(own.first?.request)
        #expect(ownRequest.value(forHTTPHeaderField: "Authorization") == "Bearer t0k3n")
        #expect(ownRequest.value(forHTTPHeaderField: "X-Api-Key") == "client-secret")
    }
}

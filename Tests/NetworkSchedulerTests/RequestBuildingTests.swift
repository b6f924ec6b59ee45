import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct RequestBuildingTests {
    private let scheduler = RequestScheduler(configuration: .init(transport: StubTransport()))

    fileprivate func client(_ base: String = "https://api.test/v1", token: String? = nil) -> APIClient {
        APIClient(baseURL: URL(string: base)!, scheduler: scheduler, bearerToken: { token })
    }

    /// The quick path as a client takes it: its base checked once, then each path joined to it.
    private func quickURL(base: String, path: String, query: [URLQueryItem]) -> String? {
        APIClient.plainBase(of: URL(string: base)!).flatMap { APIClient.plainURL(plainBase: $0, path: path, query: query) }
    }

    @Test(arguments: [
        ("https://api.test/v1", "users/1", "https://api.test/v1/users/1"),
        ("https://api.test/v1/", "/users/1", "https://api.test/v1/users/1"),
        ("https://api.test/v1/", "users/1", "https://api.test/v1/users/1"),
        ("https://api.test", "/users/1", "https://api.test/users/1"),
        ("https://api.test/", "", "https://api.test/"),
        ("https://api.test/v1", "https://cdn.test/a.png", "https://cdn.test/a.png"),
    ])
    func joinsPathsWithExactlyOneSlash(base: String, path: String, expected: String) throws {
        let request = try client(base).urlRequest(for: Resource<User>(path: path))
        #expect(request.url?.absoluteString == expected)
    }

    @Test(arguments: [
        ("https://api.test/v1", "users/1", [] as [URLQueryItem]),
        ("https://api.test/v1/", "//users/1", []),
        ("http://127.0.0.1:8080", "feed", [URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "flag", value: nil)]),
        ("https://api.test", "a-b_c.d~e/f", [URLQueryItem(name: "n", value: "")]),
    ])
    func theQuickURLIsTheOneURLComponentsWouldBuild(base: String, path: String, query: [URLQueryItem]) throws {
        let quick = try #require(quickURL(base: base, path: path, query: query))
        #expect(quick == (try APIClient.componentsURL(base: URL(string: base)!, path: path, query: query)).absoluteString)
        #expect(URL(string: quick) != nil)
    }

    @Test(arguments: [
        ("https://api.test/v1?key=1", "users", [] as [URLQueryItem]),
        ("https://api.test/v1", "users/ä", []),
        ("https://api.test/v1", "users/a b", []),
        ("https://api.test/v1", "search", [URLQueryItem(name: "q", value: "a+b")]),
        ("https://api.test/v1", "search", [URLQueryItem(name: "q&x", value: "1")]),
        ("https://api.test/v1", "https://cdn.test/a.png", []),
        ("https://api.test/v1", "/", []),
        ("file:///tmp", "x", []),
    ])
    func anythingNeedingEscapesTakesTheGeneralPath(base: String, path: String, query: [URLQueryItem]) {
        #expect(quickURL(base: base, path: path, query: query) == nil)
    }

    @Test func getSendsQueryItemsEscapingPlus() throws {
        let resource = Resource<User>(path: "search", query: [URLQueryItem(name: "q", value: "a+b c"),
                                                              URLQueryItem(name: "page", value: "2")])
        let request = try client().urlRequest(for: resource)
        #expect(request.url?.absoluteString == "https://api.test/v1/search?q=a%2Bb%20c&page=2")
        #expect(request.httpMethod == "GET")
        #expect(request.httpBody == nil)
    }

    @Test func postSendsAJSONBodyWithItsContentType() throws {
        let request = try client().urlRequest(for: Resource<User>(.post, path: "posts", body: .json(NewPost(text: "hi"))))
        #expect(request.httpMethod == "POST")
        #expect(request.httpBody == Data(#"{"text":"hi"}"#.utf8))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    /// Foundation on Linux writes a model's fields in an order that varies between encodes of
    /// one value; a body must not, or identical requests are told apart.
    @Test func aJSONBodyOfAManyFieldModelIsTheSameBytesEveryTime() throws {
        let resource = Resource<User>(.post, path: "posts", body: .json(RichDraft.sample))
        let bodies = Set(try (0..<200).map { _ in try client().urlRequest(for: resource).httpBody })
        #expect(bodies.count == 1)
        let body = try #require(bodies.first.flatMap { $0 }.flatMap { String(data: $0, encoding: .utf8) })
        #expect(body.hasPrefix(#"{"authorID":7,"body":"#))
    }

    @Test func aJSONBodyKeepsItsEncodersStrategiesAndSortsItsKeys() throws {
        struct Event: Encodable, Sendable { let startsAt: Date; let roomName: String; let attendeeCount: Int }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .secondsSince1970
        let event = Event(startsAt: Date(timeIntervalSince1970: 60), roomName: "Lovelace", attendeeCount: 3)
        let request = try client().urlRequest(for: Resource<User>(.post, path: "events", body: .json(event, encoder: encoder)))
        #expect(request.httpBody == Data(#"{"attendee_count":3,"room_name":"Lovelace","starts_at":60}"#.utf8))
        // The app's encoder is left as it was.
        #expect(!encoder.outputFormatting.contains(.sortedKeys))
    }

    @Test func rawBodiesKeepTheirContentType() throws {
        let png = Data([0x89, 0x50])
        let request = try client().urlRequest(for: Resource<Void>(.put, path: "avatar", body: .data(png, contentType: "image/png")))
        #expect(request.httpBody == png)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "image/png")
    }

    @Test func everyCallCarriesTheClientsHeadersAndToken() throws {
        let request = try client(token: "t0k3n").urlRequest(for: Resource<User>(path: "me"))
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(request.value(forHTTPHeaderField: "User-Agent") == "NetworkScheduler")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer t0k3n")
    }

    @Test func noTokenMeansNoAuthorizationHeader() throws {
        let request = try client().urlRequest(for: Resource<User>(path: "me"))
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func aResourcesHeadersAndTimeoutWin() throws {
        let resource = Resource<User>(path: "me", headers: ["Accept": "application/vnd.api+json"], timeout: 5)
        let request = try client().urlRequest(for: resource)
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/vnd.api+json")
        #expect(request.timeoutInterval == 5)
    }

    @Test func anUnencodableBodyIsAnInvalidRequest() {
        let resource = Resource<User>(.post, path: "scores", body: .json(["score": Double.nan]))
        #expect {
            try client().urlRequest(for: resource)
        } throws: { error in
            guard case .invalidRequest(let reason) = error as? ServiceError else { return false }
            return reason.contains("cannot be encoded")
        }
    }

    @Test func aGetWithABodyIsAnInvalidRequest() {
        #expect(throws: ServiceError.invalidRequest(reason: "a GET request cannot carry a body")) {
            try client().urlRequest(for: Resource<User>(path: "me", body: .json(NewPost(text: "x"))))
        }
    }

    @Test(arguments: ["http://", "://nohost", "https://exa mple.test/x"])
    func aBadURLIsAnInvalidRequest(path: String) {
        #expect {
            try client().urlRequest(for: Resource<User>(path: path))
        } throws: { error in
            if case .invalidRequest = error as? ServiceError { return true }
            return false
        }
    }

    @Test func anInvalidRequestReachesTheCallerThroughTheScheduler() async {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(.post, path: "scores", body: .json(["score": Double.infinity])),
                         completion: outcomes.completion("bad"))
        let error = await outcomes.wait(for: 1)["bad"]?.failure
        if case .invalidRequest = error {} else { Issue.record("expected invalidRequest, got \(String(describing: error))") }
        #expect(harness.transport.arrivals.count == 0)
    }
}

extension RequestBuildingTests {
    @Test func headerNamesOverrideWhateverTheirCase() throws {
        let resource = Resource<User>(path: "me", headers: ["accept": "text/csv", "AUTHORIZATION": "Basic abc"])
        let request = try client(token: "t0k3n").urlRequest(for: resource)
        #expect(request.value(forHTTPHeaderField: "Accept") == "text/csv")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic abc")
        #expect(request.allHTTPHeaderFields?.count == 3)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// One header type for requests and answers: ordered, a name repeated once per value, names
/// compared whatever their case.
@Suite struct HeaderFieldsTests {
    @Test func aNameIsFoundWhateverItsCaseAndARepeatedNamesValuesJoinInOrder() {
        let fields: HeaderFields = ["Accept-Language": "fr", "Accept": "application/json", "accept-language": "en;q=0.8"]

        #expect(fields["ACCEPT-LANGUAGE"] == "fr, en;q=0.8")
        #expect(fields.values(for: "accept-language") == ["fr", "en;q=0.8"])
        #expect(fields["accept"] == "application/json")
        #expect(fields["Content-Type"] == nil)
        #expect(fields.count == 3)
        #expect(fields.names == ["Accept-Language", "Accept"])
    }

    @Test func settingANameReplacesEveryValueOfItWhereItsFirstWas() {
        var fields: HeaderFields = ["A": "1", "X-Trace": "a", "B": "2", "x-trace": "b"]

        fields["X-TRACE"] = "c"

        #expect(fields.map(\.name) == ["A", "X-TRACE", "B"])
        #expect(fields.values(for: "x-trace") == ["c"])
        fields["x-trace"] = nil
        #expect(fields.map(\.name) == ["A", "B"])
        fields["C"] = "3"
        #expect(fields.map(\.name) == ["A", "B", "C"])
    }

    @Test func appendingKeepsTheValuesAlreadyThere() {
        var fields = HeaderFields()
        fields.append(name: "Link", value: "</a>; rel=next")
        fields.append(name: "link", value: "</z>; rel=last")

        #expect(fields.values(for: "Link") == ["</a>; rel=next", "</z>; rel=last"])
    }

    @Test func equalityIgnoresTheOrderOfNamesAndTheirCaseButNotTheOrderOfARepeatedNamesValues() {
        let fields: HeaderFields = ["A": "1", "B": "x", "b": "y"]

        #expect(fields == ["b": "x", "a": "1", "B": "y"])
        #expect(fields != ["A": "1", "B": "y", "b": "x"])
        #expect(fields != ["A": "1", "B": "x"])
        #expect(fields != ["A": "1", "B": "x", "b": "y", "C": "2"])
        #expect(fields != ["A": "one", "B": "x", "b": "y"])
        #expect(Set([fields, ["b": "x", "B": "y", "A": "1"]]).count == 1)
    }

    @Test func aLaterLayerReplacesAnEarlierOnesNameWhateverItsSpelling() {
        var client: HeaderFields = ["Accept": "application/json", "X-Trace": "a", "x-trace": "b"]

        client.merge(["ACCEPT": "text/csv", "X-Other": "o"])

        #expect(client == ["X-Trace": "a", "x-trace": "b", "ACCEPT": "text/csv", "X-Other": "o"])
        #expect(client.values(for: "accept") == ["text/csv"])
    }

    @Test func foundationTypesGetOneValuePerNameJoinedAsHTTPCombinesThem() {
        let fields: HeaderFields = ["Accept": "a/b", "Cookie": "a=1", "accept": "c/d", "cookie": "b=2"]

        #expect(fields.dictionary == ["Accept": "a/b, c/d", "Cookie": "a=1; b=2"])
    }

    @Test func printingShowsTheNamesButNoValue() {
        let fields: HeaderFields = ["Authorization": "Bearer s3cret", "Cookie": "session=s3cret"]

        #expect(!"\(fields)".contains("s3cret"))
        #expect(!String(reflecting: fields).contains("s3cret"))
        var dumped = ""
        dump(fields, to: &dumped)
        #expect(!dumped.contains("s3cret"))
        #expect("\(fields)".contains("Authorization"))
        #expect(fields.unredactedDescription.contains("Bearer s3cret"))
    }

    @Test func aRepeatedFieldOfAResourceReachesTheTransportOncePerValue() async throws {
        let transport = StubTransport { _ in .json(userJSON) }
        let api = APIClient(baseURL: URL(string: "https://api.test/v1")!,
                            scheduler: RequestScheduler(configuration: .init(transport: transport)))

        _ = try await api.value(for: Resource<User>(path: "me", headers: ["Accept-Language": "fr", "accept-language": "en"]))

        let sent = try #require(transport.arrivals.elements.first)
        #expect(sent.headerFields.values(for: "Accept-Language") == ["fr", "en"])
        #expect(sent.request.value(forHTTPHeaderField: "Accept-Language") == "fr, en")
    }

    @Test func aServersRepeatedFieldsReachTheCallersErrorEachOnce() async throws {
        let transport = StubTransport { _ in
            .respond(status: 429, headers: ["Link": "</a>; rel=help", "link": "</b>; rel=status"])
        }
        let api = APIClient(baseURL: URL(string: "https://api.test/v1")!,
                            scheduler: RequestScheduler(configuration: .init(transport: transport, retryPolicy: .never)))

        let error = await #expect(throws: ServiceError.self) { try await api.value(for: Resource<User>(path: "me")) }

        guard case .server(let response)? = error else {
            Issue.record("expected the server's answer, got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 429)
        #expect(response.headers.values(for: "link") == ["</a>; rel=help", "</b>; rel=status"])
    }
}

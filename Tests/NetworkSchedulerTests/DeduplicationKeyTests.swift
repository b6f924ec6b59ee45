import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Requests of different users, or asking for different answers, never share a call; only
/// headers that never change the answer (tracing, request IDs, User-Agent) are left out.
@Suite struct DeduplicationKeyTests {
    /// How many network calls two held requests with these headers make.
    private func networkCalls(
        _ first: HeaderFields,
        _ second: HeaderFields,
        configure: (inout RequestScheduler.Configuration) -> Void = { _ in }
    ) async -> Int {
        let transport = StubTransport { _ in .hold }
        var configuration = RequestScheduler.Configuration(transport: transport, retryPolicy: .never)
        configure(&configuration)
        let scheduler = RequestScheduler(configuration: configuration)
        let api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler)
        let outcomes = Outcomes<User>()
        api.send(Resource<User>(path: "me", headers: first), completion: outcomes.completion("first"))
        api.send(Resource<User>(path: "me", headers: second), completion: outcomes.completion("second"))
        // Both callers are admitted once `send` returns: they share one call, or have one each.
        let calls = scheduler.census.networkCalls
        for arrived in 0..<calls {
            await transport.arrivals.wait(for: arrived + 1)
            transport.release(with: .json(userJSON))
        }
        #expect(await outcomes.wait(for: 2).count == 2)
        return transport.arrivals.count
    }

    @Test(arguments: [
        "Cookie", "X-Api-Key", "Accept-Language", "Range", "If-None-Match", "Authorization", "X-Tenant",
    ])
    func requestsThatDifferInAHeaderThatMattersDoNotShare(header: String) async {
        #expect(await networkCalls([header: "user-a"], [header: "user-b"]) == 2)
        #expect(await networkCalls([header: "user-a"], [:]) == 2)
    }

    @Test(arguments: ["User-Agent", "traceparent", "X-Request-ID", "x-b3-traceid"])
    func requestsThatDifferOnlyInATracingHeaderShare(header: String) async {
        #expect(await networkCalls([header: "one"], [header: "two"]) == 1)
    }

    @Test func aHeaderSpeltInAnotherCaseIsTheSameHeader() async {
        #expect(await networkCalls(["x-api-key": "a"], ["X-API-KEY": "a"]) == 1)
    }

    @Test func aRepeatedFieldsValuesInAnotherOrderAreAnotherRequest() async {
        // `Accept-Language: fr` then `en` asks for French first; the other order, English.
        #expect(await networkCalls(["Accept-Language": "fr", "accept-language": "en"],
                                   ["Accept-Language": "en", "accept-language": "fr"]) == 2)
        #expect(await networkCalls(["Accept-Language": "fr", "accept-language": "en"], ["Accept-Language": "fr"]) == 2)
    }

    @Test func fieldsOfDifferentNamesInAnotherOrderAreTheSameRequest() async {
        #expect(await networkCalls(["X-Tenant": "t1", "Accept-Language": "fr", "accept-language": "en"],
                                   ["accept-language": "fr", "X-TENANT": "t1", "Accept-Language": "en"]) == 1)
    }

    @Test(arguments: ["Authorization", "cookie", "X-API-Key"])
    func aCredentialHeaderCountsEvenWhenTheAppListsItAsIgnored(header: String) async {
        let calls = await networkCalls([header: "alice"], [header: "bob"]) {
            $0.headersIgnoredByDeduplication.insert(header)
        }
        #expect(calls == 2)
    }

    @Test func anAppsOwnCredentialHeaderCountsWhateverTheIgnoredList() async {
        let calls = await networkCalls(["X-Session": "alice"], ["X-Session": "bob"]) {
            $0.headersIgnoredByDeduplication.insert("X-Session")
            $0.credentialHeaders.insert("x-session")
        }
        #expect(calls == 2)
    }

    @Test func aUserMayLeaveOutAHeaderOfTheirOwn() async {
        let calls = await networkCalls(["X-Debug-Session": "1"], ["X-Debug-Session": "2"]) {
            $0.headersIgnoredByDeduplication.insert("x-debug-session")
        }
        #expect(calls == 1)
    }

    @Test func keysCompareTheWholeHeaderSetWhateverItsOrder() {
        let ignored = HeaderNames(RequestScheduler.Configuration.defaultHeadersIgnoredByDeduplication)
        func key(_ headers: HeaderFields) -> CallKey {
            CallKey(RequestIdentity(method: "GET", url: "https://api.test/me", headers: HeaderFields(headers), ignored: ignored,
                                    body: nil))
        }
        #expect(key(["A": "1", "B": "2", "User-Agent": "x"]) == key(["b": "2", "a": "1"]))
        #expect(key(["A": "1", "B": "2"]) != key(["A": "1"]))
        #expect(key(["A": "1"]) != key(["A": "1", "B": "2"]))
        #expect(key(["A": "1", "B": "2"]) != key(["A": "1", "B": "3"]))
    }
}

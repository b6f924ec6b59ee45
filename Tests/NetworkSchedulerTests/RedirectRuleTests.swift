import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import Testing

/// The one redirect rule both transports apply (`TransportPolicy.request(following:from:)`):
/// which redirects are followed, and what a request to another origin loses. The transports'
/// own tests follow real redirects over sockets; this is the rule alone.
@Suite struct RedirectRuleTests {
    private static let from = URL(string: "https://api.example.com/v1/me")!

    private static func redirected(to target: String) -> URLRequest {
        var request = URLRequest(url: URL(string: target)!)
        request.setValue("Bearer alice", forHTTPHeaderField: "Authorization")
        request.setValue("key", forHTTPHeaderField: "X-API-Key")
        request.setValue("tenant-7", forHTTPHeaderField: "X-Tenant")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        return request
    }

    @Test func aRedirectWithinTheOriginKeepsEveryHeaderUnderFollowAndSameOrigin() throws {
        for redirects in [TransportPolicy.Redirects.follow, .sameOrigin] {
            let policy = TransportPolicy(redirects: redirects, originBoundHeaders: ["X-Tenant"])
            // The scheme's default port spelt out is the same origin; the host's case is not read.
            let next = try #require(policy.request(following: Self.redirected(to: "https://API.example.com:443/v2/me"),
                                                   from: Self.from))
            #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer alice")
            #expect(next.value(forHTTPHeaderField: "X-Tenant") == "tenant-7")
        }
    }

    @Test func aRedirectToAnotherOriginLosesTheCredentialAndOriginBoundHeadersOnly() throws {
        let policy = TransportPolicy(redirects: .follow, originBoundHeaders: ["X-Tenant"])
        for target in ["https://elsewhere.example.com/me", "http://api.example.com/v1/me", "https://api.example.com:8443/me"] {
            let next = try #require(policy.request(following: Self.redirected(to: target), from: Self.from))
            #expect(next.url?.absoluteString == target)
            #expect(next.value(forHTTPHeaderField: "Authorization") == nil, "\(target)")
            #expect(next.value(forHTTPHeaderField: "X-API-Key") == nil, "\(target)")
            #expect(next.value(forHTTPHeaderField: "X-Tenant") == nil, "\(target)")
            #expect(next.value(forHTTPHeaderField: "Accept") == "application/json", "\(target)")
        }
    }

    @Test func sameOriginFollowsNoRedirectElsewhereAndNeverFollowsNone() {
        let elsewhere = Self.redirected(to: "https://elsewhere.example.com/me")
        #expect(TransportPolicy(redirects: .sameOrigin).request(following: elsewhere, from: Self.from) == nil)
        let within = Self.redirected(to: "https://api.example.com/v2/me")
        #expect(TransportPolicy(redirects: .never).request(following: within, from: Self.from) == nil)
        // A redirect from a URL with no host is no origin's: it is never the same one.
        #expect(TransportPolicy(redirects: .sameOrigin).request(following: within, from: nil) == nil)
    }
}

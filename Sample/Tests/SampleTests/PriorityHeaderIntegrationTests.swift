import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialServer
import Testing

/// RFC 9218's `Priority` header reaches a real server over either transport, with the urgency
/// of the request's priority, and a request at the default priority sends none.
@Suite struct PriorityHeaderIntegrationTests {
    /// The `Priority` header the server saw, whatever the case of its name.
    private static func priorityHeader(in echoed: [String: String]) -> String? {
        echoed.first { $0.key.lowercased() == "priority" }?.value
    }

    @Test(arguments: TransportKind.allCases)
    func theServerHearsEachRequestsUrgency(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let api = APIClient(baseURL: fixture.server.baseURL, scheduler: fixture.api.scheduler)
            let echo = Resource<[String: String]>(path: "echo")

            let high = try await api.value(for: echo, priority: .high)
            let normal = try await api.value(for: echo)
            let background = try await api.value(for: echo, priority: .background)

            #expect(Self.priorityHeader(in: high) == "u=1")
            #expect(Self.priorityHeader(in: normal) == nil)
            #expect(Self.priorityHeader(in: background) == "u=7")
        }
    }
}

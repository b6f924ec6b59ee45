import Foundation
import NetworkScheduler
import SocialApp
import SocialServer

/// What the server says arrived, read over HTTP so that it works for a remote server too.
/// Through a scheduler of its own, so that the demo's metrics count only the scenario's calls.
struct ServerStats {
    private let client: APIClient

    init(baseURL: URL) {
        client = APIClient(baseURL: baseURL, scheduler: RequestScheduler())
    }

    func fetch() async throws -> Stats {
        try await client.value(for: Resource<Stats>(path: "_stats", deduplication: .disabled))
    }

    func count(_ route: Route) async throws -> Int {
        try await fetch().counts[route.rawValue] ?? 0
    }
}

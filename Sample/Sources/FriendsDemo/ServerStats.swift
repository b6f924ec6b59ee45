import Foundation
import NetworkScheduler
import SocialApp
import SocialServer

/// What the server says arrived, read over HTTP so that it works for a remote server too.
struct ServerStats {
    let api: SocialAPI

    func fetch() async throws -> Stats {
        try await api.client.value(for: Resource<Stats>(path: "_stats", deduplication: .disabled))
    }

    func count(_ route: Route) async throws -> Int {
        try await fetch().counts[route.rawValue] ?? 0
    }
}

import Foundation
@testable import NetworkScheduler
@testable import NetworkSchedulerOutbox

/// What the outbox suites share: a folder of their own, and a configuration that tries again at once.
enum OutboxFixtures {
    /// Runs `body` with a new folder, removed afterwards.
    static func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("Outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    /// Tries a failed write again at once.
    static var quick: Outbox.Configuration {
        var configuration = Outbox.Configuration()
        configuration.retryPolicy.baseDelay = 0
        return configuration
    }
}

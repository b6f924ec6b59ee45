import Foundation
import NetworkScheduler
import NIOConcurrencyHelpers
import SocialApp
import SocialServer
import Testing

/// Requests and the app's own `Operation`s waiting for each other, over real sockets against
/// the SocialServer.
@Suite struct OperationQueueIntegrationTests {
    @Test(arguments: TransportKind.allCases)
    func aRequestWaitsForTheAppsMigrationAndTheAppsImportWaitsForTheRequest(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            let order = NIOLockedValueBox<[String]>([])
            let imported = WaitableCount()
            let appQueue = OperationQueue()
            appQueue.isSuspended = true
            let migration = BlockOperation { order.withLockedValue { $0.append("migration") } }
            let fetch = fixture.api.client.operation(for: .user(1), after: [migration]) { result in
                order.withLockedValue { $0.append((try? result.get()) == nil ? "fetch failed" : "fetched user 1") }
            }
            let importer = BlockOperation {
                order.withLockedValue { $0.append("import") }
                imported.add()
            }
            importer.addDependency(fetch)
            appQueue.addOperation(migration)
            appQueue.addOperation(importer)
            // Started by hand, in no queue: its request waits in the scheduler for the migration.
            fetch.start()

            // A request sent after it reaches the server first, while the migration waits.
            _ = try await fixture.api.client.value(for: .user(2))
            #expect(fixture.server.arrivals.count(.user) == 1)

            appQueue.isSuspended = false
            #expect(await imported.wait(for: 1) == 1)
            #expect(order.withLockedValue { $0 } == ["migration", "fetched user 1", "import"])
            let users = fixture.server.arrivals.all.filter { $0.route == .user }.map { $0.target.split(separator: "/").last! }
            #expect(users == ["2", "1"])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingOneCallersOperationLeavesTheSharedCallToTheOther(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults.hold(.user)
            let ledger = Ledger<User>(callers: 2)
            let fetch = fixture.api.client.operation(for: .user(1)) { ledger.record(0, $0) }
            let appQueue = OperationQueue()
            appQueue.addOperation(fetch)
            #expect(await fixture.server.arrivals.wait(for: 1, at: .user))
            fixture.api.client.send(.user(1)) { ledger.record(1, $0) }

            fetch.cancel()
            #expect(await ledger.ended.wait(for: 1) == 1)
            #expect(ledger.result(of: 0)?.failure == .cancelled)
            fixture.server.faults.release(.user)

            #expect(await ledger.ended.wait(for: 2) == 2)
            #expect((try? ledger.result(of: 1)?.get())?.id == 1)
            #expect(fixture.server.arrivals.count(.user) == 1)
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// RFC 9218's `Priority` header: each attempt tells its server its call's priority as it starts,
/// without splitting calls, and a request's own header or the app's choice stands.
@Suite struct PriorityHeaderTests {
    @Test func eachPriorityHasItsUrgencyAndTheDefaultSaysNothing() {
        let headers = RequestPriority.allCases.map { ($0, $0.priorityHeader(isIncremental: false), $0.priorityHeader(isIncremental: true)) }

        #expect(headers.map(\.0) == [.background, .low, .normal, .high, .critical])
        #expect(headers.map(\.1) == ["u=7", "u=5", nil, "u=1", "u=0"])
        #expect(headers.map(\.2) == ["u=7, i", "u=5, i", "i", "u=1, i", "u=0, i"])
    }

    /// The `Priority` header of the `index`th request that reached the stub.
    private static func priorityHeader(_ harness: Harness, of index: Int) async -> String? {
        let arrivals = await harness.transport.arrivals.wait(for: index + 1)
        return arrivals[index].headerFields.values(for: "Priority").first
    }

    @Test func aRequestSaysItsPriorityAndANormalOneSaysNothing() async throws {
        let harness = Harness()

        for priority in [RequestPriority.high, .normal, .background] {
            _ = try await harness.api.value(for: Resource<User>(path: "me"), priority: priority)
        }

        let arrivals = await harness.transport.arrivals.wait(for: 3)
        #expect(arrivals.map { $0.headerFields.values(for: "Priority").first } == ["u=1", nil, "u=7"])
    }

    @Test func aDownloadAndAStreamAreIncremental() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("priority-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let harness = Harness { request in
            request.url?.path == "/v1/export" ? .respond(body: Data("file".utf8)) : .streams(chunks: [Data("a".utf8)])
        }

        _ = try await harness.api.value(for: .download("export", to: folder.appendingPathComponent("export.bin")), priority: .low)
        for try await _ in harness.api.stream(.chunks("feed")) {}

        #expect(await Self.priorityHeader(harness, of: 0) == "u=5, i")
        #expect(await Self.priorityHeader(harness, of: 1) == "i")
    }

    @Test func aSharedCallSaysItsHighestCallersPriorityAsItStarts() async {
        let harness = Harness(budget: 1) { _ in .hold }
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        let low = harness.api.send(Resource<User>(path: "me"), priority: .low) { _ in }
        let raised = harness.api.send(Resource<User>(path: "me"), priority: .low) { _ in }

        raised.priority = .critical
        harness.transport.release(with: .json(userJSON))

        #expect(await Self.priorityHeader(harness, of: 1) == "u=0")
        harness.transport.release(with: .json(userJSON))
        await harness.scheduler.queuesDrained()
        #expect(harness.transport.arrivals.count == 2)
        withExtendedLifetime((low, raised)) {}
    }

    @Test func callersWhoseOwnPriorityHeadersDifferShareOneCall() async {
        let harness = Harness(budget: 1) { _ in .hold }
        let first = harness.api.send(Resource<User>(path: "me", headers: ["Priority": "u=2"])) { _ in }
        await harness.transport.arrivals.wait(for: 1)

        let second = harness.api.send(Resource<User>(path: "me", headers: ["Priority": "u=6"])) { _ in }
        await harness.events.joined.wait(for: 1)
        harness.transport.release(with: .json(userJSON))

        #expect(await Self.priorityHeader(harness, of: 0) == "u=2")
        await harness.scheduler.queuesDrained()
        #expect(harness.transport.arrivals.count == 1)
        withExtendedLifetime((first, second)) {}
    }

    @Test func aRequestsOwnPriorityHeaderGoesAsItIs() async throws {
        let harness = Harness()

        _ = try await harness.api.value(for: Resource<User>(path: "me", headers: ["priority": "u=4"]), priority: .critical)

        let arrivals = await harness.transport.arrivals.wait(for: 1)
        #expect(arrivals[0].headerFields.values(for: "Priority") == ["u=4"])
    }

    @Test func aClientThatTurnedItOffSendsNone() async throws {
        let harness = Harness { _ in .json(userJSON) } configure: { $0.sendsPriorityHeader = false }

        _ = try await harness.api.value(for: Resource<User>(path: "me"), priority: .critical)

        #expect(await Self.priorityHeader(harness, of: 0) == nil)
    }
}

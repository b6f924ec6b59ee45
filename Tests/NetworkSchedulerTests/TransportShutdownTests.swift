import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// `URLSessionTransport.invalidate()` is a shutdown: the callers it held end once, cancelled,
/// and a request sent afterwards gets a typed error. FoundationNetworking traps on a task asked
/// of an invalidated session, which the scheduler used to do for each waiting request.
@Suite struct TransportShutdownTests {
    /// Hears the retries the scheduler decides.
    private final class Retries: RequestEvent.Monitor {
        let log = EventLog<Int>()
        func record(_ event: RequestEvent) {
            if case .retried(_, let attempt, _, _) = event { log.append(attempt) }
        }
    }

    private func api(host: String, budget: Int, monitors: [any RequestEvent.Monitor] = [],
                     handler: @escaping StubURLProtocol.Handler) -> (APIClient, URLSessionTransport, RequestScheduler) {
        let transport = StubURLProtocol.transport(host: host, handler: handler)
        let scheduler = RequestScheduler(configuration: .init(transport: transport, hostBudget: budget, eventMonitors: monitors))
        return (APIClient(baseURL: URL(string: "https://\(host)/v1")!, scheduler: scheduler), transport, scheduler)
    }

    private static func result(of api: APIClient, path: String) async -> Result<User, ServiceError> {
        do throws(ServiceError) {
            return .success(try await api.value(for: Resource<User>(path: path)))
        } catch {
            return .failure(error)
        }
    }

    @Test func invalidatingEndsRunningAndWaitingCallersCancelledAndALaterSendClosed() async throws {
        // Given six requests to one host whose budget is two: two on the wire, four waiting.
        let arrived = EventLog<Void>()
        let (api, transport, scheduler) = api(host: "invalidate.waiting.test", budget: 2) { _, _ in
            arrived.append(())
            return .hold
        }
        let callers = (0..<6).map { index in
            Task { await Self.result(of: api, path: "users/\(index)") }
        }
        await arrived.wait(for: 2)

        // When the transport is invalidated.
        transport.invalidate()

        // Then every caller ends cancelled, none reaches the network afterwards, and the
        // scheduler holds nothing.
        for caller in callers {
            #expect(await caller.value.failure == .cancelled)
        }
        #expect(arrived.count == 2)
        #expect(scheduler.census.callers == 0)
        await #expect(throws: ServiceError.transportClosed) {
            try await api.value(for: Resource<User>(path: "users/after"))
        }
        #expect(arrived.count == 2)
        transport.invalidate() // twice is harmless
    }

    @Test func invalidatingEndsACallerWaitingOutARetryAfterAtOnce() async throws {
        // Given a caller whose call waits a minute to retry after a 503.
        let retries = Retries()
        let arrived = EventLog<Void>()
        let (api, transport, _) = api(host: "invalidate.retrying.test", budget: 2, monitors: [retries]) { _, _ in
            arrived.append(())
            return .unavailable(retryAfter: 60)
        }
        let caller = Task { await Self.result(of: api, path: "users/1") }
        await retries.log.wait(for: 1)

        // When the transport is invalidated, then it ends cancelled, not a minute later.
        let invalidated = Date()
        transport.invalidate()
        #expect(await caller.value.failure == .cancelled)
        #expect(Date().timeIntervalSince(invalidated) < 30)
        #expect(arrived.count == 1)
    }

    @Test func aSchedulerMadeOverAClosedTransportEndsItsRequestsClosed() async throws {
        let arrived = EventLog<Void>()
        let transport = StubURLProtocol.transport(host: "invalidate.before.test") { _, _ in
            arrived.append(())
            return .json(userJSON)
        }
        transport.invalidate()
        let api = APIClient(baseURL: URL(string: "https://invalidate.before.test/v1")!,
                            scheduler: RequestScheduler(configuration: .init(transport: transport)))
        await #expect(throws: ServiceError.transportClosed) {
            try await api.value(for: Resource<User>(path: "users/1"))
        }
        #expect(arrived.count == 0)
    }

    @Test func aLifecycleTellsEachObserverOnceAndRunsNothingOnceClosed() {
        let lifecycle = TransportLifecycle()
        let told = Counter()
        lifecycle.whenClosed { _ = told.next() }
        #expect(lifecycle.ifOpen { 1 } == 1)
        #expect(lifecycle.close())
        #expect(!lifecycle.close())
        #expect(lifecycle.ifOpen { 1 } == nil)
        #expect(told.count == 1)
        lifecycle.whenClosed { _ = told.next() }
        #expect(told.count == 2)
    }
}

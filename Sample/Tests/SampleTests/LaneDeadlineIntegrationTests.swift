import Foundation
import NetworkScheduler
import NetworkSchedulerTesting
import SocialApp
import SocialServer
import Testing

/// Serial lanes, request deadlines and bounded lines, over real sockets against the
/// SocialServer.
@Suite struct LaneDeadlineIntegrationTests {
    @Test(arguments: TransportKind.allCases)
    func requestsOfOneLaneReachTheServerOneAtATimeInOrder(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults.hold(.user)
            let ended = WaitableCount()
            fixture.api.client.send(.user(1).inLane("profile")) { _ in ended.add() }
            fixture.api.client.send(.user(2).inLane("profile")) { _ in ended.add() }
            // Sent after them, outside the lane, with free slots: it arrives, the second does not.
            fixture.api.client.send(.feed(page: 1)) { _ in ended.add() }
            #expect(await ended.wait(for: 1) == 1)
            #expect(await fixture.server.arrivals.wait(for: 1, at: .user))
            #expect(fixture.server.arrivals.count(.user) == 1)

            fixture.server.faults.release(.user)
            #expect(await ended.wait(for: 3) == 3)
            let users = fixture.server.arrivals.all.filter { $0.route == .user }.map(\.target)
            #expect(users == ["/users/1", "/users/2"])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aLaneThatCancelsTheRestOnFailureSendsNothingAfterIt(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            let ledger = Ledger<Void>(callers: 2)
            // No post 999: a 404, a failure.
            fixture.api.client.send(.delete(post: 999).inLane("replay", onFailure: .cancelTheRest)) { ledger.record(0, $0) }
            fixture.api.client.send(.delete(post: 998).inLane("replay")) { ledger.record(1, $0) }
            #expect(await ledger.ended.wait(for: 2) == 2)
            #expect(ledger.result(of: 0)?.failure?.statusCode == 404)
            #expect(ledger.result(of: 1)?.failure == .cancelled)
            #expect(fixture.server.arrivals.count(.deletePost) == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRequestPastItsDeadlineEndsThenWhileTheServerStillHoldsIt(over transport: TransportKind) async throws {
        // The deadline passes on a virtual clock once the server holds the request: on a busy
        // machine a real 0.2 s could pass before the request even arrived.
        let clock = VirtualClock()
        try await Fixture.with(over: transport, configure: { $0.clock = clock }) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults.hold(.user)
            let ledger = Ledger<User>(callers: 1)
            fixture.api.client.send(.user(1).within(0.2)) { ledger.record(0, $0) }
            #expect(await fixture.server.arrivals.wait(for: 1, at: .user))
            #expect(ledger.ended.value == 0)
            clock.advance(by: 0.2)
            #expect(await ledger.ended.wait(for: 1) == 1)
            #expect(ledger.result(of: 0)?.failure == .deadlineExceeded)
            #expect(fixture.server.arrivals.count(.user) == 1)
            fixture.server.faults.release(.user)
            #expect(fixture.api.scheduler.census.callers == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRequestWaitingInLinePastItsDeadlineNeverArrives(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 1) { fixture in
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()
            let ledger = Ledger<User>(callers: 1)
            fixture.api.client.send(.user(1).within(0.1)) { ledger.record(0, $0) }
            #expect(await ledger.ended.wait(for: 1) == 1)
            #expect(ledger.result(of: 0)?.failure == .deadlineExceeded)
            try await releaseTheSlot()
            #expect(fixture.server.arrivals.count(.user) == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFullLineShedsTheNewestLeastUrgentRequestWhichNeverArrives(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 1, maximumWaitingPerHost: 2) { fixture in
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()
            let ledger = Ledger<User>(callers: 3)
            fixture.api.client.send(.user(1), priority: .low) { ledger.record(0, $0) }
            fixture.api.client.send(.user(2), priority: .low) { ledger.record(1, $0) }
            fixture.api.client.send(.user(3), priority: .high) { ledger.record(2, $0) }
            #expect(await ledger.ended.wait(for: 1) == 1)
            guard case .lineFull(let host)? = ledger.result(of: 1)?.failure else {
                Issue.record("user 2 was not shed: \(String(describing: ledger.result(of: 1)))")
                return
            }
            #expect(host.hasPrefix("http://127.0.0.1:"))

            try await releaseTheSlot()
            #expect(await ledger.ended.wait(for: 3) == 3)
            let users = fixture.server.arrivals.all.filter { $0.route == .user }.map(\.target)
            #expect(users == ["/users/3", "/users/1"])
        }
    }
}

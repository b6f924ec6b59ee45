import Foundation
import NetworkScheduler
import SocialApp
import SocialServer
import Testing

/// A keyed POST whose caller leaves once it is on the wire, over real sockets against the
/// SocialServer.
@Suite struct KeyedPostIntegrationTests {
    @Test(arguments: TransportKind.allCases)
    func aPostWhoseCallerLeftRunsOnAndASecondTapGetsItsAnswer(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, eventMonitors: [tally]) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults.hold(.createPost)
            let draft = PostDraft(text: "sent, then the screen closed")
            let ledger = Ledger<Post>(callers: 2)
            let first = fixture.api.client.send(.create(draft).withIdempotencyKey()) { ledger.record(0, $0) }
            #expect(await fixture.server.arrivals.wait(for: 1, at: .createPost))
            first.cancel()
            #expect(await ledger.ended.wait(for: 1) == 1)
            #expect(ledger.result(of: 0)?.failure == .cancelled)

            // The server finishes the POST it was processing: the scheduler did not cut it off.
            fixture.server.faults.release(.createPost)
            #expect(await tally.kept.wait(for: 1) == 1)

            fixture.api.client.send(.create(draft).withIdempotencyKey()) { ledger.record(1, $0) }
            #expect(await ledger.ended.wait(for: 2) == 2)
            #expect((try? ledger.result(of: 1)?.get())?.text == draft.text)
            #expect(fixture.server.arrivals.count(.createPost) == 1)
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerOutbox
import NetworkSchedulerTesting

private struct Presence: Codable, Sendable, Equatable {
    let presence: String
}

private struct Tap: Codable, Sendable, Equatable {
    let counter: String
    let tags: Set<String>
}

extension OutboxKind where Payload == Presence {
    fileprivate static let presence = OutboxKind("presence", lane: "status") { presence in
        Resource<Data>(.put, path: "me/presence", body: .json(presence), decoding: .data)
    }
    /// Presence without a lane: ordered for merging by its kind.
    fileprivate static let loosePresence = OutboxKind("loose presence") { presence in
        Resource<Data>(.put, path: "me/presence", body: .json(presence), decoding: .data)
    }
}

extension OutboxKind where Payload == Tap {
    fileprivate static let increment = OutboxKind("+1", lane: "counters", merging: .never) { tap in
        Resource<Data>(.post, path: "counters/increment", body: .json(tap), decoding: .data)
    }
    fileprivate static let tap = OutboxKind("tap", lane: "taps") { tap in
        Resource<Data>(.post, path: "taps", body: .json(tap), decoding: .data)
    }
}

/// An identical write merges only with the last one pending in its lane, and never for a kind
/// that says so: the lane's last write is the server's final state.
@Suite struct OutboxMergingTests {
    /// The payloads that reached the server, in order, once every write was released.
    private func sent<Payload: Codable & Sendable>(
        _ payloads: [Payload], as kind: OutboxKind<Payload>
    ) async throws -> (ids: [UUID], sent: [Payload]) {
        var result: (ids: [UUID], sent: [Payload]) = ([], [])
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .hold }
            let outbox = try Outbox(folder: folder, client: harness.api)
            let told = EventLog<Bool>()
            outbox.register(kind) { _, _ in told.append(true) }
            // The first is on the wire (a slow server) while the others are enqueued.
            result.ids.append(try outbox.enqueue(payloads[0], as: kind))
            await harness.transport.arrivals.wait(for: 1)
            for payload in payloads.dropFirst() { result.ids.append(try outbox.enqueue(payload, as: kind)) }
            let writes = Set(result.ids).count
            for count in 1...writes {
                await harness.transport.arrivals.wait(for: count)
                #expect(harness.transport.release(with: .json("{}", status: 200)))
                await told.wait(for: count)
            }
            result.sent = harness.transport.arrivals.elements.compactMap { arrival in
                arrival.body.flatMap { try? JSONDecoder().decode(Payload.self, from: $0) }
            }
        }
        return result
    }

    @Test func awayOnlineAwaySendsAllThreeAndEndsAway() async throws {
        let (ids, sent) = try await sent(["away", "online", "away"].map(Presence.init), as: .presence)
        #expect(Set(ids).count == 3)
        #expect(sent.map(\.presence) == ["away", "online", "away"])
    }

    /// Without a lane each write goes at once, in no set order: the third is not merged into
    /// the first across the second, so all three reach the server.
    @Test func likeUnlikeLikeWithoutALaneSendsAllThree() async throws {
        let (ids, sent) = try await sent(["liked", "unliked", "liked"].map(Presence.init), as: .loosePresence)
        #expect(Set(ids).count == 3)
        #expect(sent.map(\.presence).sorted() == ["liked", "liked", "unliked"])
    }

    @Test func aDoubleTapIsStillOneWrite() async throws {
        let (ids, sent) = try await sent(["away", "away", "away"].map(Presence.init), as: .presence)
        #expect(Set(ids).count == 1)
        #expect(sent.map(\.presence) == ["away"])
    }

    @Test func aKindThatNeverMergesSendsEveryTap() async throws {
        let tap = Tap(counter: "likes", tags: ["a"])
        let (ids, sent) = try await sent([tap, tap], as: .increment)
        #expect(Set(ids).count == 2)
        #expect(sent == [tap, tap])
    }

    @Test func equalPayloadsWithSetsBuiltApartAreOneWrite() async throws {
        let taps = (0..<10).map { _ in Tap(counter: "likes", tags: Set(BodyIdentityTests.tags.shuffled())) }
        let (ids, sent) = try await sent(taps, as: .tap)
        #expect(Set(ids).count == 1)
        #expect(sent == [taps[0]])
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerOutbox
import NetworkSchedulerOpenAPI
import NIOConcurrencyHelpers
import OpenAPIRuntime
import SocialApp
@testable import SocialOpenAPI
import SocialServer
import Testing

/// A draft whose tags are a set, rebuilt for each tap: equal drafts, collections in other orders.
private struct TaggedDraft: Codable, Sendable, Equatable {
    let text: String
    let tags: Set<String>
    let scores: [UUID: Int]

    static let keys = (0..<5).map { _ in UUID() }

    static func tapped() -> TaggedDraft {
        var tags = Set<String>(minimumCapacity: Int.random(in: 0...12))
        for tag in ["swift", "linux", "news", "ios", "server"].shuffled() { tags.insert(tag) }
        var scores: [UUID: Int] = [:]
        for (index, key) in keys.enumerated().shuffled() { scores[key] = index }
        return TaggedDraft(text: "hello", tags: tags, scores: scores)
    }
}

/// An app's encoder that wraps every body in `{"data": …}`.
private final class WrappingEncoder: JSONEncoder, @unchecked Sendable {
    // Safety: no state of its own.
    private struct Envelope<Value: Encodable>: Encodable { let data: Value }

    override func encode<Value: Encodable>(_ value: Value) throws -> Data {
        try super.encode(Envelope(data: value))
    }
}

/// Whose token an adapter adds: the app's current user, switched while a call is on the wire.
private final class Accounts: Sendable {
    private let state = NIOLockedValueBox<(user: String, tokens: [String: String])>(("", [:]))

    func add(_ user: String, token: String) { state.withLockedValue { $0.tokens[user] = token } }
    func switchTo(_ user: String) { state.withLockedValue { $0.user = user } }
    var user: String { state.withLockedValue { $0.user } }
    var token: String { state.withLockedValue { $0.tokens[$0.user] ?? "" } }
}

/// A call is shared only by requests that are the same on the wire, for the same user, over
/// real sockets against the SocialServer, over each transport (issue 47's five cases).
@Suite struct IdentityIntegrationTests {
    private static func echoClient(_ fixture: Fixture) -> APIClient {
        APIClient(baseURL: fixture.server.baseURL, scheduler: fixture.api.scheduler)
    }

    @Test(arguments: TransportKind.allCases)
    func fiftyTapsOfAnEqualDraftWithASetReachTheServerOnce(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, eventMonitors: [tally]) { fixture in
            let api = Self.echoClient(fixture)
            fixture.server.faults.hold(.echoBody)
            let ledger = Ledger<TaggedDraft>(callers: 50)
            for tap in 0..<50 {
                api.send(Resource<TaggedDraft>(.post, path: "echo", body: .json(TaggedDraft.tapped()))) { ledger.record(tap, $0) }
            }
            #expect(await tally.admitted.wait(for: 50) == 50)
            #expect(await fixture.server.arrivals.wait(for: 1, at: .echoBody))
            fixture.server.faults.release(.echoBody)

            #expect(await ledger.ended.wait(for: 50) == 50)
            #expect((0..<50).allSatisfy { (try? ledger.result(of: $0)?.get())?.tags.count == 5 })
            #expect(fixture.server.arrivals.count(.echoBody) == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anEncoderSubclassWritesTheBodyTheServerReceives(over transport: TransportKind) async throws {
        struct Value: Encodable, Sendable { let k: Int }
        try await Fixture.with(over: transport) { fixture in
            let api = Self.echoClient(fixture)
            let echoed = try await api.value(for: Resource<Data>(.post, path: "echo", body: .json(Value(k: 1), encoder: WrappingEncoder()),
                                                                 decoding: .data))
            #expect(echoed == Data(#"{"data":{"k":1}}"#.utf8))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSwitchedUserNeverGetsThePreviousUsersAnswer(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            // Given ada's GET /me on the wire, sent with the token an adapter adds
            let accounts = Accounts()
            for name in ["ada", "grace"] {
                let session = try await fixture.api.auth.logIn(Credentials(username: name, password: "secret"))
                accounts.add(name, token: session.token)
            }
            accounts.switchTo("ada")
            var client = APIClient(baseURL: fixture.server.baseURL, scheduler: fixture.api.scheduler)
            client.requestAdapter = RequestAdapter(identity: { accounts.user }) { request in
                var request = request
                request.setValue("Bearer \(accounts.token)", forHTTPHeaderField: "Authorization")
                return request
            }
            let api = client
            fixture.server.faults.hold(.me)
            async let ada = api.reply(for: Resource<User>(path: "me"))
            #expect(await fixture.server.arrivals.wait(for: 1, at: .me))

            // When the app switches to grace, who sends the same GET
            accounts.switchTo("grace")
            async let grace = api.reply(for: Resource<User>(path: "me"))
            #expect(await fixture.server.arrivals.wait(for: 2, at: .me))
            fixture.server.faults.release(.me)

            // Then each gets their own answer, from a call of their own
            let (adaReply, graceReply) = try await (ada, grace)
            #expect(adaReply.value.name == "Ada")
            #expect(graceReply.value.name == "Grace")
            #expect(!adaReply.wasShared && !graceReply.wasShared)
            #expect(fixture.server.arrivals.count(.me) == 2)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aResourcesApiKeyAndAnAppsOwnCredentialHeaderNeverFollowARedirectElsewhere(
        over transport: TransportKind
    ) async throws {
        let other = try await SocialServer.start()
        defer { Task { await other.stop() } }
        try await Fixture.with(over: transport, configure: { $0.credentialHeaders.insert("X-Session") }) { fixture in
            let api = Self.echoClient(fixture)
            fixture.server.faults[.echo] = Fault(redirectLocation: "\(other.baseURL.absoluteString)/echo")
            let echo = Resource<[String: String]>(path: "echo", headers: ["X-API-Key": "ada-key", "X-Session": "ada-session",
                                                                          "X-Tenant": "social"])
            let echoed = try await api.value(for: echo)

            #expect(other.arrivals.count(.echo) == 1)
            #expect(echoed["x-api-key"] == nil)
            #expect(echoed["x-session"] == nil)
            #expect(echoed["x-tenant"] == "social", "a header that names no one may follow")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anOutboxLaneOfTogglesEndsInTheUsersLastIntent(over transport: TransportKind) async throws {
        struct Presence: Codable, Sendable { let presence: String }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("Presence-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Fixture.with(over: transport) { fixture in
            let session = try await fixture.logIn()
            let outbox = try Outbox(folder: folder, client: fixture.api.client)
            let presence = OutboxKind<Presence>("presence", lane: "status") { presence in
                Resource<Data>(.put, path: "me/presence", body: .json(presence), decoding: .data)
            }
            let told = WaitableCount()
            outbox.register(presence) { _, _ in told.add() }
            // Away goes to a slow server; online, then away again, are enqueued meanwhile.
            fixture.server.faults.hold(.presence)
            let first = try outbox.enqueue(Presence(presence: "away"), as: presence)
            #expect(await fixture.server.arrivals.wait(for: 1, at: .presence))
            let ids = [first] + (try ["online", "away"].map { try outbox.enqueue(Presence(presence: $0), as: presence) })
            fixture.server.faults.release(.presence)

            #expect(Set(ids).count == 3)
            #expect(await told.wait(for: 3) == 3)
            #expect(await fixture.server.presences(of: session.user.id) == ["away", "online", "away"])
            outbox.close()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func identicalUploadsOfAGeneratedClientShareOneCall(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, eventMonitors: [tally]) { fixture in
            _ = try await fixture.logIn()
            for (size, limit, callers) in [(1_200_000, 1 << 20, 5), (5_000, 1_024, 10)] {
                let client = Client(serverURL: fixture.server.baseURL,
                                    transport: SchedulerClientTransport(client: fixture.api.client, bufferedUploadLimit: limit))
                let bytes = [UInt8](repeating: UInt8(ascii: "u"), count: size)
                let before = (tally.admitted.value, fixture.server.arrivals.count(.upload))
                fixture.server.faults.hold(.upload)
                let receipts = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<callers {
                        group.addTask { try await client.upload(body: .binary(HTTPBody(bytes))).ok.body.json.bytes }
                    }
                    #expect(await tally.admitted.wait(for: before.0 + callers) == before.0 + callers)
                    fixture.server.faults.release(.upload)
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(receipts == Array(repeating: size, count: callers))
                #expect(fixture.server.arrivals.count(.upload) - before.1 == 1, "\(callers) uploads of \(size) bytes")
            }
        }
    }
}

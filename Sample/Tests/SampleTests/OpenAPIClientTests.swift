import Foundation
import NetworkScheduler
import NetworkSchedulerOpenAPI
import OpenAPIRuntime
import SocialApp
@testable import SocialOpenAPI
import SocialServer
import Testing

/// A client swift-openapi-generator made from the social API's document, sending through
/// ``SchedulerClientTransport`` against the SocialServer, over each transport: what the
/// scheduler promises holds for its operations too.
@Suite struct OpenAPIClientTests {
    private static func client(_ fixture: Fixture) -> Client {
        Client(serverURL: fixture.server.baseURL, transport: SchedulerClientTransport(client: fixture.api.client))
    }

    @Test(arguments: TransportKind.allCases)
    func aDoubleTappedPostOfAGeneratedClientReachesTheServerOnce(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, budget: 1, eventMonitors: [tally]) { fixture in
            let client = Self.client(fixture)
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()

            async let first = client.createPost(body: .json(.init(text: "Tapped twice")))
            async let second = client.createPost(body: .json(.init(text: "Tapped twice")))
            // Both wait behind the held request (after the login and `/me`).
            #expect(await tally.admitted.wait(for: 4) == 4)
            try await releaseTheSlot()
            let posts = try await [first.created.body.json, second.created.body.json]

            #expect(posts[0].id == posts[1].id)
            #expect(fixture.server.arrivals.count(.createPost) == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aGeneratedClientsCallsWaitInTheOrderOfTheirScopesPriorities(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, budget: 1, eventMonitors: [tally]) { fixture in
            let client = Self.client(fixture)
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()

            async let prefetch = withScheduling(priority: .low) { try await client.getUser(path: .init(id: 2)) }
            #expect(await tally.admitted.wait(for: 3) == 3)
            async let onScreen = withScheduling(priority: .high) { try await client.getUser(path: .init(id: 3)) }
            #expect(await tally.admitted.wait(for: 4) == 4)
            try await releaseTheSlot()
            let names = try await [prefetch.ok.body.json.name, onScreen.ok.body.json.name]

            #expect(names.count == 2)
            let order = fixture.server.arrivals.all.filter { $0.route == .user }.map(\.target)
            #expect(order == ["/users/3", "/users/2"])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingTheScopesGroupCancelsAGeneratedClientsCall(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let client = Self.client(fixture)
            _ = try await fixture.logIn()
            fixture.server.faults.hold(.feed)
            defer { fixture.server.faults.release(.feed) }
            let screen = RequestGroup()

            let feed = Task { try await withScheduling(group: screen) { try await client.getFeed() } }
            #expect(await fixture.server.arrivals.wait(for: 1, at: .feed))
            screen.cancelAll()

            let error = await #expect(throws: ClientError.self) { try await feed.value }
            #expect(error?.underlyingError as? ServiceError == .cancelled)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aGeneratedClientsSecondReadOfAUserIsServedFromTheCache(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, eventMonitors: [tally], configure: { $0.cache = ResponseCache() }) { fixture in
            let client = Self.client(fixture)
            _ = try await fixture.logIn()

            let first = try await client.getUser(path: .init(id: 2)).ok.body.json
            let second = try await client.getUser(path: .init(id: 2)).ok.body.json

            #expect(first == second)
            #expect(fixture.server.arrivals.count(.user) == 1)
            #expect(tally.servedFromCache.value == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anAnswerTheDocumentDescribesAsAnErrorReachesTheGeneratedClient(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let client = Self.client(fixture)
            _ = try await fixture.logIn()

            let missing = try await client.getUser(path: .init(id: 999))

            #expect(try missing.notFound.body.json.message == "no such user")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anExportReachesTheGeneratedClientInChunksAsItArrives(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let client = Self.client(fixture)
            _ = try await fixture.logIn()

            let body = try await client.getExport(path: .init(name: "all"), query: .init(bytes: 300_000)).ok.body.binary
            var chunks = 0
            var bytes = 0
            for try await chunk in body {
                chunks += 1
                bytes += chunk.count
            }

            #expect(bytes == 300_000)
            #expect(chunks > 1, "a body read whole would come as one chunk")
            #expect(body.length == .known(300_000))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anUploadOfUnknownLengthIsSentWhole(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let client = Self.client(fixture)
            _ = try await fixture.logIn()
            let megabyte = ArraySlice(repeating: UInt8(ascii: "x"), count: 1 << 20)
            let (stream, writer) = AsyncStream<ArraySlice<UInt8>>.makeStream()
            for _ in 0..<3 { writer.yield(megabyte) }
            writer.finish()

            let receipt = try await client.upload(body: .binary(HTTPBody(stream, length: .unknown))).ok.body.json

            #expect(receipt.bytes == 3 << 20)
            #expect(fixture.server.arrivals.count(.upload) == 1)
        }
    }
}

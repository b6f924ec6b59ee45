import Foundation
import NetworkScheduler
import SocialApp
import SocialServer
import Testing

extension HeavyTests {
    /// Streams over real sockets against the SocialServer's live feed, over each transport: new
    /// posts as events, a reconnection after a cut that neither loses nor repeats one, a line
    /// of 100 MB refused within its limit, and a feed that ends with its screen.
    @Suite struct StreamIntegrationTests {
        /// The newest post's ID: a feed after it sends only what is created from now on.
        private static func newestPost(_ fixture: Fixture) async throws -> Post.ID {
            try await fixture.api.client.value(for: .feed(page: 1)).posts.first?.id ?? 0
        }

        /// Reads `count` posts from `feed`.
        private static func posts(_ count: Int, from feed: ResponseStream<ServerSentEvent>) async throws -> [Post] {
            var posts: [Post] = []
            for try await event in feed {
                if let post = Post(event: event) { posts.append(post) }
                if posts.count == count { break }
            }
            return posts
        }

        @Test(arguments: TransportKind.allCases)
        func aLiveFeedDeliversEachNewPostAsAnEvent(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                _ = try await fixture.logIn()
                let feed = fixture.api.posts.liveFeed(after: try await Self.newestPost(fixture), limit: 3)
                #expect(await fixture.server.arrivals.wait(for: 1, at: .liveFeed))

                for text in ["one", "two", "three"] { _ = try await fixture.api.posts.create(PostDraft(text: "live \(text)")) }

                var texts: [String] = []
                for try await event in feed { texts.append(try #require(Post(event: event)).text) }
                #expect(texts == ["live one", "live two", "live three"])
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aFeedCutMidEventReconnectsFromTheLastPostWithoutLosingOrRepeatingOne(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                _ = try await fixture.logIn()
                var ids: [Post.ID] = []
                for index in 1...4 { ids.append(try await fixture.api.posts.create(PostDraft(text: "cut \(index)")).value.id) }
                // The first connection ends in the middle of the third post's event.
                fixture.server.faults[.liveFeed] = Fault(failFirst: 1, cutAfterBytes: 160)

                let posts = try await Self.posts(4, from: fixture.api.posts.liveFeed(after: ids[0] - 1))

                #expect(posts.map(\.text) == ["cut 1", "cut 2", "cut 3", "cut 4"])
                #expect(fixture.server.arrivals.count(.liveFeed) == 2)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aLineOfAHundredMegabytesFailsTheFeedWithinItsLimit(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                _ = try await fixture.logIn()
                fixture.server.faults[.liveFeed] = Fault(endlessLine: true)

                let error = await #expect(throws: ServiceError.self) {
                    try await Self.posts(1, from: fixture.api.posts.liveFeed())
                }

                #expect(error?.caseName == "badServerResponse")
                #expect(error?.urlError?.localizedDescription.contains("longer than 1048576 bytes") == true)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aFeedTheServerNeverAnswersEndsAtItsStallDeadlineAfterItsReconnections(over transport: TransportKind) async throws {
            // Counted at the client: under load, a connection can reach its stall deadline before
            // the server has read its head, so the server's count may be lower.
            let tally = Tally()
            try await Fixture.with(over: transport, eventMonitors: [tally]) { fixture in
                _ = try await fixture.logIn()
                fixture.server.faults.hold(.liveFeed)
                defer { fixture.server.faults.release(.liveFeed) }
                let silent = StreamResource<ServerSentEvent>.events("feed/live", timeout: 1, reconnectionDelay: 0,
                                                                    maximumReconnections: 1)
                let attemptsBefore = tally.started.value

                await #expect(throws: ServiceError.timedOut) {
                    try await Self.posts(1, from: fixture.api.client.stream(silent))
                }
                #expect(tally.retried.value == 1, "one reconnection, then the stream gives up")
                #expect(tally.started.value - attemptsBefore == 2, "the first connection, and one reconnection")
                #expect(await fixture.server.arrivals.wait(for: 1, at: .liveFeed))
                #expect(fixture.server.arrivals.count(.liveFeed) <= 2)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aFeedEndsWithItsScreenAndTheHostServesTheNextRequest(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                _ = try await fixture.logIn()
                let screen = RequestGroup()
                let feed = fixture.api.posts.liveFeed(after: try await Self.newestPost(fixture), group: screen)
                _ = try await fixture.api.posts.create(PostDraft(text: "seen"))
                var iterator = feed.makeAsyncIterator()
                #expect(try await iterator.next().flatMap(Post.init(event:))?.text == "seen")

                screen.cancelAll()

                await #expect(throws: ServiceError.cancelled) { _ = try await iterator.next() }
                #expect(try await fixture.api.client.value(for: .me).name == "Ada")
            }
        }
    }
}

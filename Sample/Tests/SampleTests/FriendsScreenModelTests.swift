import Foundation
import NetworkScheduler
import NetworkSchedulerTesting
import SocialApp
import Testing

/// The friends screen's model controller tested as an app team would: only with
/// NetworkSchedulerTesting (a scripted stub, a seeded interleaver, an audit), no server.
@Suite struct FriendsScreenModelTests {
    static let me = #"{"id": 1, "name": "Ada", "email": null}"#
    static let friends = #"[{"id": 2, "name": "Grace", "email": null}, {"id": 3, "name": "Alan", "email": null}]"#
    static let page = #"{"page": 1, "posts": [], "nextPage": null}"#

    /// The app's networking over `transport`, audited.
    static func app(_ transport: StubTransport, audit: SchedulerAudit) -> SocialAPI {
        SocialAPI(baseURL: URL(string: "https://social.test")!,
                  configuration: RequestScheduler.Configuration(transport: transport, eventMonitors: [audit]))
    }

    @Test func fiftyScreensOpenedAtOnceShareOneCallPerRequest() async {
        // Given every answer held until all fifty screens have asked
        let audit = SchedulerAudit()
        let transport = StubTransport { _ in .hold }
        let api = Self.app(transport, audit: audit)
        let loaded = EventLog<Int>()

        // When fifty screens of the same user open at once, in an order drawn from the seed
        async let run = Interleaver(seed: 0xF00D).run(callers: 50) { index in
            let screen = FriendsScreenModel(api: api)
            audit.watch(screen, as: "screen \(index)")
            screen.load(user: 1, prefetchPages: 2)
            loaded.append(index)
            await screen.settled()
            return screen.content
        }
        await loaded.wait(for: 50)
        await transport.arrivals.wait(for: 4)
        transport.release(path: "/me", with: .json(Self.me))
        transport.release(path: "/users/1/friends", with: .json(Self.friends))
        transport.release(path: "/feed", with: .json(Self.page))
        transport.release(path: "/feed", with: .json(Self.page))

        // Then each request reached the network once, every screen shows its friends, every
        // caller ended once, and no screen is left
        let screens = await run
        #expect(screens.unfinished.isEmpty, "\(screens)")
        #expect(screens.values.allSatisfy { $0.friends.map(\.name) == ["Grace", "Alan"] && $0.errors.isEmpty })
        let report = await audit.report(for: api.scheduler)
        #expect(report.isClean, "\(report)")
        #expect(report.callers == 50 * 4)
        #expect(report.networkCalls("GET /me") == 1, "\(report)")
        #expect(report.networkCalls("GET /users/1/friends") == 1, "\(report)")
        #expect(report.networkCalls("GET /feed") == 2, "\(report)")
    }

    @Test func aScreenOpenedOnABusyHostWaitsInLineThenLoads() async {
        // Given a host that runs one request at a time, holding each answer
        let audit = SchedulerAudit()
        let transport = StubTransport(maximumConnectionsPerHost: 1) { _ in .hold }
        let api = Self.app(transport, audit: audit)
        let screen = FriendsScreenModel(api: api)

        // When the screen loads its profile, its friends and a page of its feed
        screen.load(user: 1, prefetchPages: 1)
        await audit.begins.wait(for: 3)
        await transport.arrivals.wait(for: 1)

        // Then one request is on the wire and two wait in line, each sent as the host answers
        #expect(api.scheduler.census.callers == 3)
        #expect(transport.heldCount == 1)
        #expect(transport.release(path: "/me", with: .json(Self.me)))
        await transport.arrivals.wait(for: 2)
        #expect(transport.release(path: "/users/1/friends", with: .json(Self.friends)))
        await transport.arrivals.wait(for: 3)
        #expect(transport.release(path: "/feed", with: .json(Self.page)))
        await screen.settled()
        #expect(screen.content.friends.map(\.name) == ["Grace", "Alan"])
        #expect(api.scheduler.census == RequestScheduler.Census())
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func screensLeftAtRandomMomentsEndEveryRequestAndLeaveNothing(seed: UInt64) async {
        let audit = SchedulerAudit()
        let transport = StubTransport(script: [
            "GET /me": [.delayed(0.005, .json(Self.me))],
            "GET /users/1/friends": [.delayed(0.01, .json(Self.friends))],
            "GET /feed": [.delayed(0.02, .json(Self.page))],
        ])
        let api = Self.app(transport, audit: audit)

        let run = await Interleaver(seed: seed).run(callers: 40, cancelling: 0.5) { index in
            let screen = FriendsScreenModel(api: api)
            audit.watch(screen, as: "screen \(index)")
            screen.load(user: 1, prefetchPages: 3)
            await withTaskCancellationHandler { await screen.settled() } onCancel: { screen.leave() }
            return screen.content
        }

        #expect(run.unfinished.isEmpty, "\(run)")
        let report = await audit.report(for: api.scheduler)
        #expect(report.isClean, "seed \(seed): \(report)")
        #expect(report.callers == 40 * 5)
    }

    @Test func a429PausesTheFeedUntilTheTestMovesTheClock() async throws {
        let clock = VirtualClock()
        let transport = StubTransport(clock: clock, script: [
            "GET /feed": [.tooManyRequests(retryAfter: 30), .json(Self.page)],
        ])
        var configuration = RequestScheduler.Configuration(transport: transport)
        configuration.clock = clock
        let api = SocialAPI(baseURL: URL(string: "https://social.test")!, configuration: configuration)
        let pages = EventLog<Result<FeedPage, ServiceError>>()

        api.posts.loadFeed(page: 1) { pages.append($0) }
        await transport.answered.wait(for: 1)   // the 429 is handled: the host is paused for 30 s
        clock.advance(by: 30)                   // only the clock's time passes: the probe goes out

        #expect(try await pages.wait(for: 1).first?.get().page == 1)
        #expect(transport.count("GET /feed") == 2)
    }

    /// A friends screen written the way trackers' bug reports describe: its completions hold
    /// it strongly, and leaving it cancels nothing.
    final class LeakyFriendsScreen: Sendable {
        private let api: SocialAPI
        private let friends = EventLog<[User]>()

        init(api: SocialAPI) {
            self.api = api
        }

        func load(user: User.ID) {
            api.friends.loadFriends(of: user, priority: .high) { result in
                if let users = try? result.get() { self.friends.append(users) }
            }
        }

        func leave() {}
    }

    @Test func theAuditCatchesAScreenThatLeavesItsRequestsBehind() async {
        // Given the leaky screen, opened and left while its friends are still loading
        let audit = SchedulerAudit()
        let transport = StubTransport { _ in .hold }
        let api = Self.app(transport, audit: audit)
        do {
            let screen = LeakyFriendsScreen(api: api)
            audit.watch(screen, as: "the leaky screen")
            screen.load(user: 1)
            screen.leave()
        }
        await transport.arrivals.wait(for: 1)

        // Then the audit names the request it left running and the screen it keeps alive
        let report = await audit.report(for: api.scheduler, timeout: 0.5)
        #expect(!report.isClean)
        #expect(report.neverEnded.count == 1)
        #expect(report.objectsAlive == ["the leaky screen"])
        #expect(report.census.callers == 1)

        // While the real screen, left the same way, passes the same audit.
        let fixed = SchedulerAudit()
        let fixedApp = Self.app(StubTransport { _ in .hold }, audit: fixed)
        do {
            let screen = FriendsScreenModel(api: fixedApp)
            fixed.watch(screen, as: "the friends screen")
            screen.load(user: 1)
            screen.leave()
        }
        let fixedReport = await fixed.report(for: fixedApp.scheduler)
        #expect(fixedReport.isClean, "\(fixedReport)")
        transport.release(with: .json(Self.friends))
    }
}

/// The DocC article "Testing Your Model Controllers" shows these tests: each of its Swift
/// blocks but the manifest's must be in this file, as written (whatever its indentation).
@Test func theTestingArticleShowsThisFilesTestsAsWritten() throws {
    let here = URL(fileURLWithPath: #filePath)
    let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let article = try String(contentsOf: root.appendingPathComponent(
        "Sources/NetworkScheduler/NetworkScheduler.docc/TestingYourModelControllers.md"), encoding: .utf8)
    let lines = { (text: String) in
        text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
    }
    let source = lines(try String(contentsOf: here, encoding: .utf8)).joined(separator: "\n")
    let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        .filter { !$0.hasPrefix(".testTarget") }
    #expect(blocks.count == 4)
    for block in blocks {
        let code = lines(block).joined(separator: "\n").trimmingCharacters(in: .newlines)
        #expect(source.contains(code), "the article shows code this file does not have:\n\(block)")
    }
}

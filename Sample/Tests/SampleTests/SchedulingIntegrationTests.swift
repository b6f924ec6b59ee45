import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialApp
import SocialServer
import NetworkSchedulerTesting
import NIOConcurrencyHelpers
import Testing

/// The scheduler's contracts, crossing the real network stack and counted at the server.
@Suite struct SchedulingIntegrationTests {
    @Test(arguments: TransportKind.allCases)
    func identicalPostsFromTwoScreensReachTheServerOnce(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            let draft = PostDraft(text: "Hello from two screens")
            let first = ComposeScreenModel(api: fixture.api)
            let second = ComposeScreenModel(api: fixture.api)

            async let a = first.submit(draft)
            async let b = second.submit(draft)
            let (resultA, resultB) = await (a, b)

            let postA = try resultA.get()
            let postB = try resultB.get()
            #expect(postA.value == postB.value)
            #expect(postA.statusCode == 201 && postA.wasShared && postB.wasShared)
            #expect(fixture.server.arrivals.count(.createPost) == 1)
        }
    }

    /// A draft of many fields, a nested place and arrays: on Linux, Foundation's encoder writes
    /// its keys in an order that varies between encodes, and 200 taps of such a draft once
    /// reached the server 62–65 times, all but one answered 409.
    @Test(arguments: TransportKind.allCases)
    func aDraftOfManyFieldsTappedFiftyTimesFromThreadsReachesTheServerOnce(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, budget: 1, eventMonitors: [tally]) { fixture in
            // Given a busy host, so that every tap waits while the others come.
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()
            let draft = PostDraft(text: "Lunch at the pier?", audience: .everyone, tags: ["food", "friday"], mentions: [2, 3],
                                  place: PostDraft.Place(name: "Pier", latitude: 50.8, longitude: -1.1), replyTo: 1)
            let fromThreads = EventLog<Result<Post, ServiceError>>()
            DispatchQueue.concurrentPerform(iterations: 25) { _ in
                fixture.api.client.send(.create(draft)) { fromThreads.append($0) }
            }
            let fromTasks = EventLog<Result<Reply<Post>, ServiceError>>()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<25 {
                    group.addTask { fromTasks.append(await ComposeScreenModel(api: fixture.api).submit(draft)) }
                }
                // When the host frees its slot, once every tap waits (after the login and `/me`).
                #expect(await tally.admitted.wait(for: 52) == 52)
                try? await releaseTheSlot()
            }

            // Then one POST reached the server, and every tap got its post.
            let replies = try await fromTasks.wait(for: 25).map { try $0.get() }
            let posts = try await fromThreads.wait(for: 25).map { try $0.get() } + replies.map(\.value)
            #expect(Set(posts.map(\.id)).count == 1)
            #expect(replies.allSatisfy { $0.statusCode == 201 && $0.wasShared })
            #expect(fixture.server.arrivals.count(.createPost) == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func postsWithDifferentBodiesAreNotShared(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            async let a = ComposeScreenModel(api: fixture.api).submit(PostDraft(text: "one"))
            async let b = ComposeScreenModel(api: fixture.api).submit(PostDraft(text: "two"))
            let (postA, postB) = try await (a.get().value, b.get().value)

            #expect(postA.id != postB.id)
            #expect(fixture.server.arrivals.count(.createPost) == 2)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theSamePostSentAgainLaterIsTheServersConflict(over transport: TransportKind) async throws {
        // Deduplication shares calls that overlap; a later resend is the server's business.
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            let compose = ComposeScreenModel(api: fixture.api)
            _ = try await compose.submit(PostDraft(text: "once")).get()
            let again = await compose.submit(PostDraft(text: "once"))

            guard case .failure(.server(let response)) = again else {
                Issue.record("expected 409, got \(again)")
                return
            }
            #expect(response.statusCode == 409)
            #expect(response.message == "already exists")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCallCancelledBeforeItStartsNeverArrives(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 1) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.user] = .latency(milliseconds: 300)
            let blocker = Task { try await fixture.api.client.value(for: .user(1)) }
            #expect(await fixture.server.arrivals.wait(for: 1, at: .user))
            let queued = fixture.api.friends.loadFriends(of: 1) { _ in }

            queued.cancel()
            _ = try await blocker.value
            _ = try await fixture.api.client.value(for: .me) // through the same queue, after it

            #expect(fixture.server.arrivals.count(.friends) == 0)
            #expect(fixture.server.arrivals.count(.me) == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func leavingAScreenCancelsItsRequestsAndUnsentOnesNeverArrive(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 1) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.user] = .latency(milliseconds: 300)
            let screen = FriendsScreenModel(api: fixture.api)
            screen.loadProfiles(Array(1...6))
            #expect(await fixture.server.arrivals.wait(for: 1, at: .user))

            screen.leave()
            await screen.settled()

            #expect(screen.content.errors.count == 6)
            #expect(screen.content.errors.allSatisfy { $0 == .cancelled })
            #expect(fixture.server.arrivals.count(.user) == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aHiddenScreensRequestsReachTheServerAfterThoseOfTheScreenInSight(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 1) { fixture in
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()
            let hidden = FriendsScreenModel(api: fixture.api)
            let inSight = FriendsScreenModel(api: fixture.api)
            hidden.loadProfiles([1, 2])
            inSight.loadProfiles([3, 4])

            hidden.hide()
            try await releaseTheSlot()
            await hidden.settled()
            await inSight.settled()

            let users = fixture.server.arrivals.all.filter { $0.route == .user }.map { $0.target.split(separator: "/").last! }
            #expect(users == ["3", "4", "1", "2"])
            #expect(hidden.content.errors.isEmpty && hidden.content.friends.count == 2)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func whatAnUrgentRequestWaitsForIsLiftedAheadOfTheLineAndItsSlotKeptForIt(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 1) { fixture in
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()
            let ended = WaitableCount()
            fixture.api.client.send(.user(1)) { _ in ended.add() }
            let prefetch = fixture.api.client.send(.feed(page: 1), priority: .background) { _ in ended.add() }
            fixture.api.client.send(.user(2), priority: .critical, after: [prefetch]) { _ in ended.add() }

            try await releaseTheSlot()
            #expect(await ended.wait(for: 3) == 3)

            let order = fixture.server.arrivals.all.filter { $0.route == .user || $0.route == .feed }
                .map { $0.route == .feed ? "feed" : String($0.target.split(separator: "/").last!) }
            // The background prefetch went first, lifted by the critical request waiting for it;
            // the slot it freed was kept for that request (sent once the prefetch's answer was
            // delivered), ahead of the normal one that was waiting.
            #expect(order == ["feed", "2", "1"])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func loggingOutCancelsEveryScreensRequestsAndUnsentOnesNeverArrive(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 1) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.user] = .latency(milliseconds: 300)
            let profiles = FriendsScreenModel(api: fixture.api)
            let feed = FriendsScreenModel(api: fixture.api)
            profiles.loadProfiles([1, 2, 3])
            feed.load(user: 1, prefetchPages: 2)
            #expect(await fixture.server.arrivals.wait(for: 1, at: .user))

            fixture.api.auth.logOut()
            await profiles.settled()
            await feed.settled()

            let errors = profiles.content.errors + feed.content.errors
            #expect(errors.count == 7 && errors.allSatisfy { $0 == .cancelled })
            #expect(fixture.server.arrivals.count(.user) == 1)
            #expect(fixture.server.arrivals.count(.me) + fixture.server.arrivals.count(.friends) + fixture.server.arrivals.count(.feed) == 0)
            #expect(fixture.api.scheduler.census.callers == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSuspendedScreensRequestsReachTheServerOnlyOnceItResumes(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 1) { fixture in
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()
            let screen = RequestGroup()
            let ended = WaitableCount()
            fixture.api.client.send(.user(1), group: screen) { _ in ended.add() }
            fixture.api.client.send(.user(2)) { _ in ended.add() }
            screen.suspend()

            try await releaseTheSlot()
            #expect(await ended.wait(for: 1) == 1)
            #expect(fixture.server.arrivals.all.filter { $0.route == .user }.map(\.target).map { $0.hasSuffix("/users/2") } == [true])

            screen.resume()
            #expect(await ended.wait(for: 2) == 2)
            #expect(fixture.server.arrivals.count(.user) == 2)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aPrefetchThatWaitedTooLongGoesAheadOfRequestsSentAfterIt(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, budget: 1, eventMonitors: [tally], maximumWait: [.background: 0.05, .low: 0.05]) { fixture in
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()
            let ended = WaitableCount()
            fixture.api.client.send(.feed(page: 1), priority: .background) { _ in ended.add() }
            // Background to low, then low to normal: as urgent now as what the screen sends next.
            #expect(await tally.promoted.wait(for: 2) == 2)
            fixture.api.client.send(.user(1)) { _ in ended.add() }

            try await releaseTheSlot()
            #expect(await ended.wait(for: 2) == 2)

            let order: [Route] = fixture.server.arrivals.all.map(\.route).filter { $0 == .feed || $0 == .user }
            #expect(order == [.feed, .user])
            #expect(fixture.api.scheduler.census.callers == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCallSharedWithAnotherScreenKeepsRunningForIt(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let session = try await fixture.logIn()
            fixture.server.faults[.friends] = .latency(milliseconds: 200)
            let leaving = FriendsScreenModel(api: fixture.api)
            let staying = FriendsScreenModel(api: fixture.api)
            leaving.load(user: session.user.id, prefetchPages: 1)
            staying.load(user: session.user.id, prefetchPages: 1)

            leaving.leave()
            await staying.settled()

            #expect(staying.content.errors.isEmpty)
            #expect(!staying.content.friends.isEmpty)
            #expect(fixture.server.arrivals.count(.friends) == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func waitingRequestsReachTheServerInPriorityOrder(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport, budget: 1) { fixture in
            _ = try await fixture.logIn()
            fixture.server.faults[.user] = .latency(milliseconds: 300)
            let blocker = Task { try await fixture.api.client.value(for: .user(1)) }
            #expect(await fixture.server.arrivals.wait(for: 1, at: .user))

            let order: [(Int, RequestPriority)] = [(1, .background), (2, .low), (3, .critical), (4, .normal), (5, .high), (6, .low)]
            for (page, priority) in order {
                fixture.api.posts.loadFeed(page: page, priority: priority) { _ in }
            }
            _ = try await blocker.value
            #expect(await fixture.server.arrivals.wait(for: order.count, at: .feed))

            let pages = fixture.server.arrivals.all.filter { $0.route == .feed }.map(\.target)
            #expect(pages == ["/feed?page=3", "/feed?page=5", "/feed?page=4", "/feed?page=2", "/feed?page=6", "/feed?page=1"])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDependentRequestWaitsForTheLoginAndCarriesItsToken(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let me = NIOLockedValueBox<Result<User, ServiceError>?>(nil)
            let done = WaitableCount()
            let login = fixture.api.auth.logIn(Fixture.ada) { _ in }
            fixture.api.friends.loadMe(priority: .high, after: [login]) { result in
                me.withLockedValue { $0 = result }
                done.add()
            }
            await done.wait(for: 1)

            let name = try me.withLockedValue { try $0?.get() }?.name
            #expect(name == "Ada")
            #expect(fixture.server.arrivals.all.map(\.route) == [.login, .me])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aFailedLoginFailsItsDependentsWhichNeverArrive(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let me = NIOLockedValueBox<Result<User, ServiceError>?>(nil)
            let done = WaitableCount()
            let login = fixture.api.auth.logIn(Credentials(username: "ada", password: "wrong")) { _ in }
            fixture.api.friends.loadMe(after: [login]) { result in
                me.withLockedValue { $0 = result }
                done.add()
            }
            await done.wait(for: 1)

            let error = me.withLockedValue { $0?.failure }
            #expect(error?.rootCause.statusCode == 401)
            if case .dependencyFailed? = error {} else { Issue.record("expected dependencyFailed, got \(String(describing: error))") }
            #expect(fixture.server.arrivals.all.map(\.route) == [.login])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theStatsEndpointCountsArrivals(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            _ = try await fixture.logIn()
            _ = try await fixture.api.client.value(for: .me)
            let stats = try await fixture.api.client.value(for: Resource<Stats>(path: "_stats"))
            #expect(stats.counts["POST /login"] == 1)
            #expect(stats.counts["GET /me"] == 1)
            #expect(stats.arrivals.map(\.target) == ["/login", "/me"])
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

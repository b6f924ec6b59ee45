import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerTesting
import SocialApp
import SocialServer

/// The story the demo tells, one step per capability.
struct Scenario {
    let api: SocialAPI
    /// The embedded server, or nil when running against another one (then faults cannot be set).
    let server: SocialServer?
    let narrator: Narrator
    let metrics: MetricsCollector
    /// What ran in the host's slots, drawn for the steps that are better seen than read.
    let timeline: SlotTimeline
    /// What the scheduler believes of the network, switched by the connectivity step.
    let connectivity: StubConnectivity
    let burst: Int

    /// What the server saw, through a client and scheduler of its own made once.
    let stats: ServerStats

    /// The steps, in order, as `--help` lists them.
    static let steps = [
        "Log in, then load the friends screen: the login first, profile and friends before the prefetch",
        "Two screens submit the same post at once: without deduplication, then with it",
        "The user leaves a screen: what had not started never reaches the server",
        "A burst of identical calls: one network call answers them all",
        "A screen hidden, then shown again: its requests yield, then go ahead",
        "A 429 with Retry-After pauses the whole host; one probe goes first",
        "A 503 with Retry-After: the call is retried when the server said",
        "A misbehaving server: each failure comes back as its own typed error",
        "A keyed POST whose connection is lost: sent again, created once",
        "Tokens expire under twenty requests: one refresh for all of them",
        "The device goes offline: requests wait, and go when it is back",
        "A gateway serves a hundred clients over AsyncHTTPClient: one upstream call per profile",
        "A 16 MB upload at low priority: the screen's calls keep their slot",
        "A download the server drops halfway: resumed where it stopped",
        "A live feed: it survives a cut connection, and ends with its screen",
        "A write survives the app being killed mid-POST: sent again by its key, created once",
        "A profile read again: from the cache without a slot, then a 304, then stale while one revalidation runs",
    ]

    func run() async throws {
        try await logInAndLoadTheFriendsScreen()
        try await twoScreensSubmitTheSamePost()
        try await theUserLeavesAScreen()
        try await aBurstOfIdenticalCalls()
        try await aScreenHiddenAndShownAgain()
        try await aHostPausedByA429()
        try await aCallRetriedWhenTheServerSaid()
        try await aMisbehavingServersTypedErrors()
        try await aKeyedPostAfterALostConnection()
        try await tokensExpireUnderManyRequests()
        try await theDeviceGoesOffline()
        try await aGatewayServesManyClients()
        try await anUploadAtLowPriority()
        try await aDownloadResumedAfterTheServerDropsIt()
        try await aLiveFeedEndsWithItsScreen()
        try await aWriteSurvivesTheAppBeingKilled()
        try await aProfileReadAgainComesFromTheCache()
    }

    /// 1: the login is critical; the screen's visible data waits for it at high priority while
    /// the feed is prefetched at low priority.
    private func logInAndLoadTheFriendsScreen() async throws {
        narrator.step(1, Self.steps[0])
        server?.faults[.feed] = .latency(milliseconds: 50)
        defer { server?.faults[.feed] = nil }
        let before = try await stats.fetch().arrivals.count

        // Which the scheduler started first: V for what the screen shows, P for a prefetch. (The
        // server's arrival order can differ: each slot has its own connection.)
        timeline.record { request in
            switch request.url?.path {
            case "/me": "V"
            case let path? where path.hasSuffix("/friends"): "V"
            case "/feed": "P"
            default: nil
            }
        }
        let screen = FriendsScreenModel(api: api)
        let login = api.auth.logIn(Credentials(username: "ada", password: "secret")) { [narrator] result in
            narrator.say("   logged in: \((try? result.get().user.name) ?? "failed")")
        }
        screen.load(user: 1, after: [login].first, prefetchPages: 5)
        await screen.settled()

        let content = screen.content
        narrator.say("   \(content.me?.name ?? "nobody") has \(content.friends.count) friends; \(content.feedPages.count) feed pages prefetched")
        let arrived = try await stats.fetch().arrivals.dropFirst(before).map(\.route)
        narrator.say("   the server saw: " + arrived.map(\.rawValue).joined(separator: ", "))
        narrator.check(content.errors.isEmpty && content.me != nil && !content.friends.isEmpty && content.feedPages.count == 5,
                       "the screen loaded everything")
        narrator.check(arrived.first == .login, "the login reached the server before the requests that depend on it")
        let started = timeline.tasks.map(\.label)
        narrator.say("   the scheduler started, in order: " + started.map(String.init).joined(separator: " ") + "  (V visible, P prefetch)")
        let lastVisible = started.lastIndex(of: "V") ?? started.count
        let firstPrefetch = started.firstIndex(of: "P") ?? started.count
        narrator.check(started.count == 7 && lastVisible < firstPrefetch, "profile and friends started before any prefetch")
    }

    /// 2: the bug that started it all: two screens create the same post at the same moment.
    /// First as it was (each screen its own POST), then with the scheduler sharing the call.
    private func twoScreensSubmitTheSamePost() async throws {
        narrator.step(2, Self.steps[1])
        narrator.say("   Without deduplication (the resource opts out):")
        let tag = UUID().uuidString.prefix(8)
        let unshared = {
            var resource = Resource<Post>.create(PostDraft(text: "Shipping NetworkScheduler! (\(tag), before)"))
            resource.deduplication = .disabled
            return resource
        }()
        let beforeUnshared = try await stats.count(.createPost)
        async let x = Self.outcome { [api, unshared] () async throws(ServiceError) in try await api.client.value(for: unshared) }
        async let y = Self.outcome { [api, unshared] () async throws(ServiceError) in try await api.client.value(for: unshared) }
        let unsharedResults = await [x, y]
        let unsharedPOSTs = try await stats.count(.createPost) - beforeUnshared
        let alreadyExists = unsharedResults.compactMap { result -> ServiceError.ServerResponse? in
            guard case .failure(let error) = result else { return nil }
            return error.serverResponse
        }.filter { $0.statusCode == 409 }
        narrator.say("   POSTs at the server: \(unsharedPOSTs); one screen got: \(alreadyExists.first?.message ?? "no error")")
        narrator.check(unsharedPOSTs == 2 && alreadyExists.count == 1,
                       "without deduplication: two POSTs, and one screen shows an \"already exists\" alert")

        narrator.say("   With the scheduler sharing identical requests (the default):")
        let before = try await stats.count(.createPost)
        let draft = PostDraft(text: "Shipping NetworkScheduler! (\(tag), after)")
        let first = ComposeScreenModel(api: api)
        let second = ComposeScreenModel(api: api)

        async let a = first.submit(draft)
        async let b = second.submit(draft)
        let (resultA, resultB) = await (a, b)
        let arrived = try await stats.count(.createPost) - before

        let postA = try? resultA.get()
        let postB = try? resultB.get()
        narrator.say("   screen A got post #\(postA?.value.id ?? -1), screen B got post #\(postB?.value.id ?? -1); POSTs at the server: \(arrived)")
        narrator.check(postA != nil && postA?.value == postB?.value, "both screens got the same post, and no \"already exists\" alert")
        narrator.check(postA?.wasShared == true && postB?.wasShared == true, "each screen knows its answer was shared")
        narrator.check(arrived == 1, "exactly one POST reached the server")
    }

    /// 3: leaving a screen cancels its group; calls that had not started never reach the server.
    private func theUserLeavesAScreen() async throws {
        narrator.step(3, Self.steps[2])
        server?.faults[.user] = .latency(milliseconds: 200)
        defer { server?.faults[.user] = nil }
        let arrivedBefore = try await stats.count(.user)
        let startedBefore = metrics.snapshot.networkCalls

        let screen = FriendsScreenModel(api: api)
        screen.loadProfiles(Array(1...8))
        if let server { await server.arrivals.wait(for: arrivedBefore + 1, at: .user) }
        screen.leave()
        await screen.settled()

        let cancelled = screen.content.errors.count { $0 == .cancelled }
        let started = metrics.snapshot.networkCalls - startedBefore
        let arrived = try await stats.count(.user) - arrivedBefore
        narrator.say("   cancelled: \(cancelled) of 8; on the wire when the user left: \(started); seen by the server: \(arrived)")
        narrator.check(cancelled == 8, "every request of the screen ended as cancelled")
        narrator.check(started <= 2 && arrived <= started,
                       "the \(8 - started) requests that had not started never reached the server")
    }

    /// 4: many callers ask for the same thing at once; one network call serves them all.
    private func aBurstOfIdenticalCalls() async throws {
        narrator.step(4, Self.steps[3] + " (\(burst) callers)")
        server?.faults[.feed] = .latency(milliseconds: 300)
        defer { server?.faults[.feed] = nil }
        let before = try await stats.count(.feed)

        var succeeded = 0
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<burst {
                group.addTask { (try? await api.client.value(for: .feed(page: 1))) != nil }
            }
            var done = 0
            for await ok in group {
                done += 1
                if ok { succeeded += 1 }
                narrator.progress(done, of: burst)
            }
        }
        let arrived = try await stats.count(.feed) - before
        narrator.say("   \(succeeded) callers got the page; network calls the server saw: \(arrived)")
        narrator.check(succeeded == burst, "every caller got the page")
        narrator.check(server == nil ? arrived < burst : arrived == 1, "the burst shared the network call")
    }

    /// 5: live priority: a screen goes behind another while it loads, then comes back.
    private func aScreenHiddenAndShownAgain() async throws {
        narrator.step(5, Self.steps[4])
        narrator.say("   Screen A loads five profiles, then screen B five others; A is hidden at once, and shown again later")
        // The server answers the profiles a batch of the host's slots at a time, so that what
        // starts while A is hidden, and after, is decided by the scheduler and not by how fast
        // a busy machine answers.
        server?.faults.hold(.user)
        defer { server?.faults.release(.user) }
        let before = try await stats.fetch().arrivals.count
        let budget = api.scheduler.hostBudget
        let usersBefore = server?.arrivals.count(.user) ?? 0

        timeline.record { request in
            guard let id = Self.userID(in: request) else { return nil }
            return id <= 5 ? "A" : "B"
        }
        let a = FriendsScreenModel(api: api)
        let b = FriendsScreenModel(api: api)
        a.loadProfiles(Array(1...5))
        b.loadProfiles(Array(6...10))
        a.hide()
        if let server, 2 * budget <= 10 {
            // One answer at a time, each freeing one slot for one request: A's first are on the
            // wire; as they are answered B's go, while A is hidden; A is shown again once those
            // have reached the server, before they are answered.
            await server.arrivals.wait(for: usersBefore + budget, at: .user)
            for arrived in budget..<10 {
                if arrived == 2 * budget { a.show() }
                server.faults.releaseOldest(.user)
                await server.arrivals.wait(for: usersBefore + arrived + 1, at: .user)
            }
            server.faults.release(.user)
        } else {
            a.show()
        }
        await a.settled()
        await b.settled()

        let screens = try await stats.fetch().arrivals.dropFirst(before).filter { $0.route == .user }
            .compactMap { Int($0.target.split(separator: "/").last ?? "") }.map { $0 <= 5 ? "A" : "B" }
        narrator.say("   the server saw, in order: " + screens.joined(separator: " "))
        narrator.say("   the host's \(budget) slots over time (A hidden, then shown again):")
        for line in timeline.render(slots: budget) { narrator.say(line) }
        let errors = a.content.errors + b.content.errors
        if !errors.isEmpty { narrator.say("   errors: " + errors.map(\.localizedDescription).joined(separator: "; ")) }
        narrator.check(errors.isEmpty && screens.count == 10, "both screens loaded everything")
        let whileHidden = screens.dropFirst(budget).prefix(budget)
        narrator.check(server == nil || whileHidden.allSatisfy { $0 == "B" },
                       "while A was hidden, only B's requests started (A's first \(budget) were already on the wire)")
        // With a budget of two: A A B B A A A B B B.
        let rest = screens.dropFirst(2 * budget)
        narrator.check(server == nil || Array(rest) == Array(repeating: "A", count: 5 - budget) + Array(repeating: "B", count: 5 - budget),
                       "shown again, A's remaining requests went ahead of B's")
    }

    /// 6: host health: a 429 with `Retry-After` pauses the whole host, not only the refused call.
    private func aHostPausedByA429() async throws {
        narrator.step(6, Self.steps[5])
        narrator.say("   The server answers the feed 429, Retry-After: 1 s, as a screen asks for six profiles")
        guard let server else {
            narrator.say("   (skipped: it needs the embedded server, to make it answer 429)")
            return
        }
        server.faults[.feed] = Fault(status: 429, retryAfterSeconds: 1, failFirst: 1)
        server.faults[.user] = .latency(milliseconds: 150)
        defer {
            server.faults[.feed] = nil
            server.faults[.user] = nil
        }
        timeline.record { request in
            if request.url?.path == "/feed" { return "F" }
            return Self.userID(in: request) == nil ? nil : "U"
        }
        let feed = Task { [api] in try? await api.client.value(for: .feed(page: 7)) }
        // Bounded: the 429 comes back within a few milliseconds on loopback.
        for _ in 0..<400 {
            if case .paused = api.scheduler.health(of: api.client.baseURL) { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        let screen = FriendsScreenModel(api: api)
        screen.loadProfiles(Array(1...6))
        await screen.settled()
        let page = await feed.value

        narrator.say("   F = the feed (refused, then retried), U = a profile; ‖ = the host paused:")
        for line in timeline.render(slots: api.scheduler.hostBudget) { narrator.say(line) }
        let tasks = timeline.tasks
        let pause = timeline.pauses.first
        // A millisecond of slack: the pause's end is read from a date, the tasks' from the uptime.
        let duringPause = tasks.filter { task in
            pause.map { task.start > $0.start && task.start + 1_000_000 < ($0.end ?? .max) } ?? false
        }
        narrator.check(pause?.end.map { $0 - pause!.start >= 900_000_000 } == true, "the host paused for the second the server asked")
        narrator.check(duringPause.isEmpty, "no request of the host started while it was paused, not only the feed")
        let afterPause = tasks.filter { task in pause?.end.map { task.start + 1_000_000 >= $0 } ?? false }
        let probe = afterPause.first
        let opened = timeline.openings.first { $0 > (probe?.start ?? .max) }
        narrator.check(probe != nil && opened.map { opened in afterPause.dropFirst().allSatisfy { $0.start >= opened } } == true,
                       "one probe went first; the rest started once its answer came")
        narrator.check(screen.content.errors.isEmpty && page != nil && api.scheduler.health(of: api.client.baseURL) == .available,
                       "the profiles and the feed loaded, and the host is available again")
    }

    /// What `body` returned or threw.
    static func outcome<Value>(_ body: () async throws(ServiceError) -> Value) async -> Result<Value, ServiceError> {
        do throws(ServiceError) {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// The user ID of a `GET /users/{id}`, if it is one.
    private static func userID(in request: URLRequest) -> Int? {
        guard let parts = request.url?.pathComponents, parts.count == 3, parts[1] == "users" else { return nil }
        return Int(parts[2])
    }
}

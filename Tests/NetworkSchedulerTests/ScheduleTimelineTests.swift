import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkSchedulerTesting
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerTimeline
#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite struct ScheduleTimelineTests {
    /// A harness on a virtual clock whose recorder hears each event before the test's own
    /// recorder does, so that a test that waits for an event knows the recorder has it.
    private static func harness(_ clock: VirtualClock, budget: Int = 1, retryPolicy: RetryPolicy = .never,
                                reply: @escaping @Sendable (URLRequest) -> StubResponse = { _ in .hold })
        -> (Harness, ScheduleRecorder) {
        let recorder = ScheduleRecorder(clock: clock)
        let harness = Harness(budget: budget, slotsReservedAboveLowPriority: 0, retryPolicy: retryPolicy, reply: reply) {
            $0.clock = clock
            $0.eventMonitors.insert(recorder, at: 0)
        }
        return (harness, recorder)
    }

    /// One host, a budget of one. At 0 s `a` starts; at 1 s `b` joins it and `c` (low) waits;
    /// `d` waits for `a`. At 2 s `a` ends, and `d` starts before `c`; at 3 s `d` ends and `c`
    /// starts; at 4 s `c` ends. Each release waits for its request's arrival at the transport,
    /// not for its `.started` event: that is told just before the request is handed over.
    private static func knownRun() async -> ScheduleTimeline {
        let clock = VirtualClock()
        let (harness, recorder) = harness(clock)
        let outcomes = Outcomes<User>()
        let a = harness.api.send(Resource<User>(path: "a"), priority: .high, completion: outcomes.completion("a"))
        await harness.transport.arrivals.wait(for: 1)
        clock.advance(by: 1)
        harness.api.send(Resource<User>(path: "a"), priority: .high, completion: outcomes.completion("b"))
        harness.api.send(Resource<User>(path: "c"), priority: .low, completion: outcomes.completion("c"))
        harness.api.send(Resource<User>(path: "d"), after: [a], completion: outcomes.completion("d"))
        await harness.events.joined.wait(for: 1)
        await harness.events.enqueued.wait(for: 2)
        clock.advance(by: 1)
        harness.transport.release(path: "/v1/a", with: .json(userJSON))
        await harness.transport.arrivals.wait(for: 2)
        await harness.events.ended.wait(for: 2)
        clock.advance(by: 1)
        harness.transport.release(path: "/v1/d", with: .json(userJSON))
        await harness.transport.arrivals.wait(for: 3)
        await harness.events.ended.wait(for: 3)
        clock.advance(by: 1)
        harness.transport.release(path: "/v1/c", with: .json(userJSON))
        await outcomes.wait(for: 4)
        await harness.events.ended.wait(for: 4)
        return recorder.timeline()
    }

    @Test func eventsNameTheirCallByNumberAndACallerItsDependencies() async {
        let clock = VirtualClock()
        let (harness, _) = Self.harness(clock, budget: 2, reply: { _ in .json(userJSON) })
        let outcomes = Outcomes<User>()
        let first = harness.api.send(Resource<User>(path: "a"), completion: outcomes.completion("a"))
        harness.api.send(Resource<User>(path: "b"), after: [first], completion: outcomes.completion("b"))
        await outcomes.wait(for: 2)
        let started = await harness.events.started.wait(for: 2)

        #expect(started.map(\.number) == [1, 2])
        let ended = await harness.events.ended.wait(for: 2)
        let callers = ended.compactMap { event -> RequestEvent.Caller? in
            if case .succeeded(let caller, _) = event { return caller }
            return nil
        }
        #expect(callers.map(\.callNumber) == [1, 2])
        #expect(callers.map(\.dependencies) == [[], [first.id]])
    }

    @Test func theTraceHasATrackPerHostASlicePerWaitAndAttemptAndFlowsForSharingAndDependencies() async throws {
        let timeline = await Self.knownRun()
        let document = try #require(try JSONSerialization.jsonObject(with: timeline.traceEvents()) as? [String: Any])
        let events = try #require(document["traceEvents"] as? [[String: Any]])

        let processes = events.filter { $0["name"] as? String == "process_name" }
        #expect(processes.compactMap { ($0["args"] as? [String: Any])?["name"] as? String } == ["https://api.test:443"])
        let slices = events.filter { $0["ph"] as? String == "X" }.map { event in
            "\(event["cat"] ?? "") \(event["name"] ?? "") at \(event["ts"] ?? "") for \(event["dur"] ?? "")"
        }
        let joiner = try #require(slices.first { $0.hasPrefix("shared") }?.split(separator: " ")[1])
        #expect(Set(slices) == [
            "wire GET /v1/a at 0 for 2000000",
            "shared \(joiner) shares call 1 at 1000000 for 1000000",
            "queued queued GET /v1/c at 1000000 for 2000000",
            "wire GET /v1/d at 2000000 for 1000000",
            "wire GET /v1/c at 3000000 for 1000000",
        ])
        let flowStarts = events.filter { $0["ph"] as? String == "s" }
        let flowEnds = events.filter { $0["ph"] as? String == "f" }
        #expect(flowStarts.compactMap { $0["cat"] as? String }.sorted() == ["dependency", "shared"])
        #expect(Set(flowStarts.compactMap { $0["id"] as? Int }) == Set(flowEnds.compactMap { $0["id"] as? Int }))
        #expect(timeline.callCount == 3)
        #expect(timeline.sharedCallerCount == 1)
        #expect(timeline.duration == 4)
    }

    @Test func theSVGNamesEachRowsCallCountsItsCallersAndDrawsEachBarAndDependency() async throws {
        let timeline = await Self.knownRun()
        let svg = SVGReader(timeline.svg())

        #expect(svg.parsed)
        #expect(svg.root == "svg")
        // A row per endpoint, named beside it; the callers that joined a call are counted, not drawn.
        #expect(["GET /v1/a", "GET /v1/c", "GET /v1/d"].allSatisfy(svg.texts.contains))
        #expect(svg.texts.contains("×2"))
        #expect(svg.titles.contains("GET /v1/a, 2 callers shared its busiest call"))
        #expect(!svg.titles.contains { $0.contains("shares call 1") })
        // A bar for each attempt and wait, and an arrow for the dependency.
        #expect(svg.titles.filter { $0.hasPrefix("GET /v1/") && $0.contains("\n") }.count == 3)
        #expect(svg.titles.contains { $0.hasPrefix("queued GET /v1/c\n2.00 s") })
        #expect(svg.titles.filter { $0 == "shared" || $0 == "dependency" } == ["dependency"])
        #expect(svg.texts.contains("https://api.test:443"))
    }

    /// A busy stretch keeps room beside a long one: a millisecond between two starts is drawn
    /// wider than a linear axis would draw it, and every moment keeps its order.
    /// Hears whether any `.joined` came before its call's `.enqueued`.
    private final class CallOrder: RequestEvent.Monitor {
        private let state = Locked((told: Set<Int>(), early: 0, joined: 0))
        var early: Int { state.withLock { $0.early } }
        var joined: Int { state.withLock { $0.joined } }
        func record(_ event: RequestEvent) {
            state.withLock { state in
                switch event {
                case .enqueued(let caller): if let number = caller.callNumber { state.told.insert(number) }
                case .joined(let caller):
                    state.joined += 1
                    if let number = caller.callNumber, !state.told.contains(number) { state.early += 1 }
                default: break
                }
            }
        }
    }

    /// A monitor slow to hear that a call was made: it holds the thread that made the call
    /// until the other caller's send has returned, as a monitor writing a log line may.
    private final class SlowToHearACall: RequestEvent.Monitor {
        let sendsReturned = EventLog<Void>()
        private let heard = Locked(0)
        func record(_ event: RequestEvent) {
            guard case .enqueued = event else { return }
            let round = heard.withLock { heard in
                heard += 1
                return heard
            }
            // Every earlier round's two sends and this round's joiner's.
            _ = sendsReturned.waitBlocking(for: 2 * round - 1, timeout: 5)
        }
    }

    /// Two equal POSTs from two threads at once, 60 rounds, the thread that made the call slow
    /// to tell it: a `.joined` told first was dropped from the picture (37–40 of 40 shared
    /// callers were counted).
    @Test func everyJoinerIsToldAfterItsCallAndCountedInThePicture() async {
        let slow = SlowToHearACall()
        let recorder = ScheduleRecorder()
        let order = CallOrder()
        let harness = Harness(reply: { _ in .hold }, configure: { $0.eventMonitors += [slow, recorder, order] })
        let outcomes = Outcomes<User>()
        for round in 0..<60 {
            let post = Resource<User>(.post, path: "posts", body: .json(NewPost(text: "round \(round)")))
            for tap in 0..<2 {
                DispatchQueue.global().async {
                    harness.api.send(post, completion: outcomes.completion("\(round).\(tap)"))
                    slow.sendsReturned.append(())
                }
            }
            await slow.sendsReturned.wait(for: 2 * round + 2)
            await harness.transport.arrivals.wait(for: round + 1)
            #expect(harness.transport.release(with: .json(userJSON, status: 201)))
            _ = await outcomes.wait(for: 2 * round + 2)
        }

        #expect(harness.transport.arrivals.count == 60)
        #expect(order.early == 0)
        #expect(order.joined == 60)
        #expect(recorder.timeline().sharedCallerCount == 60)
    }

    /// A recording from another source may tell a joiner before its call: it is kept until the
    /// call comes, not dropped.
    @Test func thePictureCountsAJoinerHeardBeforeItsCall() {
        func caller(_ id: UInt64) -> RequestEvent.Caller {
            RequestEvent.Caller(id: RequestHandle.ID(value: id), priority: .normal, method: "POST",
                                url: URL(string: "https://api.test/posts"), callNumber: 1, dependencies: [])
        }
        let timeline = ScheduleTimeline([.init(uptime: 10, event: .joined(caller(2))), .init(uptime: 11, event: .enqueued(caller(1)))])
        #expect(timeline.callCount == 1)
        #expect(timeline.sharedCallerCount == 1)
    }

    @Test func aTimeScaleGivesShortStretchesRoomAndKeepsTheOrder() {
        let moments = [0, 0.001, 0.002, 0.010, 10, 100]
        let scale = TimeScale(moments: moments, duration: 100, left: 0, width: 1_000)
        let xs = moments.map(scale.x)
        #expect(xs == xs.sorted() && Set(xs).count == xs.count)
        #expect(xs.first == 0 && xs.last == 1_000)
        #expect(scale.x(0.001) - scale.x(0) > 1, "a linear axis would draw a millisecond of 100 s as 0.01 px")
        #expect(scale.x(100) - scale.x(10) < 1_000 * 0.9, "90 s of 100 take less than 90 % of the width")
        for time in [0.0005, 0.005, 5, 50] { #expect(abs(scale.time(at: scale.x(time)) - time) < time * 1e-9) }
    }

    @Test func aRetryAfterA503MarksTheBackoffAndTheHostsPause() async throws {
        let clock = VirtualClock()
        let answers = Counter()
        let (harness, recorder) = Self.harness(clock, budget: 2, retryPolicy: .default) { _ in
            answers.next() == 1 ? .unavailable(retryAfter: 2) : .json(userJSON)
        }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "flaky"), completion: outcomes.completion("flaky"))
        await harness.events.retried.wait(for: 1)
        clock.advance(by: 2)
        await outcomes.wait(for: 1)
        await harness.events.ended.wait(for: 1)

        let timeline = recorder.timeline()
        let events = try #require(try JSONSerialization.jsonObject(with: timeline.traceEvents()) as? [String: Any])["traceEvents"]
            as? [[String: Any]] ?? []
        let categories = events.filter { $0["ph"] as? String == "X" }.compactMap { $0["cat"] as? String }
        #expect(categories.sorted() == ["backoff", "paused", "wire", "wire"])
        let marks = events.filter { $0["ph"] as? String == "i" }.compactMap { $0["name"] as? String }
        #expect(marks.contains { $0.hasPrefix("retry 2 after 2.00 s") })
        #expect(marks.contains("probing"))
    }

    /// A caller that leaves a shared call at its own deadline ends alone: the call's attempt
    /// goes on for the other, until the answer.
    @Test func aCallerLeavingAtItsDeadlineDoesNotEndItsSharedCallsAttempt() async throws {
        let clock = VirtualClock()
        let (harness, recorder) = Self.harness(clock, budget: 2)
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "a").within(1), completion: outcomes.completion("hasty"))
        harness.api.send(Resource<User>(path: "a"), completion: outcomes.completion("patient"))
        await harness.events.joined.wait(for: 1)
        await harness.transport.arrivals.wait(for: 1)
        clock.advance(by: 1)
        await harness.events.ended.wait(for: 1)
        clock.advance(by: 1)
        harness.transport.release(path: "/v1/a", with: .json(userJSON))
        await outcomes.wait(for: 2)
        await harness.events.ended.wait(for: 2)

        let trace = try #require(try JSONSerialization.jsonObject(with: recorder.timeline().traceEvents()) as? [String: Any])
        let slices = (trace["traceEvents"] as? [[String: Any]] ?? []).filter { $0["ph"] as? String == "X" }
        let wire = try #require(slices.first { $0["cat"] as? String == "wire" })
        #expect(wire["dur"] as? Int == 2_000_000)
        #expect(slices.count { $0["cat"] as? String == "wire" } == 1)
    }

    @Test func textThatXMLForbidsIsEscaped() async {
        let clock = VirtualClock()
        let (harness, recorder) = Self.harness(clock, budget: 2, reply: { _ in .json(userJSON) })
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "search&<q>\"'"), completion: outcomes.completion("search"))
        await outcomes.wait(for: 1)
        await harness.events.ended.wait(for: 1)

        let svg = SVGReader(recorder.timeline().svg())
        #expect(svg.parsed)
        #expect(svg.titles.contains { $0.contains("&") && $0.contains("search") })
    }

    /// A path is drawn decoded from its percent escapes, so it may hold any character: those
    /// XML forbids even escaped (controls, U+FFFE, U+FFFF) would leave no document at all.
    @Test func theSVGStaysXMLWhateverAPathHolds() async throws {
        let clock = VirtualClock()
        let (harness, recorder) = Self.harness(clock, budget: 8, reply: { _ in .json(userJSON) })
        let outcomes = Outcomes<User>()
        // Noncharacters, built from their scalars: Swift's literals refuse some of them.
        let character = { (value: UInt32) in String(Unicode.Scalar(value)!) }
        let allowed = "allowed" + character(0xFDD0) + character(0x1FFFE)
        let paths = ["nonchar" + character(0xFFFE) + "x", "nonchar" + character(0xFFFF) + "y", "control\u{01}\u{1B}z",
                     "quotes\"'<&>", allowed, "long" + String(repeating: "/segment", count: 1_280)]
        for path in paths { harness.api.send(Resource<User>(path: path), completion: outcomes.completion(path)) }
        await outcomes.wait(for: paths.count)
        await harness.events.ended.wait(for: paths.count)

        let svg = SVGReader(recorder.timeline().svg())
        try #require(svg.parsed)
        let drawn = (svg.titles + svg.texts).joined(separator: "\n")
        for expected in ["nonchar?x", "nonchar?y", "control??z", "quotes\"'<&>", allowed, "/segment/segment"] {
            #expect(drawn.contains(expected), "\(expected.prefix(20)) is drawn")
        }
    }

    @Test func aRecorderKeepsAtMostItsLimitAndCountsTheRest() {
        let recorder = ScheduleRecorder(limit: 2)
        for _ in 0..<5 { recorder.record(.hostHealthChanged(host: "https://api.test:443", .probing)) }
        #expect(recorder.droppedEvents == 3)
        recorder.reset()
        #expect(recorder.droppedEvents == 0)
    }

    /// With 8 KB paths an event is 8 KB, and a server's error may carry a megabyte: a bound in
    /// events alone would hold a gigabyte.
    @Test func aRecorderKeepsAtMostItsBytesWhateverItsEventsHold() {
        let url = URL(string: "https://api.test/" + String(repeating: "p", count: 8 * 1024))!
        func caller(_ number: Int, _ url: URL?) -> RequestEvent.Caller {
            RequestEvent.Caller(id: RequestHandle.ID(value: UInt64(number)), priority: .normal, method: "GET", url: url,
                                callNumber: number, dependencies: [])
        }
        let eventBytes = ScheduleRecorder.footprint(of: .enqueued(caller(1, url)))
        #expect(eventBytes > 8 * 1024, "an event counts its URL")

        let recorder = ScheduleRecorder(byteLimit: 10 * eventBytes)
        for number in 1...25 { recorder.record(.enqueued(caller(number, url))) }
        #expect(recorder.timeline().callCount == 10)
        #expect(recorder.droppedEvents == 15)

        let call = RequestEvent.Call(number: 30, callers: [RequestHandle.ID(value: 30)], method: "GET", url: URL(string: "https://api.test/a"))
        let failure = ServiceError.server(ServiceError.ServerResponse(statusCode: 500, body: Data(count: 1 << 20)))
        let small = ScheduleRecorder(byteLimit: 64 * 1024)
        small.record(.retried(call, attempt: 2, after: 1, cause: .dependencyFailed(cause: failure, dependency: RequestHandle.ID(value: 3))))
        small.record(.enqueued(caller(31, URL(string: "https://api.test/b"))))
        #expect(small.droppedEvents == 1, "the megabyte body a nested server error holds counts")
        #expect(small.timeline().callCount == 1, "and the next event, small, fits")
    }
}

/// Reads an SVG document with Foundation's XML parser: whether it parsed, its root, and the
/// text of its `title` and `text` elements.
private final class SVGReader: NSObject, XMLParserDelegate {
    private(set) var parsed = false
    private(set) var root: String?
    private(set) var titles: [String] = []
    private(set) var texts: [String] = []
    private var current: String?
    private var buffer = ""

    init(_ svg: String) {
        super.init()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = self
        parsed = parser.parse()
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if root == nil { root = name }
        current = name
        buffer = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        buffer += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "title" { titles.append(buffer) }
        if name == "text" { texts.append(buffer) }
        buffer = ""
    }
}

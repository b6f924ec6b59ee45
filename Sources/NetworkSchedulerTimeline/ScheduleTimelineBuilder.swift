import Foundation
import NetworkScheduler

/// Reads a run's events in the order they were recorded, and lays them out as a
/// ``ScheduleTimeline``. An event names its call by number and its caller by ID, so that
/// calls made after others ended, in slots used again, stay apart.
struct ScheduleTimelineBuilder {
    private final class CallTrace {
        struct Attempt {
            var queuedFrom: TimeInterval
            let start: TimeInterval
            var end: TimeInterval?
        }

        let number: Int
        let host: String
        let name: String
        var priority: RequestPriority
        let enqueuedAt: TimeInterval
        var attempts: [Attempt] = []
        /// When its last attempt ended, or its last caller left before one did.
        var endedAt: TimeInterval?
        var outcome: String?
        /// Its callers still waiting for it.
        var waiting: Set<RequestHandle.ID> = []
        var callers: [RequestHandle.ID] = []
        var markers: [(TimeInterval, String)] = []

        init(number: Int, host: String, name: String, priority: RequestPriority, at time: TimeInterval) {
            self.number = number
            self.host = host
            self.name = name
            self.priority = priority
            enqueuedAt = time
        }

        var end: TimeInterval? {
            [endedAt, attempts.last?.end].compactMap { $0 }.max()
        }

        func endAttempt(at time: TimeInterval) {
            guard let last = attempts.indices.last, attempts[last].end == nil else { return }
            attempts[last].end = time
        }
    }

    private struct CallerTrace {
        let id: RequestHandle.ID
        let callNumber: Int
        let joinedAt: TimeInterval?
        var endedAt: TimeInterval?
        var outcome: String?
        let dependencies: [RequestHandle.ID]
        let startedAt: TimeInterval
    }

    /// The callers that joined a call drawn with it; the others are counted in a mark.
    static let joinersDrawnPerCall = 3

    private let origin: UInt64
    private var last: TimeInterval = 0
    private var calls: [Int: CallTrace] = [:]
    private var callOrder: [Int] = []
    /// Joiners of a call not seen yet, by its number: a scheduler tells a call before its
    /// joiners, but a recording of another source may not.
    private var earlyJoiners: [Int: [(caller: RequestEvent.Caller, at: TimeInterval)]] = [:]
    private var callers: [RequestHandle.ID: CallerTrace] = [:]
    private var callerOrder: [RequestHandle.ID] = []
    private var hostOrder: [String] = []
    private var pauses: [String: [(start: TimeInterval, end: TimeInterval?, reason: String)]] = [:]
    private var hostMarkers: [String: [(TimeInterval, String)]] = [:]

    init(origin: UInt64) {
        self.origin = origin
    }

    mutating func add(_ stamped: ScheduleTimeline.Stamped) {
        let time = stamped.uptime >= origin ? Double(stamped.uptime - origin) / 1e9 : 0
        last = max(last, time)
        switch stamped.event {
        case .enqueued(let caller):
            guard let number = caller.callNumber else { return }
            let host = Self.host(of: caller.url)
            note(host)
            let call = CallTrace(number: number, host: host, name: Self.name(caller.method, caller.url), priority: caller.priority, at: time)
            calls[number] = call
            callOrder.append(number)
            enter(caller, call, joining: false, at: time)
            for early in earlyJoiners.removeValue(forKey: number) ?? [] {
                enter(early.caller, call, joining: true, at: max(early.at, time))
            }
        case .joined(let caller):
            guard let number = caller.callNumber else { return }
            guard let call = calls[number] else {
                earlyJoiners[number, default: []].append((caller, time))
                return
            }
            enter(caller, call, joining: true, at: time)
        case let .started(event, queuedFor):
            guard let call = calls[event.number] else { return }
            call.endAttempt(at: time)
            let since = max(time - queuedFor, call.attempts.last?.end ?? call.enqueuedAt)
            call.attempts.append(.init(queuedFrom: call.attempts.isEmpty ? min(since, call.enqueuedAt) : since, start: time))
        case let .retried(event, attempt, after, cause):
            guard let call = calls[event.number] else { return }
            call.endAttempt(at: time)
            call.markers.append((time, "retry \(attempt) after \(Self.seconds(after)): \(cause)"))
        case let .promoted(event, _, to):
            guard let call = calls[event.number] else { return }
            call.priority = to
            call.markers.append((time, "promoted to \(to)"))
        case let .outcomeKept(event, outcome):
            guard let call = calls[event.number] else { return }
            call.endAttempt(at: time)
            call.endedAt = time
            call.outcome = (try? outcome.get()).map { "kept \($0)" } ?? "kept \(outcome)"
            call.markers.append((time, call.outcome ?? "kept"))
        case let .revalidated(event, statusCode):
            calls[event.number]?.markers.append((time, "revalidated: \(statusCode)"))
        case .succeeded(let caller, let metrics), .servedFromCache(let caller, let metrics):
            leave(caller, at: time, outcome: metrics.statusCode.map(String.init) ?? "succeeded", endsCall: true,
                  cacheUse: metrics.cacheUse)
        case .failed(let caller, let error, _):
            // A caller's own deadline ends it alone; any other error is its call's answer.
            leave(caller, at: time, outcome: "\(error)", endsCall: error != .deadlineExceeded)
        case .cancelled(let caller):
            leave(caller, at: time, outcome: "cancelled", endsCall: false)
        case let .hostHealthChanged(host, health):
            note(host)
            if let open = pauses[host]?.indices.last, pauses[host]?[open].end == nil {
                pauses[host]?[open].end = time
            }
            switch health {
            case .paused(_, let reason): pauses[host, default: []].append((time, nil, "paused: \(reason)"))
            case .probing: hostMarkers[host, default: []].append((time, "probing"))
            case .available: hostMarkers[host, default: []].append((time, "available"))
            }
        case .progressed:
            break
        }
    }

    private mutating func enter(_ caller: RequestEvent.Caller, _ call: CallTrace, joining: Bool, at time: TimeInterval) {
        call.waiting.insert(caller.id)
        call.callers.append(caller.id)
        if caller.priority > call.priority { call.priority = caller.priority }
        callers[caller.id] = CallerTrace(id: caller.id, callNumber: call.number, joinedAt: joining ? time : nil,
                                         dependencies: caller.dependencies, startedAt: time)
        callerOrder.append(caller.id)
    }

    /// Ends `caller`; `endsCall` when what it got is its call's answer (which ends the call's
    /// attempt for every caller), not its own leaving.
    private mutating func leave(_ caller: RequestEvent.Caller, at time: TimeInterval, outcome: String, endsCall: Bool,
                                cacheUse: CacheUse = .none) {
        guard var trace = callers[caller.id], let call = calls[trace.callNumber] else {
            // Answered by the cache without a call: a mark on its host's track.
            let host = Self.host(of: caller.url)
            note(host)
            hostMarkers[host, default: []].append((time, "\(caller.id) \(Self.name(caller.method, caller.url)) from the cache"))
            return
        }
        trace.endedAt = time
        trace.outcome = outcome
        callers[caller.id] = trace
        call.waiting.remove(caller.id)
        if endsCall {
            call.endAttempt(at: time)
            call.outcome = call.outcome ?? outcome
            if cacheUse != .none { call.markers.append((time, "\(caller.id) \(cacheUse)")) }
        }
        if call.waiting.isEmpty, call.endedAt == nil {
            // Its last caller left: an attempt on the wire ends with it (one with a kept
            // outcome goes on, and says so later).
            call.endedAt = time
            call.endAttempt(at: time)
        }
    }

    private mutating func note(_ host: String) {
        if !hostOrder.contains(host) { hostOrder.append(host) }
    }

    /// Lays the calls out: each host's rows are filled in order of start, each call (or caller
    /// that joined one) in the first row of its endpoint free by then.
    func timeline() -> ScheduleTimeline {
        var tracks = hostOrder.map { ScheduleTimeline.Track(name: $0) }
        let trackIndex = Dictionary(uniqueKeysWithValues: hostOrder.enumerated().map { ($1, $0) })
        var rowEnds: [[TimeInterval]] = Array(repeating: [], count: tracks.count)
        var callPlace: [Int: (track: Int, row: Int)] = [:]
        var callerPlace: [RequestHandle.ID: (track: Int, row: Int)] = [:]

        // The first row of the same label free by `spans`' start, or a new one.
        func place(_ spans: [ScheduleTimeline.Span], onTrack track: Int, label: String) -> Int {
            let start = spans.first?.start ?? 0
            let end = spans.map(\.end).max() ?? start
            let row = rowEnds[track].indices.first { rowEnds[track][$0] <= start && tracks[track].rows[$0].label == label }
                ?? rowEnds[track].count
            if row == rowEnds[track].count {
                rowEnds[track].append(end)
                tracks[track].rows.append(.init(label: label, spans: spans))
            } else {
                rowEnds[track][row] = end
                tracks[track].rows[row].spans += spans
            }
            return row
        }

        // Calls and joined callers together, in order of start, so that each finds the first
        // free row of its endpoint.
        enum Item { case call(CallTrace), caller(CallerTrace) }
        var items: [(start: TimeInterval, item: Item)] = callOrder.compactMap { calls[$0] }.map { ($0.enqueuedAt, .call($0)) }
        // A burst of identical requests would draw a row for each: the first few show it.
        var joinersPerCall: [Int: Int] = [:]
        for id in callerOrder {
            guard let caller = callers[id], let joinedAt = caller.joinedAt else { continue }
            joinersPerCall[caller.callNumber, default: 0] += 1
            if joinersPerCall[caller.callNumber, default: 0] <= Self.joinersDrawnPerCall { items.append((joinedAt, .caller(caller))) }
        }
        for (number, joiners) in joinersPerCall where joiners > Self.joinersDrawnPerCall {
            calls[number]?.markers.append((calls[number]?.end ?? last, "\(joiners) callers joined call \(number); "
                + "\(joiners - Self.joinersDrawnPerCall) are not drawn"))
        }
        items.sort { $0.start < $1.start }
        for (_, item) in items {
            switch item {
            case .call(let call):
                guard let track = trackIndex[call.host] else { continue }
                let spans = spans(of: call)
                let row = place(spans, onTrack: track, label: call.name)
                tracks[track].rows[row].callers = max(tracks[track].rows[row].callers, call.callers.count)
                callPlace[call.number] = (track, row)
                for caller in call.callers where callers[caller]?.joinedAt == nil { callerPlace[caller] = (track, row) }
                for (time, name) in call.markers { tracks[track].markers.append(.init(time: time, row: row, name: name)) }
            case .caller(let caller):
                guard let call = calls[caller.callNumber], let track = trackIndex[call.host], let joinedAt = caller.joinedAt else { continue }
                let span = ScheduleTimeline.Span(kind: .shared, start: joinedAt, end: caller.endedAt ?? last,
                                                 name: "\(caller.id) shares call \(call.number)", priority: call.priority,
                                                 details: [("caller", "\(caller.id)"), ("call", "\(call.number)"),
                                                           ("outcome", caller.outcome ?? "under way")])
                callerPlace[caller.id] = (track, place([span], onTrack: track, label: "joined \(call.name)"))
            }
        }
        for (host, markers) in hostMarkers {
            guard let track = trackIndex[host] else { continue }
            tracks[track].markers += markers.map { .init(time: $0.0, row: nil, name: $0.1) }
        }
        for (host, spans) in pauses {
            guard let track = trackIndex[host] else { continue }
            tracks[track].pauses = spans.map {
                .init(kind: .paused, start: $0.start, end: $0.end ?? last, name: $0.reason, priority: nil, details: [("host", host)])
            }
        }
        for index in tracks.indices { tracks[index].markers.sort { $0.time < $1.time } }
        return ScheduleTimeline(tracks: tracks, flows: flows(callPlace: callPlace, callerPlace: callerPlace), duration: last,
                                callCount: callOrder.count, sharedCallerCount: joinersPerCall.values.reduce(0, +))
    }

    /// A call's bars: for each attempt its wait in the line and its time on the wire, with
    /// the backoff before the next; a call that never started waited until its callers left.
    private func spans(of call: CallTrace) -> [ScheduleTimeline.Span] {
        let common = [("call", "\(call.number)"), ("callers", call.callers.map(\.description).joined(separator: " "))]
        guard !call.attempts.isEmpty else {
            return [.init(kind: .queued, start: call.enqueuedAt, end: call.end ?? last, name: "queued \(call.name)",
                          priority: call.priority, details: common + [("outcome", call.outcome ?? "under way")])]
        }
        var spans: [ScheduleTimeline.Span] = []
        for (index, attempt) in call.attempts.enumerated() {
            if index > 0, let previousEnd = call.attempts[index - 1].end, attempt.queuedFrom > previousEnd {
                spans.append(.init(kind: .backoff, start: previousEnd, end: attempt.queuedFrom, name: "backoff",
                                   priority: call.priority, details: common))
            }
            if attempt.start > attempt.queuedFrom {
                spans.append(.init(kind: .queued, start: attempt.queuedFrom, end: attempt.start, name: "queued \(call.name)",
                                   priority: call.priority, details: common))
            }
            let isLast = index == call.attempts.count - 1
            spans.append(.init(kind: .wire, start: attempt.start, end: attempt.end ?? last, name: call.name, priority: call.priority,
                               details: common + [("attempt", "\(index + 1)"),
                                                  ("outcome", isLast ? call.outcome ?? "under way" : "retried")]))
        }
        return spans
    }

    /// The arrows: each joined caller gets its call's answer; each request that waited for
    /// others starts after their ends.
    private func flows(callPlace: [Int: (track: Int, row: Int)],
                       callerPlace: [RequestHandle.ID: (track: Int, row: Int)]) -> [ScheduleTimeline.Flow] {
        var flows: [ScheduleTimeline.Flow] = []
        for id in callerOrder {
            guard let caller = callers[id], let here = callerPlace[id] else { continue }
            if caller.joinedAt != nil, let call = callPlace[caller.callNumber] {
                let time = caller.endedAt ?? last
                flows.append(.init(kind: .shared, from: .init(track: call.track, row: call.row, time: time),
                                   to: .init(track: here.track, row: here.row, time: time)))
            }
            for dependency in caller.dependencies {
                guard let before = callers[dependency], let there = callerPlace[dependency] else { continue }
                flows.append(.init(kind: .dependency, from: .init(track: there.track, row: there.row, time: before.endedAt ?? last),
                                   to: .init(track: here.track, row: here.row, time: caller.startedAt)))
            }
        }
        return flows
    }

    /// `scheme://host:port`, as host lines and health events name a host.
    private static func host(of url: URL?) -> String {
        url?.hostKey ?? "no host"
    }

    private static func name(_ method: String, _ url: URL?) -> String {
        guard let url else { return method }
        return "\(method) \(url.path.isEmpty ? "/" : url.path)"
    }

    static func seconds(_ value: TimeInterval) -> String {
        value < 1 ? "\(Int((value * 1000).rounded())) ms" : String(format: "%.2f s", value)
    }
}

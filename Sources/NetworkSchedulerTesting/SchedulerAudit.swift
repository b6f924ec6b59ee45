import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler

/// Checks a scheduler's promises over a test: every caller ended exactly once, identical
/// requests shared their network calls, and nothing was left behind. Install it as an event
/// monitor, run the code under test, then ask for its report.
///
/// ```swift
/// let audit = SchedulerAudit()
/// let scheduler = RequestScheduler { $0.transport = transport; $0.eventMonitors = [audit] }
/// … run the screens, the model controllers, the concurrent taps …
/// let report = await audit.report(for: scheduler)
/// #expect(report.isClean, "\(report)")
/// #expect(report.networkCalls("POST /v1/posts") == 1)
/// ```
public final class SchedulerAudit: RequestEvent.Monitor {
    private struct State {
        /// Callers that entered a call (new or joined) and have not ended.
        var open: Set<RequestHandle.ID> = []
        /// Every caller seen, and how many times each ended.
        var ends: [RequestHandle.ID: Int] = [:]
        var networkCalls: [String: Int] = [:]
        var keptOutcomes = 0
        var watched: [(name: String, object: WeakObject)] = []
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var lastWaiterID = 0
    }

    private let state = Locked(State())

    /// The callers that began (made a call, or joined one), in the order they were told: wait
    /// on it, with a bound, until the requests a test sent are in the scheduler, before it
    /// checks who waits in line (`RequestScheduler.census`).
    public let begins = EventLog<RequestHandle.ID>()

    /// An audit that has seen nothing yet.
    public init() {}

    /// Records one of the scheduler's events.
    ///
    /// - Parameter event: what happened.
    public func record(_ event: RequestEvent) {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { state in
            switch event {
            case .enqueued(let caller), .joined(let caller):
                // Events told on two threads arrive in no set order: a caller whose end was
                // told first is not open.
                if state.ends[caller.id, default: 0] == 0 { state.open.insert(caller.id) }
                state.ends[caller.id, default: 0] += 0
            case .succeeded(let caller, _), .servedFromCache(let caller, _), .failed(let caller, _, _), .cancelled(let caller):
                state.open.remove(caller.id)
                state.ends[caller.id, default: 0] += 1
            case .started(let call, _):
                state.networkCalls["\(call.method) \(call.url?.path ?? "")", default: 0] += 1
            case .outcomeKept:
                state.keptOutcomes += 1
            case .retried, .promoted, .hostHealthChanged, .progressed, .revalidated:
                break
            }
            guard state.open.isEmpty else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in ready { waiter.resume() }
        switch event {
        case .enqueued(let caller), .joined(let caller): begins.append(caller.id)
        default: break
        }
    }

    /// Watches `object`: the report lists it under `name` if it is still alive at the end (a
    /// model controller, a screen's group, anything that should go away with its screen).
    ///
    /// The audit holds it weakly; the test must let go of it too before it asks for the
    /// report (keep it only in a scope that has ended, or set your variable to nil), or the
    /// report finds it alive, after a grace of one second.
    ///
    /// - Parameters:
    ///   - object: the object that should be gone at the end.
    ///   - name: how the report names it.
    public func watch(_ object: AnyObject, as name: String) {
        state.withLock { $0.watched.append((name, WeakObject(object))) }
    }

    /// Waits, at most `timeout` seconds, until every caller that entered a call has ended and
    /// the scheduler's queues have drained, then reports what it found. Watched objects still
    /// alive then are looked at again for up to ``objectGrace`` more (a closure may be let go on
    /// another thread just after its caller ended): one the test itself still holds fails the
    /// report in about a second, not at the bound.
    ///
    /// - Parameters:
    ///   - scheduler: the scheduler this audit monitors.
    ///   - timeout: the most seconds to wait for callers to end and queues to drain.
    public func report(for scheduler: RequestScheduler, timeout: TimeInterval = 30) async -> Report {
        let deadline = DispatchTime.now() + timeout
        await allCallersEnded(timeout: timeout)
        // Unstructured, so that a queue that never drains (an attempt the transport holds)
        // ends the wait at its bound instead of holding the report.
        let drained = EventLog<Void>()
        Task { await scheduler.queuesDrained(); drained.append(()) }
        await drained.arrivals(1, within: max(0, Double(deadline.uptimeNanoseconds) - Double(DispatchTime.now().uptimeNanoseconds)) / 1e9)
        var alive = aliveObjects()
        let graceEnd = min(deadline, DispatchTime.now() + Self.objectGrace)
        while !alive.isEmpty, DispatchTime.now() < graceEnd {
            try? await Task.sleep(nanoseconds: 10_000_000)
            alive = aliveObjects()
        }
        return state.withLock { state in
            Report(callers: state.ends.count,
                   neverEnded: state.ends.filter { $0.value == 0 }.keys.sorted { $0.description < $1.description },
                   endedMoreThanOnce: state.ends.filter { $0.value > 1 }.keys.sorted { $0.description < $1.description },
                   networkCallsByRoute: state.networkCalls, keptOutcomes: state.keptOutcomes,
                   census: scheduler.census, objectsAlive: alive)
        }
    }

    /// How long, after every caller ended, a watched object may take to go away: one second.
    public static let objectGrace: TimeInterval = 1

    private func aliveObjects() -> [String] {
        state.withLock { $0.watched.filter { $0.object.value != nil }.map(\.name) }
    }

    private func allCallersEnded(timeout: TimeInterval) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiterID: Int? = state.withLock { state in
                guard !state.open.isEmpty else { return nil }
                state.lastWaiterID += 1
                state.waiters[state.lastWaiterID] = continuation
                return state.lastWaiterID
            }
            guard let waiterID else { return continuation.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                state.withLock { $0.waiters.removeValue(forKey: waiterID) }?.resume()
            }
        }
    }

}

extension SchedulerAudit {
    /// What an audit found: clean when every caller ended once and nothing is left.
    public struct Report: Sendable, CustomStringConvertible {
        /// Every caller the audit saw.
        public let callers: Int
        /// Callers that entered a call and never ended: a broken promise.
        public let neverEnded: [RequestHandle.ID]
        /// Callers that ended more than once: a broken promise.
        public let endedMoreThanOnce: [RequestHandle.ID]
        /// How many network calls started on each route (`"POST /v1/posts"`), retries included.
        public let networkCallsByRoute: [String: Int]
        /// Keyed calls whose outcome the scheduler keeps after their callers left: each holds
        /// a registered key for its window, and is not a leak.
        public let keptOutcomes: Int
        /// What the scheduler held at the end.
        public let census: RequestScheduler.Census
        /// The names of watched objects still alive at the end.
        public let objectsAlive: [String]

        /// How many network calls started on `route`, `"METHOD /path"`.
        ///
        /// - Parameter route: `METHOD /path`, as `"POST /v1/posts"`.
        public func networkCalls(_ route: String) -> Int {
            networkCallsByRoute[route, default: 0]
        }

        /// The problems found, one line each; empty when the report is clean.
        public var problems: [String] {
            var problems: [String] = []
            if !neverEnded.isEmpty {
                problems.append("\(neverEnded.count) caller(s) never ended: \(Self.list(neverEnded))")
            }
            if !endedMoreThanOnce.isEmpty {
                problems.append("\(endedMoreThanOnce.count) caller(s) ended more than once: \(Self.list(endedMoreThanOnce))")
            }
            if census.callers > 0 || census.networkCalls > 0 || census.queuedOperations > 0
                || census.registeredKeys > keptOutcomes {
                problems.append("the scheduler still holds \(census.callers) caller(s), \(census.networkCalls) call(s), "
                    + "\(census.registeredKeys) key(s) and \(census.queuedOperations) operation(s)")
            }
            if !objectsAlive.isEmpty {
                problems.append("still alive: \(objectsAlive.joined(separator: ", ")) (a watched object must be let go "
                    + "by the test too before the report; one a completion or the scheduler keeps is a leak)")
            }
            return problems
        }

        /// Whether every caller ended exactly once and nothing was left behind.
        public var isClean: Bool { problems.isEmpty }

        /// A readable summary: the callers, the network calls by route, and each problem.
        public var description: String {
            let routes = networkCallsByRoute.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }
            var lines = ["\(callers) caller(s); network calls: \(routes.isEmpty ? "none" : routes.joined(separator: ", "))"]
            lines += problems.isEmpty ? ["clean: every caller ended once, nothing left"] : problems.map { "✘ " + $0 }
            return lines.joined(separator: "\n")
        }

        private static func list(_ ids: [RequestHandle.ID]) -> String {
            ids.prefix(10).map(\.description).joined(separator: " ") + (ids.count > 10 ? " …" : "")
        }
    }
}

/// A weak reference, for the audit's watch list.
private struct WeakObject: @unchecked Sendable {
    // Safety: only read for whether it is nil; the object itself is never touched.
    weak var value: AnyObject?

    init(_ value: AnyObject) {
        self.value = value
    }
}

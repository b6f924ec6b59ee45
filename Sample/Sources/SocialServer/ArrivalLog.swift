import Dispatch
import NIOConcurrencyHelpers

/// Every request that reached a route, in order: what tests count to prove a call was, or was
/// not, sent.
public final class ArrivalLog: Sendable {
    /// One request as it arrived.
    public struct Arrival: Codable, Sendable, Equatable {
        public let route: Route
        /// The path and query, such as `/feed?page=2`.
        public let target: String
        /// The `Range` it asked for, if any: a download resuming.
        public var range: String?
        /// The `If-None-Match` it carried, if any: a cache revalidating its answer.
        public var ifNoneMatch: String?
    }

    private struct Waiter {
        let route: Route
        let count: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var arrivals: [Arrival] = []
        /// Per route, so that recording stays constant-time however many have arrived.
        var counts: [Route: Int] = [:]
        /// The client ports seen: one per TCP connection the clients opened.
        var clientPorts: Set<Int> = []
        var waiters: [Waiter] = []
    }

    private let state = NIOLockedValueBox(State())

    /// Every arrival so far, oldest first.
    public var all: [Arrival] { state.withLockedValue { $0.arrivals } }

    /// How many requests reached each route.
    public var counts: [Route: Int] { state.withLockedValue { $0.counts } }

    /// How many requests reached `route`.
    public func count(_ route: Route) -> Int {
        state.withLockedValue { $0.counts[route, default: 0] }
    }

    /// How many TCP connections the requests so far came in on, told apart by the client's port
    /// (which the client's system does not reuse until it has cycled through its port range).
    public var connections: Int { state.withLockedValue { $0.clientPorts.count } }

    /// Waits until `count` requests have reached `route`, or `timeout` seconds have passed.
    /// Returns whether they did. The default bound only catches a test that would hang, on a
    /// machine that may be running every suite at once under the thread sanitizer.
    @discardableResult
    public func wait(for count: Int, at route: Route, timeout: Double = 60) async -> Bool {
        await withCheckedContinuation { continuation in
            let reached = state.withLockedValue { state -> Bool in
                if state.counts[route, default: 0] >= count { return true }
                state.waiters.append(Waiter(route: route, count: count, continuation: continuation))
                return false
            }
            if reached {
                continuation.resume(returning: true)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let expired: [CheckedContinuation<Bool, Never>] = state.withLockedValue { state in
                    let expired = state.waiters.filter { $0.route == route && $0.count == count }
                    state.waiters.removeAll { $0.route == route && $0.count == count }
                    return expired.map(\.continuation)
                }
                for continuation in expired { continuation.resume(returning: false) }
            }
        }
    }

    func record(_ route: Route, target: String, clientPort: Int?, range: String? = nil, ifNoneMatch: String? = nil) {
        let reached: [CheckedContinuation<Bool, Never>] = state.withLockedValue { state in
            state.arrivals.append(Arrival(route: route, target: target, range: range, ifNoneMatch: ifNoneMatch))
            state.counts[route, default: 0] += 1
            if let clientPort { state.clientPorts.insert(clientPort) }
            let count = state.counts[route, default: 0]
            let reached = state.waiters.filter { $0.route == route && $0.count <= count }
            state.waiters.removeAll { $0.route == route && $0.count <= count }
            return reached.map(\.continuation)
        }
        for continuation in reached { continuation.resume(returning: true) }
    }
}

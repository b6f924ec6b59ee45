import Dispatch
import Foundation
import NetworkScheduler

/// Every caller the soak made, and how each ended: each must end exactly once. A caller is a
/// number, so that a million of them cost a few megabytes.
final class Ledger: Sendable {
    private struct State {
        /// How many times each caller ended, by its number.
        var ends: [UInt8] = []
        var ended = 0
        /// Callers that ended a second time (or more).
        var twice = 0
        var outcomes: [String: Int] = [:]
        var waiters: [(id: Int, target: Int?, continuation: CheckedContinuation<Bool, Never>)] = []
        var lastWaiter = 0
    }

    private let state = Mutex(State())

    /// A new caller's number.
    func begin() -> Int {
        state.withLock { state in
            state.ends.append(0)
            return state.ends.count - 1
        }
    }

    /// Caller `number` ended with `outcome` (a kind: "success", "timedOut", …).
    func end(_ number: Int, _ outcome: String) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.ends[number] &+= 1
            if state.ends[number] == 1 {
                state.ended += 1
            } else {
                state.twice += 1
            }
            state.outcomes[outcome, default: 0] += 1
            let (begun, ended) = (state.ends.count, state.ended)
            let done = state.waiters.filter { ended >= ($0.target ?? begun) }
            state.waiters.removeAll { ended >= ($0.target ?? begun) }
            return done.map(\.continuation)
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    var begun: Int { state.withLock { $0.ends.count } }
    var ended: Int { state.withLock { $0.ended } }
    var twice: Int { state.withLock { $0.twice } }
    var outcomes: [String: Int] { state.withLock { $0.outcomes } }
    /// Callers that never ended.
    var unended: Int { state.withLock { $0.ends.count - $0.ended } }

    /// Waits until `target` callers have ended (every caller begun, when nil, however many
    /// begin meanwhile), or `timeout` seconds pass; returns whether they did.
    func wait(untilEnded target: Int? = nil, timeout: TimeInterval) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLock { state -> Int? in
                if state.ended >= (target ?? state.ends.count) { return nil }
                state.lastWaiter += 1
                state.waiters.append((state.lastWaiter, target, continuation))
                return state.lastWaiter
            }
            guard let id else { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [state] in
                let expired = state.withLock { state -> Bool in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return false }
                    state.waiters.remove(at: index)
                    return true
                }
                if expired { continuation.resume(returning: false) }
            }
        }
    }
}

/// How a caller ended, as a word for the report.
func outcomeKind<Value>(_ result: Result<Value, ServiceError>) -> String {
    switch result {
    case .success: "success"
    case .failure(let error): errorKind(error)
    }
}

/// The error's case, with a server's status.
func errorKind(_ error: ServiceError) -> String {
    if let status = error.statusCode { return "\(error.caseName) \(status)" }
    return error.caseName
}

import Dispatch
import Foundation
import NetworkScheduler
import NIOConcurrencyHelpers

/// A count that tests can wait on, with a bound.
final class WaitableCount: Sendable {
    private struct State {
        var value = 0
        var waiters: [(target: Int, continuation: CheckedContinuation<Int, Never>)] = []
    }

    private let state = NIOLockedValueBox(State())

    var value: Int { state.withLockedValue { $0.value } }

    func add(_ amount: Int = 1) {
        let ready = state.withLockedValue { state in
            state.value += amount
            let value = state.value
            let ready = state.waiters.filter { $0.target <= value }
            state.waiters.removeAll { $0.target <= value }
            return ready.map { ($0.continuation, value) }
        }
        for (continuation, value) in ready { continuation.resume(returning: value) }
    }

    /// Waits until the count reaches `target` or `timeout` seconds pass; returns the count.
    @discardableResult
    func wait(for target: Int, timeout: TimeInterval = 60) async -> Int {
        await withCheckedContinuation { continuation in
            let now: Int? = state.withLockedValue { state in
                if state.value >= target { return state.value }
                state.waiters.append((target, continuation))
                return nil
            }
            if let now {
                continuation.resume(returning: now)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let expired = state.withLockedValue { state -> (CheckedContinuation<Int, Never>, Int)? in
                    guard let index = state.waiters.firstIndex(where: { $0.target == target }) else { return nil }
                    return (state.waiters.remove(at: index).continuation, state.value)
                }
                if let (continuation, value) = expired { continuation.resume(returning: value) }
            }
        }
    }
}

/// Counts a scheduler's events.
final class Tally: RequestEvent.Monitor {
    /// Callers admitted: new calls and joiners.
    let admitted = WaitableCount()
    let started = WaitableCount()
    let retried = WaitableCount()
    let ended = WaitableCount()
    let promoted = WaitableCount()
    /// Changes of a host's health.
    let health = WaitableCount()
    /// Keyed calls whose outcome was kept after their callers left.
    let kept = WaitableCount()
    /// Callers the cache answered without waiting for the server.
    let servedFromCache = WaitableCount()
    /// Answers to requests the cache made conditional.
    let revalidated = WaitableCount()
    /// The path of every network call started.
    let startedPaths = NIOLockedValueBox<[String]>([])

    func record(_ event: RequestEvent) {
        switch event {
        case .enqueued, .joined: admitted.add()
        case .started(let request, _):
            started.add()
            startedPaths.withLockedValue { $0.append(request.url?.path ?? "") }
        case .retried: retried.add()
        case .succeeded, .failed, .cancelled: ended.add()
        case .servedFromCache:
            servedFromCache.add()
            ended.add()
        case .revalidated: revalidated.add()
        case .promoted: promoted.add()
        case .hostHealthChanged: health.add()
        case .outcomeKept: kept.add()
        case .progressed: break
        }
    }
}

/// Each caller's outcome, by caller.
final class Ledger<Value: Sendable>: Sendable {
    private let outcomes: NIOLockedValueBox<[[Result<Value, ServiceError>]]>
    let ended = WaitableCount()

    init(callers: Int) {
        outcomes = NIOLockedValueBox(Array(repeating: [], count: callers))
    }

    func record(_ caller: Int, _ result: Result<Value, ServiceError>) {
        outcomes.withLockedValue { $0[caller].append(result) }
        ended.add()
    }

    /// What `caller` got, if it ended once.
    func result(of caller: Int) -> Result<Value, ServiceError>? {
        outcomes.withLockedValue { $0[caller].count == 1 ? $0[caller][0] : nil }
    }

    /// Each caller's outcome, for callers that ended once.
    var results: [Result<Value, ServiceError>] {
        outcomes.withLockedValue { $0.compactMap { $0.count == 1 ? $0[0] : nil } }
    }
}

import Dispatch
import Foundation
@testable import NetworkScheduler

/// Values that arrive from other threads, with bounded waits for them: the tests' only way to
/// wait for an event. A wait that times out returns what arrived, so the test's expectation
/// fails instead of hanging. The bound only catches a test that would hang: it is generous,
/// because a machine with two cores, running every suite at once under the thread sanitizer,
/// can leave a test without a thread for seconds.
final class EventLog<Element: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let count: Int
        let continuation: CheckedContinuation<[Element], Never>
    }

    private struct State {
        var elements: [Element] = []
        var waiters: [Waiter] = []
        var lastWaiterID = 0
    }

    private let state = Locked(State())

    init() {}

    var elements: [Element] { state.withLock { $0.elements } }
    var count: Int { state.withLock { $0.elements.count } }

    func append(_ element: Element) {
        let ready: [(CheckedContinuation<[Element], Never>, [Element])] = state.withLock { state in
            state.elements.append(element)
            let count = state.elements.count
            let done = state.waiters.filter { $0.count <= count }
            state.waiters.removeAll { $0.count <= count }
            return done.map { ($0.continuation, state.elements) }
        }
        for (continuation, elements) in ready { continuation.resume(returning: elements) }
    }

    /// Waits until at least `count` elements have arrived, or `timeout` seconds have passed.
    @discardableResult
    func wait(for count: Int, timeout: TimeInterval = 60) async -> [Element] {
        await withCheckedContinuation { continuation in
            let waiterID: Int? = state.withLock { state in
                guard state.elements.count < count else { return nil }
                state.lastWaiterID += 1
                state.waiters.append(Waiter(id: state.lastWaiterID, count: count, continuation: continuation))
                return state.lastWaiterID
            }
            guard let waiterID else {
                continuation.resume(returning: elements)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let expired: (CheckedContinuation<[Element], Never>, [Element])? = state.withLock { state in
                    guard let index = state.waiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
                    return (state.waiters.remove(at: index).continuation, state.elements)
                }
                if let (continuation, elements) = expired { continuation.resume(returning: elements) }
            }
        }
    }

    /// ``wait(for:timeout:)`` for a thread that is not in a task: blocks it meanwhile.
    @discardableResult
    func waitBlocking(for count: Int, timeout: TimeInterval) -> [Element] {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<[Element]>([])
        Task {
            let elements = await wait(for: count, timeout: timeout)
            result.withLock { $0 = elements }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}

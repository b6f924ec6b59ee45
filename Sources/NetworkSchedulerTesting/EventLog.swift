import NetworkScheduler
import Dispatch
import Foundation

/// Values that arrive from other threads, with bounded waits for them: a test's way to wait
/// for an event without sleeping. A wait that times out returns what arrived, so the test's
/// expectation fails instead of hanging.
///
/// ```swift
/// let arrivals = transport.arrivals.wait(for: 2)   // the first two requests on the wire
/// ```
public final class EventLog<Element: Sendable>: Sendable {
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

    /// An empty log.
    public init() {}

    /// Everything that arrived, in order.
    public var elements: [Element] { state.withLock { $0.elements } }
    /// How many elements arrived.
    public var count: Int { state.withLock { $0.elements.count } }

    /// Adds an element, and wakes the waits it completes.
    ///
    /// - Parameter element: the value that arrived.
    public func append(_ element: Element) {
        let ready: [(CheckedContinuation<[Element], Never>, [Element])] = state.withLock { state in
            state.elements.append(element)
            let count = state.elements.count
            let done = state.waiters.filter { $0.count <= count }
            state.waiters.removeAll { $0.count <= count }
            return done.map { ($0.continuation, state.elements) }
        }
        for (continuation, elements) in ready { continuation.resume(returning: elements) }
    }

    /// Waits until at least `count` elements have arrived, or `timeout` seconds have passed;
    /// returns what arrived. The bound only catches a test that would hang: keep it generous,
    /// since a busy machine running suites in parallel under the thread sanitizer can leave a
    /// test without a thread for seconds.
    ///
    /// - Parameters:
    ///   - count: how many elements to wait for, in all.
    ///   - timeout: the most seconds to wait.
    @discardableResult
    public func wait(for count: Int, timeout: TimeInterval = 60) async -> [Element] {
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
    ///
    /// - Parameters:
    ///   - count: how many elements to wait for, in all.
    ///   - timeout: the most seconds to wait.
    @discardableResult
    public func waitBlocking(for count: Int, timeout: TimeInterval) -> [Element] {
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

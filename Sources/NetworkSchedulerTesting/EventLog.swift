import NetworkScheduler
import Dispatch
import Foundation
import Testing

/// Values that arrive from other threads, with bounded waits for them: a test's way to wait
/// for an event without sleeping. A wait that times out records an issue in the running test
/// and returns what arrived, so the test fails instead of hanging. To show that something
/// does not happen, do not wait for it in real time: move a `VirtualClock`, or read a state.
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
    /// returns what arrived, and records an issue in the running test if that is fewer. The
    /// bound only catches a test that would hang: keep it generous, since a busy machine
    /// running suites in parallel under the thread sanitizer can leave a test without a thread
    /// for seconds.
    ///
    /// - Parameters:
    ///   - count: how many elements to wait for, in all.
    ///   - timeout: the most seconds to wait.
    ///   - fileID: the caller's file, where the issue is recorded.
    ///   - filePath: the caller's file path.
    ///   - line: the caller's line.
    ///   - column: the caller's column.
    @discardableResult
    public func wait(for count: Int, timeout: TimeInterval = 60, fileID: String = #fileID, filePath: String = #filePath,
                     line: Int = #line, column: Int = #column) async -> [Element] {
        let arrived = await arrivals(count, within: timeout)
        if arrived.count < count {
            Issue.record("waited \(timeout) s for \(count) elements, and \(arrived.count) arrived",
                         sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
        }
        return arrived
    }

    /// What arrived once `count` elements have, or `timeout` seconds have passed: a wait whose
    /// end by its bound is an answer, not a failure (an audit's, an interleaver's).
    @discardableResult
    func arrivals(_ count: Int, within timeout: TimeInterval) async -> [Element] {
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

    /// Waits, blocking a thread that is not in a task, until at least `count` elements have
    /// arrived or `timeout` seconds have passed; returns what arrived. Unlike
    /// ``wait(for:timeout:fileID:filePath:line:column:)`` it records nothing when the bound passes: a
    /// thread that drives a load polls with it.
    ///
    /// - Parameters:
    ///   - count: how many elements to wait for, in all.
    ///   - timeout: the most seconds to wait.
    @discardableResult
    public func waitBlocking(for count: Int, timeout: TimeInterval) -> [Element] {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<[Element]>([])
        Task {
            let elements = await arrivals(count, within: timeout)
            result.withLock { $0 = elements }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}

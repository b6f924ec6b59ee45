import Dispatch
import Foundation

/// The requests of one screen (or any scope), cancelled, re-ranked or suspended together.
///
/// Keep one per screen and pass it to every request the screen makes. When the user leaves,
/// call ``cancelAll()``, or just release the group: it cancels what is left when it is
/// deinitialised. Only this group's callers are cancelled; a call shared with another screen
/// goes on for that screen.
///
/// ```swift
/// final class FriendsScreenModel {
///     private let group = RequestGroup()
///     func load() {
///         friendsService.loadFriends(of: user, group: group) { … }
///     }
/// }
/// ```
public final class RequestGroup: Sendable {
    private struct State {
        var members: [RequestHandle.ID: RequestHandle] = [:]
        var isSuspended = false
        /// Callers of ``settled(timeout:)``, by number, resumed with `true` once no member is left.
        var settleWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        var lastWaiter = 0
    }

    private let state = Locked(State())

    /// An empty group.
    public init() {}

    deinit {
        cancelAll()
    }

    /// How many of the group's requests have not ended yet (whose completion has not run).
    public var count: Int { state.withLock { $0.members.count } }

    /// Whether the group's requests that have not started wait (see ``suspend()``).
    public var isSuspended: Bool { state.withLock { $0.isSuspended } }

    /// Cancels every request of the group that has not ended, in time proportional to their
    /// number. Each leaves the group once its completion has run with `.cancelled`. Requests
    /// sent to the group afterwards run as usual.
    public func cancelAll() {
        let handles = state.withLock { Array($0.members.values) }
        Self.bySchedulers(handles) { scheduler, handles in scheduler.cancel(handles) }
    }

    /// Waits until every request sent to the group before this call has ended and its
    /// completion has run (or its awaiting task was resumed): a pull-to-refresh that spins
    /// until the screen's requests are all in, or a test that checks a screen's state once its
    /// loads are done. Returns `true` then, or `false` once `timeout` seconds have passed or
    /// the calling task is cancelled, whichever comes first.
    ///
    /// ```swift
    /// screen.load()
    /// await screen.group.settled()
    /// #expect(screen.friends.count == 3)
    /// ```
    ///
    /// - Parameter timeout: the most seconds to wait; a minute by default.
    /// - Returns: whether the group settled.
    @discardableResult
    public func settled(timeout: TimeInterval = 60) async -> Bool {
        let number = state.withLock { state in
            state.lastWaiter += 1
            return state.lastWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let isSettled = state.withLock { state in
                    guard !state.members.isEmpty, !Task.isCancelled else { return true }
                    state.settleWaiters[number] = continuation
                    return false
                }
                if isSettled {
                    continuation.resume(returning: state.withLock { $0.members.isEmpty })
                    return
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { [weak self] in
                    self?.stopWaiting(number)
                }
            }
        } onCancel: {
            stopWaiting(number)
        }
    }

    /// Resumes waiter `number` with `false`, if it still waits: its bound passed, or its task
    /// was cancelled.
    private func stopWaiting(_ number: Int) {
        let waiter = state.withLock { $0.settleWaiters.removeValue(forKey: number) }
        waiter?.resume(returning: false)
    }

    /// Holds back the group's requests that have not started, and those sent to it until
    /// ``resume()``: a hidden screen's prefetches wait without being cancelled. Requests on the
    /// wire go on (one that must be tried again then waits too); a call shared with a request
    /// outside the group runs for that request. Call it and ``resume()`` from one thread.
    ///
    /// ```swift
    /// func screenDidDisappear() { screen.suspend() }
    /// func screenWillAppear() { screen.resume() }
    /// ```
    public func suspend() {
        setSuspended(true)
    }

    /// Lets the group's requests start again, each in the place in its host's line it had.
    public func resume() {
        setSuspended(false)
    }

    private func setSuspended(_ isSuspended: Bool) {
        let handles = state.withLock { state in
            state.isSuspended = isSuspended
            return Array(state.members.values)
        }
        Self.bySchedulers(handles) { scheduler, handles in scheduler.setSuspended(isSuspended, of: handles) }
    }

    /// Gives every request of the group that has not ended `priority`, as if each handle's
    /// ``RequestHandle/priority`` were set, in one pass per scheduler: lower a hidden screen's
    /// requests, raise them again when it shows. Requests sent to the group afterwards keep
    /// the priority they are sent with.
    ///
    /// ```swift
    /// override func viewWillDisappear(_ animated: Bool) { group.setPriority(.low) }
    /// override func viewWillAppear(_ animated: Bool) { group.setPriority(.high) }
    /// ```
    ///
    /// - Parameter priority: the priority every caller of the group gets.
    public func setPriority(_ priority: RequestPriority) {
        let handles = state.withLock { Array($0.members.values) }
        Self.bySchedulers(handles) { scheduler, handles in scheduler.setPriority(priority, of: handles) }
    }

    /// Hands `body` each scheduler's handles: a group may hold requests of several.
    private static func bySchedulers(_ handles: [RequestHandle], _ body: (RequestScheduler, [RequestHandle]) -> Void) {
        guard let scheduler = handles.first?.scheduler else { return }
        if handles.allSatisfy({ $0.scheduler === scheduler }) {
            body(scheduler, handles)
            return
        }
        for handles in Dictionary(grouping: handles, by: { ObjectIdentifier($0.scheduler) }).values {
            body(handles[0].scheduler, handles)
        }
    }

    /// Lists a caller until it ends (its handle calls ``remove(_:)``); returns whether the group
    /// is suspended. The scheduler lists a caller under its own lock, as the caller enters its
    /// machine, so that a concurrent ``suspend()`` or ``resume()`` either sees it listed or is
    /// seen by it.
    func insert(_ handle: RequestHandle) -> Bool {
        let isSuspended = state.withLock { state in
            state.members[handle.id] = handle
            return state.isSuspended
        }
        // It may have ended before it was listed; it marks itself finished before it leaves.
        if handle.isFinished { remove(handle.id) }
        return isSuspended
    }

    func remove(_ id: RequestHandle.ID) {
        let settled = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            guard state.members.removeValue(forKey: id) != nil, state.members.isEmpty, !state.settleWaiters.isEmpty else {
                return []
            }
            defer { state.settleWaiters = [:] }
            return Array(state.settleWaiters.values)
        }
        for waiter in settled { waiter.resume(returning: true) }
    }
}

import Dispatch

/// The deadlines of the attempts on the wire, with one timer for them all.
///
/// The scheduler never relies on a transport to call back: FoundationNetworking's timeout is an
/// idle timeout (a body trickling a byte every half second never times out) and some answers
/// never complete at all (a 401 with a challenge no one answers). So each attempt is watched
/// from the moment its task starts until it ends, and one that outlives its timeout is ended
/// here, as `.timedOut`, which cancels its task and frees its budget slot.
///
/// Only attempts on the wire are watched (at most the budget per host), so finding the next
/// deadline is a short walk. The timer is armed for the earliest deadline; an attempt that ends
/// before it leaves the timer armed, and a timer that fires with nothing due arms itself again
/// for what is left, so starting and ending an attempt each cost one short lock and no timer call.
final class AttemptDeadlines: Sendable {
    /// The one every operation uses unless given another.
    static let shared = AttemptDeadlines()

    private struct Watched {
        let deadline: UInt64
        let operation: DataTaskOperation
    }

    private struct State: @unchecked Sendable {
        // Safety: the timer source is touched only under the lock, like the rest.
        var watched: [ObjectIdentifier: Watched] = [:]
        /// The uptime the timer is armed for, if it is.
        var armedFor: UInt64?
        /// Touched only under the lock, like the rest.
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "NetworkScheduler.deadlines"))
    }

    private let state = Locked(State())

    init() {
        state.withLock { state in
            state.timer.setEventHandler { [weak self] in self?.fire() }
            state.timer.activate()
        }
    }

    deinit {
        state.withLock { $0.timer.cancel() }
    }

    /// Ends `operation` as timed out at `deadline` (an uptime in nanoseconds) unless it is
    /// forgotten first.
    func watch(_ operation: DataTaskOperation, until deadline: UInt64) {
        state.withLock { state in
            state.watched[ObjectIdentifier(operation)] = Watched(deadline: deadline, operation: operation)
            if let armed = state.armedFor, armed <= deadline { return }
            // Under the lock, so that two attempts starting at once cannot leave the later
            // deadline armed.
            state.armedFor = deadline
            state.timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: .milliseconds(5))
        }
    }

    /// Stops watching an attempt that ended.
    func forget(_ operation: DataTaskOperation) {
        state.withLock { _ = $0.watched.removeValue(forKey: ObjectIdentifier(operation)) }
    }

    /// How many attempts are watched, for tests.
    var count: Int { state.withLock { $0.watched.count } }

    private func fire() {
        let now = DispatchTime.now().uptimeNanoseconds
        let expired: [DataTaskOperation] = state.withLock { state in
            var expired: [DataTaskOperation] = []
            var next: UInt64?
            for (id, watched) in state.watched {
                if watched.deadline <= now {
                    expired.append(watched.operation)
                    state.watched[id] = nil
                } else {
                    next = min(next ?? .max, watched.deadline)
                }
            }
            state.armedFor = next
            if let next {
                state.timer.schedule(deadline: DispatchTime(uptimeNanoseconds: next), leeway: .milliseconds(5))
            }
            return expired
        }
        for operation in expired { operation.expire() }
    }
}

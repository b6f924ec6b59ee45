// Serial lanes: the calls of one lane go one at a time, in the order they were made.
extension SchedulerMachine {
    /// A lane with a call in it: the call that may run (it waits in its line, runs, backs off,
    /// or runs on with no caller left), and those made after it, in order, which wait out of
    /// their lines.
    @usableFromInline struct LaneQueue: Sendable {
        @usableFromInline var current: CallID
        @usableFromInline var behind: [CallID] = []

        @inlinable init(current: CallID, behind: [CallID] = []) {
            self.current = current
            self.behind = behind
        }
    }

    /// Puts a new call in its lane: first, it may go at once (true); behind others, it waits.
    @inlinable mutating func enterLane(_ callID: CallID, named name: String) -> Bool {
        guard lanes[name] != nil else {
            lanes[name] = LaneQueue(current: callID)
            return true
        }
        lanes[name]?.behind.append(callID)
        calls[callID.slot].attempt = .inLane
        return false
    }

    /// Removes a call whose outcome is decided, or whose callers all left and whose task
    /// ended, and lets the next call of its lane go: into its line, or, when this one `failed`
    /// and its lane cancels the rest on failure, every call behind it ends with `.cancelled`.
    @discardableResult
    @inlinable mutating func retire(_ callID: CallID, failed: Bool = false, now: UInt64, into actions: inout Actions) -> Call {
        let call = calls.remove(callID.slot)
        if let lane = call.request.lane { leaveLane(lane, callID, failed: failed, now: now, into: &actions) }
        return call
    }

    @inlinable mutating func leaveLane(_ lane: Lane, _ callID: CallID, failed: Bool, now: UInt64, into actions: inout Actions) {
        guard var queue = lanes[lane.name] else { return }
        guard queue.current == callID else {
            queue.behind.removeAll { $0 == callID }
            lanes[lane.name] = queue
            return
        }
        if failed, lane.onFailure == .cancelTheRest {
            lanes[lane.name] = nil
            // Not through `cancel`, an event of its own, which would fill hosts halfway
            // through this one.
            for caller in queue.behind.flatMap({ Array(calls[$0.slot].callers) }) {
                if let handle = leave(caller, now: now, into: &actions) { actions.unlocked.cancelled.append(handle) }
            }
            return
        }
        guard !queue.behind.isEmpty else {
            lanes[lane.name] = nil
            return
        }
        let next = queue.behind.removeFirst()
        queue.current = next
        lanes[lane.name] = queue
        hostsToFill.insert(calls[next.slot].host)
        calls[next.slot].attempt = .between
        line(next, now: now, into: &actions)
    }
}

// Priority inheritance: a caller waiting for dependencies lends them its priority, transitively,
// while it waits, so that what an urgent request waits for is not left behind less urgent calls.
extension SchedulerMachine {
    /// A caller's effective priority went from `was` to `now`. What counts a caller's priority
    /// (its call, or the callers it waits for) counts `was` until the change is carried on.
    @usableFromInline struct PriorityChange {
        @usableFromInline let caller: CallerID
        @usableFromInline let was: RequestPriority
        @usableFromInline let now: RequestPriority

        @inlinable init(caller: CallerID, was: RequestPriority, now: RequestPriority) {
            self.caller = caller
            self.was = was
            self.now = now
        }
    }

    /// Lends a new dependent's priority to the callers it waits for.
    @inlinable mutating func lend(from id: CallerID, now: UInt64, into actions: inout Actions) {
        let priority = callers[id.slot].effectivePriority
        var changes: [PriorityChange] = []
        for dependency in callers[id.slot].dependencies where callers.contains(dependency.slot) {
            changeInherited(of: dependency, adding: priority, into: &changes)
        }
        carry(changes, now: now, into: &actions)
    }

    /// Takes back what a dependent lent the callers it waited for: it stopped waiting (its
    /// dependencies succeeded), or it left.
    @inlinable mutating func stopLending(from id: CallerID, now: UInt64, into actions: inout Actions) {
        let priority = callers[id.slot].effectivePriority
        var changes: [PriorityChange] = []
        for dependency in callers[id.slot].dependencies where callers.contains(dependency.slot) {
            changeInherited(of: dependency, removing: priority, into: &changes)
        }
        callers[id.slot].lending?.dependencies = []
        carry(changes, now: now, into: &actions)
    }

    /// Carries changes of effective priority on, in the order they were made (so that each
    /// removes what the one before it added): an attached caller's call counts its new one,
    /// moving in its line or telling its task (its host to be filled, should it rise into a
    /// free slot); a
    /// waiting caller's dependencies inherit it, and so on up the chain. Without recursion: a
    /// chain of dependents may be 100,000 long.
    @inlinable mutating func carry(_ changes: [PriorityChange], now: UInt64, into actions: inout Actions) {
        var changes = changes
        var next = 0
        while next < changes.count {
            let change = changes[next]
            next += 1
            switch callers[change.caller.slot].stage {
            case .attached(let callID, _):
                reprioritize(callID, adding: change.now, removing: change.was, into: &actions)
                if case .waiting = calls[callID.slot].attempt { hostsToFill.insert(calls[callID.slot].host) }
            case .waiting:
                for dependency in callers[change.caller.slot].dependencies where callers.contains(dependency.slot) {
                    changeInherited(of: dependency, adding: change.now, removing: change.was, into: &changes)
                }
            case .building:
                break
            }
        }
    }

    /// Changes what a caller inherits; if that changes its effective priority, adds the change.
    @inlinable mutating func changeInherited(
        of id: CallerID,
        adding added: RequestPriority? = nil,
        removing removed: RequestPriority? = nil,
        into changes: inout [PriorityChange]
    ) {
        let was = callers[id.slot].effectivePriority
        callers[id.slot].changeLending { lending in
            if let removed { lending.inherited.remove(removed) }
            if let added { lending.inherited.add(added) }
        }
        let now = callers[id.slot].effectivePriority
        if now != was { changes.append(PriorityChange(caller: id, was: was, now: now)) }
    }
}

@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

// What must hold after every event, recounted from scratch: the fuzz checks it after each step.
// Here, with the tests, since only they ask.
extension SchedulerMachine {
    /// Attempts holding a budget slot (and how many of those are low-priority ones), and calls
    /// waiting for one, over all hosts. A slot kept through its grace after its callers left
    /// (``SchedulerMachine/cancellationGrace``) is not an attempt's: the invariants check that
    /// its timer frees it.
    var lineCounts: (running: Int, lowPriorityRunning: Int, waiting: Int) {
        hosts.reduce(into: (0, 0, 0)) { counts, host in
            counts.0 += host.running - host.cooling.count
            counts.1 += host.lowPriorityRunning - host.cooling.count { $0.isLowPriority }
            counts.2 += host.waiting
        }
    }

    /// Entries in the waiting lines, stale ones included.
    var lineEntryCount: Int {
        hosts.reduce(0) { $0 + $1.line.entryCount }
    }

    /// Each invariant that does not hold, described; empty when the machine is consistent.
    func invariantViolations() -> [String] {
        var violations: [String] = []
        func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { violations.append(message()) }
        }
        check(hostsToFill.isEmpty, "hosts to fill are kept after an event")
        var running = [Int](repeating: 0, count: hosts.count)
        var lowPriorityRunning = [Int](repeating: 0, count: hosts.count)
        var waiting = [Int](repeating: 0, count: hosts.count)
        let allCalls = calls.all
        // What each caller inherits is what the callers waiting for it lend.
        var lent: [SlotID: PriorityCounts] = [:]
        for (slot, caller) in callers.all {
            if case .waiting = caller.stage {} else {
                check(caller.dependencies.isEmpty, "caller \(slot) lends its priority but no longer waits")
            }
            for dependency in caller.dependencies where callers.contains(dependency.slot) {
                lent[dependency.slot, default: PriorityCounts()].add(caller.effectivePriority)
            }
        }
        for (slot, caller) in callers.all {
            check((caller.lending?.inherited ?? PriorityCounts()) == lent[slot, default: PriorityCounts()],
                  "caller \(slot) inherits other than what is lent")
        }
        for (slot, call) in allCalls {
            let id = CallID(slot: slot, number: call.number)
            var priorities = PriorityCounts()
            var suspended = 0
            for callerID in call.callers {
                guard let caller = callers.lookup(callerID.slot) else {
                    check(call.isAbandoned, "\(id) lists \(callerID), which has ended")
                    continue
                }
                priorities.add(caller.effectivePriority)
                if caller.isSuspended { suspended += 1 }
                if case .attached(let attachedTo, _) = caller.stage {
                    check(attachedTo == id, "\(callerID) is with \(attachedTo), but listed by \(id)")
                } else {
                    check(false, "\(callerID) is listed by \(id) but not attached")
                }
            }
            if !call.isAbandoned {
                check(priorities.highest == call.priorities.highest, "\(id)'s highest priority is not its callers'")
                check(suspended == call.suspendedCallers, "\(id) counts \(call.suspendedCallers) suspended callers, but \(suspended) are")
            }
            if let key = call.key {
                check(call.isAbandoned || registered(key, lane: call.request.lane?.name) == id, "\(id) is not registered under its key")
            }
            switch call.attempt {
            case .waiting:
                waiting[call.host] += 1
                // A timer only for its promotion, when its rank has a maximum wait.
                let promotion = call.rank.flatMap { $0 < .critical ? maximumWaits[$0.rawValue] : nil }
                check(timers[.call(id)] == promotion.map { call.rankSince + $0 },
                      "\(id) waits in its line with a timer other than its promotion's")
                check(!call.isHeld, "\(id) waits in its line, but all its callers are suspended")
            case .held:
                check(timers[.call(id)] == nil, "\(id) is held with a timer")
                check(call.isHeld, "\(id) is held, but a caller of it is not suspended")
            case .running(let attempt), .abandoned(let attempt):
                running[call.host] += 1
                if attempt.holdsLowPrioritySlot { lowPriorityRunning[call.host] += 1 }
                check(timers[.call(id)] != nil, "\(id) runs without a deadline")
            case .between:
                break
            case .awaitingVerdict:
                check(timers[.call(id)] == nil, "\(id) waits for the verdict on its timeout with a timer")
            case .kept(_, let until):
                check(timers[.call(id)] == until, "\(id) keeps its outcome without a timer to forget it")
                check(call.callers.count == 0 && call.key != nil, "\(id) keeps an outcome for callers, or without a key")
            case .inLane:
                check(timers[.call(id)] == nil, "\(id) waits in its lane with a timer")
                check(call.request.lane.flatMap { lanes[$0.name]?.behind.contains(id) } == true,
                      "\(id) waits for its lane, which does not list it")
            }
            if call.callers.count == 0 && !call.isAbandoned {
                check(call.isKept || (call.running != nil && call.request.runsOnWithoutCallers),
                      "\(id) has no caller, but is neither a keyed call on the wire nor a kept outcome")
            }
            if let lane = call.request.lane, !call.isInLane, !call.isKept {
                check(lanes[lane.name]?.current == id, "\(id) goes while another call of lane \(lane.name) may")
            }
        }
        for (slot, caller) in callers.all {
            if case .attached(let callID, _) = caller.stage {
                let call = calls.lookup(callID.slot)
                check(call?.callers.contains(CallerID(slot: slot, number: caller.number)) == true && call?.isAbandoned == false,
                      "caller \(slot) is attached to \(callID), which does not list it")
            }
        }
        var registered = 0
        for (hash, head) in registry {
            var candidate: CallID? = head
            while let id = candidate {
                let call = calls.lookup(id.slot)
                check(call?.key?.hashValue == hash && call?.isAbandoned == false,
                      "the registry names \(id), which is gone or has another key")
                registered += 1
                candidate = call?.nextWithSameHash
            }
        }
        check(registered == registeredCount, "the registry counts \(registeredCount) keys, but holds \(registered)")
        check(hostsToFill.isEmpty, "hosts are left to fill after an event")
        for (name, lane) in lanes {
            check(calls.lookup(lane.current.slot).map { !$0.isInLane && $0.request.lane?.name == name } == true,
                  "lane \(name) goes with \(lane.current), which is gone or not its own")
            for id in lane.behind {
                check(calls.lookup(id.slot).map { $0.isInLane && $0.request.lane?.name == name } == true,
                      "lane \(name) lists \(id), which is gone or does not wait there")
            }
        }
        for key in timers.keys {
            switch key {
            case .call(let id): check(calls.contains(id.slot), "a timer is set for \(id), which is gone")
            case .caller(let id):
                check(callers.lookup(id.slot)?.hasDeadline == true, "a deadline is set for \(id), which is gone")
            case .patience(let id):
                let caller = callers.lookup(id.slot)
                check(caller?.patienceWatch == .timer, "a patience timer is set for \(id), which is gone or watched otherwise")
                if case .attached(let call, _) = caller?.stage, case .running = calls[call.slot].attempt {} else {
                    check(false, "\(id) has a patience timer but waits on no running attempt")
                }
            case .cooling(let index):
                check(!hosts[index].cooling.isEmpty, "\(hosts[index].name) has a grace timer, but no slot in grace")
            case .host(let index):
                let host = hosts[index]
                var isPaused = false
                if case .paused = host.availability { isPaused = true }
                check(isPaused || host.rateLimit != nil, "\(host.name) has a timer, but no pause nor rate limit")
            }
        }
        for (slot, caller) in callers.all where caller.hasDeadline {
            check(timers[.caller(CallerID(slot: slot, number: caller.number))] != nil, "caller \(slot) lost its deadline")
        }
        for (slot, caller) in callers.all where caller.patienceWatch == .timer {
            check(timers[.patience(CallerID(slot: slot, number: caller.number))] != nil, "caller \(slot) lost its patience timer")
        }
        if let earliest = timers.values.min() {
            check(armedFor.map { $0 <= earliest } ?? false, "the timer is not armed for the earliest deadline")
        }
        var kept = [Int](repeating: 0, count: hosts.count)
        for (slot, caller) in callers.all {
            guard let host = caller.lending?.reservedSlot else { continue }
            kept[host] += 1
            if case .attached = caller.stage { check(false, "caller \(slot) is attached but a slot is still kept for it") }
        }
        for (index, host) in hosts.enumerated() {
            // A slot in its grace after its callers left is running still.
            running[index] += host.cooling.count
            lowPriorityRunning[index] += host.cooling.count { $0.isLowPriority }
            check(host.cooling.isEmpty || timers[.cooling(index)] == host.cooling.first?.until,
                  "\(host.name) keeps slots in grace without a timer for the first")
            check(host.reserved == kept[index], "\(host.name) keeps \(host.reserved) slots, for \(kept[index]) callers")
            // Attempts started under a wider budget (streams) run on over a narrower one.
            check(host.hasNarrowed || host.running + host.reserved <= host.budget, "\(host.name) runs and keeps more than its budget")
            check(host.running == running[index], "\(host.name) counts \(host.running) running, but \(running[index]) run")
            check(host.lowPriorityRunning == lowPriorityRunning[index],
                  "\(host.name) counts \(host.lowPriorityRunning) low-priority running, but \(lowPriorityRunning[index]) run")
            check(host.waiting == waiting[index], "\(host.name) counts \(host.waiting) waiting, but \(waiting[index]) wait")
            check(host.hasNarrowed || host.running <= host.budget, "\(host.name) runs \(host.running), over its budget of \(host.budget)")
            let expectedBudget = switch host.speaks {
            case _ where host.name.hasSuffix(" streams"): streamBudget
            case .multiplexed(let streams): min(max(1, streams ?? multiplexedBudget), HostProtocol.streamCeiling)
            case .none, .http1: host.isDistant ? distantBudget : budget
            }
            check(host.budget == expectedBudget, "\(host.name) speaks \(String(describing: host.speaks)) with a budget of \(host.budget)")
            check(host.window >= 1 && host.window <= Double(host.budget), "\(host.name)'s adaptive budget left 1...\(host.budget)")
            let (hostBudget, hostLowBudget) = budgets(ofHost: index)
            check(host.hasNarrowed || host.lowPriorityRunning <= host.lowPriorityBudget, "\(host.name) runs too many low-priority calls")
            check(host.line.entryCount >= host.waiting, "\(host.name)'s line lost a waiting call")
            check(lineLimit.map { host.waiting <= $0 } ?? true, "\(host.name)'s line holds \(host.waiting), over its limit")
            if case .paused = host.availability {
                check(timers[.host(index)] != nil, "\(host.name) is paused without a timer to end it")
            }
            if case .probing(let probe?) = host.availability {
                check(calls.lookup(probe.slot)?.running != nil, "\(host.name)'s probe \(probe) is not on the wire")
            }
            let mayStart: Bool = switch host.availability {
            case .available, .probing(.none): host.rateLimit == nil || timers[.host(index)] == nil
            case .paused, .probing(.some): false
            }
            check(isOffline || !mayStart || host.waiting == 0 || host.running + host.reserved >= hostBudget
                    || (host.lowPriorityRunning >= hostLowBudget && !hasUrgentWaiter(onHost: index, among: allCalls)),
                  "\(host.name) has a free slot and a call waiting that could take it")
        }
        return violations
    }

    /// Whether a call of `.normal` rank or above waits on `host`.
    private func hasUrgentWaiter(onHost host: Int, among calls: [(id: SlotID, element: Call)]) -> Bool {
        calls.contains { entry in
            guard entry.element.host == host, case .waiting = entry.element.attempt else { return false }
            return (entry.element.rank ?? .background) >= .normal
        }
    }
}


// Each caller's own patience and retry policy on a call it shares. A call's attempt lasts as
// long as its most patient caller's timeout; a less patient caller's own timeout is a timer of
// its own, and when it runs out its own retry policy says whether it waits on (as on a retry of
// its own) or ends. When an attempt fails, every caller's policy is asked: those that give up
// end there, and the call is tried again while one of them would.
extension SchedulerMachine {
    /// The deadline of `callID`'s attempt begun, or last heard of, at `now`: its most patient
    /// caller's, or its request's once its callers left.
    @inlinable func attemptDeadline(of callID: CallID, from now: UInt64) -> UInt64 {
        let call = calls[callID.slot]
        guard call.callers.count > 0 else { return Self.deadline(after: now, timeout: call.request.attemptTimeout) }
        var latest: UInt64 = 0
        for id in call.callers { latest = max(latest, Self.deadline(after: now, timeout: callers[id.slot].patience)) }
        return latest
    }

    /// Sets the deadlines of `callID`'s attempt, begun or last heard of at `now`: its own, its
    /// most patient caller's, and the end of the patience of each caller the attempt may
    /// outlast. Callers whose patience is being judged are left to their verdict. A deadline
    /// moved later leaves the timer armed for the earlier one, which then finds nothing due.
    @inlinable mutating func setDeadlines(ofAttemptOf callID: CallID, from now: UInt64, into actions: inout Actions) {
        let deadline = attemptDeadline(of: callID, from: now)
        setTimer(.call(callID), at: deadline, into: &actions)
        calls[callID.slot].deadlineHolders.removeAll()
        // A lone caller holds the deadline, listed only once another joins (no array a request).
        let isShared = calls[callID.slot].callers.count > 1
        for id in calls[callID.slot].callers where callers[id.slot].patienceWatch != .verdictWanted {
            let own = Self.deadline(after: now, timeout: callers[id.slot].patience)
            if own < deadline {
                callers[id.slot].patienceWatch = .timer
                setTimer(.patience(id), at: own, into: &actions)
            } else {
                if callers[id.slot].patienceWatch == .timer { timers[.patience(id)] = nil }
                callers[id.slot].patienceWatch = .none
                if isShared { calls[callID.slot].deadlineHolders.append(id) }
            }
        }
    }

    /// Caller `id` of `callID`'s running attempt watches its own patience until `own`: by a
    /// timer if the attempt's deadline is later; as one of its holders if it is the same; and
    /// if it is earlier, the deadline moves to `own`, and the holders until then each watch
    /// theirs by a timer. Each caller leaves the holders once an attempt, so a burst of
    /// joiners costs one step each.
    @inlinable mutating func watchPatience(of id: CallerID, until own: UInt64, on callID: CallID, into actions: inout Actions) {
        guard let current = timers[.call(callID)] else { return }
        if calls[callID.slot].deadlineHolders.isEmpty {
            // The lone caller until now, or those that hold the deadline unlisted.
            for other in calls[callID.slot].callers where other != id && callers[other.slot].patienceWatch == .none {
                calls[callID.slot].deadlineHolders.append(other)
            }
        }
        if own < current {
            callers[id.slot].patienceWatch = .timer
            setTimer(.patience(id), at: own, into: &actions)
            return
        }
        callers[id.slot].patienceWatch = .none
        if own > current {
            for holder in calls[callID.slot].deadlineHolders where holder != id {
                guard let caller = callers.lookup(holder.slot), caller.patienceWatch == .none,
                      case .attached(let call, _) = caller.stage, call == callID else { continue }
                callers[holder.slot].patienceWatch = .timer
                setTimer(.patience(holder), at: current, into: &actions)
            }
            calls[callID.slot].deadlineHolders.removeAll()
            // Later: the timer armed for the earlier deadline finds nothing due.
            timers[.call(callID)] = own
        }
        calls[callID.slot].deadlineHolders.append(id)
    }

    /// Caller `id` joined `callID` at `now`: if an attempt runs, it waits on it as long as its
    /// own patience, counted from its joining.
    @inlinable mutating func joinAttempt(_ id: CallerID, of callID: CallID, now: UInt64, into actions: inout Actions) {
        guard case .running = calls[callID.slot].attempt else { return }
        watchPatience(of: id, until: Self.deadline(after: now, timeout: callers[id.slot].patience), on: callID, into: &actions)
    }

    /// `callID`'s attempt ended: no caller watches its patience with it any longer. An
    /// abandoned call still lists the callers that left it, whose timers left with them.
    @inlinable mutating func stopWatchingPatience(of callID: CallID) {
        calls[callID.slot].deadlineHolders.removeAll()
        guard !calls[callID.slot].isAbandoned else { return }
        for id in calls[callID.slot].callers where callers[id.slot].patienceWatch != .none {
            if callers[id.slot].patienceWatch == .timer { timers[.patience(id)] = nil }
            callers[id.slot].patienceWatch = .none
        }
    }

    /// Callers whose patience ran out (their timers fired) on attempts that run on: each
    /// call's asks their policies, in one ``VerdictWanted``.
    @inlinable mutating func patienceRanOut(_ ids: [CallerID]) -> [VerdictWanted] {
        var attempts: [AttemptID] = []
        var asking: [AttemptID: [AskedCaller]] = [:]
        for id in ids {
            guard let caller = callers.lookup(id.slot), caller.patienceWatch == .timer,
                  case .attached(let callID, _) = caller.stage, case .running(let running) = calls[callID.slot].attempt else {
                continue
            }
            callers[id.slot].patienceWatch = .verdictWanted
            let attempt = AttemptID(call: callID, serial: running.serial)
            if asking[attempt] == nil { attempts.append(attempt) }
            asking[attempt, default: []].append(asked(id, of: callID))
        }
        return attempts.map { attempt in
            VerdictWanted(id: attempt, request: calls[attempt.call.slot].request, callers: asking[attempt] ?? [],
                          attemptRunsOn: true, outcome: .attemptTimedOut, kind: .timedOut)
        }
    }

    /// The verdict on callers (`asked`) whose patience ran out on `attempt`, which runs on for
    /// a more patient caller: each one its own policy gives up for (`verdict.givingUp`) ends
    /// with `answer`; the others wait on, as they would on a retry of their own, their
    /// patience counting again after the retry's delay. Nothing happens once the attempt has
    /// ended: its call's verdict asks every caller then.
    @inlinable package mutating func patienceJudged(
        _ attempt: AttemptID,
        asked: [CallerID],
        _ verdict: AttemptVerdict,
        answer: Outcome,
        now: UInt64
    ) -> Actions {
        let slot = attempt.call.slot
        guard calls.contains(slot), case .running(let running) = calls[slot].attempt, running.serial == attempt.serial else {
            return Actions()
        }
        var actions = Actions()
        let waitsOn = verdict.retry.map { now + UInt64(delay(of: $0) * 1_000_000_000) }
        let givingUp = Set(verdict.givingUp)
        for id in asked {
            guard let caller = callers.lookup(id.slot), caller.patienceWatch == .verdictWanted,
                  case .attached(let callID, _) = caller.stage, callID == attempt.call else { continue }
            guard let waitsOn, !givingUp.contains(id) else {
                release(id, of: attempt.call, with: answer, startedAt: running.started, now: now, into: &actions)
                continue
            }
            callers[id.slot].attemptOffset -= 1
            watchPatience(of: id, until: Self.deadline(after: waitsOn, timeout: caller.patience), on: attempt.call, into: &actions)
        }
        fillHosts(now: now, into: &actions)
        return actions
    }

    /// Ends caller `id` of `callID`, which may go on for others, with `outcome`: its own policy
    /// ended it there. `attemptStart` is when the attempt it waited on got its slot.
    @inlinable mutating func release(_ id: CallerID, of callID: CallID, with outcome: Outcome, startedAt attemptStart: UInt64,
                                     now: UInt64, into actions: inout Actions) {
        guard let caller = callers.lookup(id.slot), case .attached(_, let since) = caller.stage else { return }
        let measured = Self.measured(calls[callID.slot], since: since, attemptStart: attemptStart, now: now)
        let servedBy = ServingCall(id: callID, request: calls[callID.slot].request)
        guard let handle = leave(id, now: now, into: &actions) else { return }
        actions.unlocked.deliveries.append(Delivery(caller: handle, outcome: outcome, measured: measured, servedBy: servedBy))
    }

    /// Caller `id` of `callID`, to be asked for its verdict, with its own attempt number.
    @inlinable func asked(_ id: CallerID, of callID: CallID) -> AskedCaller {
        AskedCaller(id: id, handle: callers[id.slot].handle,
                    attemptNumber: calls[callID.slot].attemptNumber - Int(callers[id.slot].attemptOffset))
    }

    /// The seconds `retry` waits: jitter is drawn only for a backoff, so that a run replays
    /// from its seed.
    @inlinable mutating func delay(of retry: AttemptVerdict.Retry) -> Seconds {
        switch retry {
        case .after: retry.delay(jitter: 0)
        case .backoff: retry.delay(jitter: Double.random(in: 0...1, using: &jitter))
        }
    }
}

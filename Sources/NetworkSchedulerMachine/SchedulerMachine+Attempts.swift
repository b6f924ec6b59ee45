
// The events of attempts: they start, end, time out, back off, wait for a token, and decide
// their callers' outcome.
extension SchedulerMachine {
    /// An attempt's body went out further, to `progress`: its deadline counts again from
    /// `now`, so that a long upload has a deadline on stalling rather than on its whole length.
    /// Returns its call's callers, to tell of the progress; none if the attempt has ended, or
    /// if its callers have all left (an abandoned call still lists them, but they are gone).
    /// A caller that joins later is told the last step as it joins.
    @inlinable package mutating func attemptProgressed(
        _ attempt: AttemptID, to progress: TransferProgress, now: UInt64
    ) -> ([CallerHandle], Actions) {
        let slot = attempt.call.slot
        guard calls.contains(slot), !calls[slot].isAbandoned, calls[slot].running?.serial == attempt.serial else {
            return ([], Actions())
        }
        var actions = Actions()
        setDeadlines(ofAttemptOf: attempt.call, from: now, into: &actions)
        calls[slot].progress = progress
        return (calls[slot].callers.map { callers[$0.slot].handle }, actions)
    }

    /// An attempt's task ended with `outcome`, which `reading` reads (beside the transport:
    /// the machine never reads a status or a header). Frees its budget slot for the calls
    /// waiting and tells its host's health, then retries the call, refreshes its token, or
    /// delivers `outcome` to its callers; a failure first waits for its verdict (a
    /// ``VerdictWanted``). An attempt that had already ended (at its deadline) changes nothing.
    /// Its time on the wire is counted on the machine's clock, from the slot it got to `now`.
    /// `spoken`, what the answer came over (as its transport said, or as the answer showed;
    /// nil for one a redirect brought from another host), sets its host's budget
    /// (``host(_:answeredOver:after:)``), with how long it took, before the slot is given on.
    @inlinable package mutating func attemptEnded(
        _ attempt: AttemptID,
        with outcome: Outcome,
        _ reading: AttemptReading,
        over spoken: HostProtocol? = nil,
        now: UInt64
    ) -> (AttemptEnd, Actions) {
        let slot = attempt.call.slot
        guard calls.contains(slot), let running = calls[slot].running, running.serial == attempt.serial else {
            return (AttemptEnd(), Actions())
        }
        hostsToFill.insert(calls[slot].host)
        if let spoken, !calls[slot].request.opensStream {
            host(calls[slot].host, answeredOver: spoken, after: now - min(now, running.started))
        }
        var actions = Actions()
        let (healthChange, settled) = end(attempt.call, running, with: outcome, reading.kind, now: now, into: &actions)
        let followUp: FollowUp
        if let settled {
            followUp = settled
        } else if case .verdict(let verdict) = reading {
            calls[slot].attempt = .between
            followUp = decide(attempt.call, after: outcome, endingWith: outcome, verdict: verdict, startedAt: running.started,
                              now: now, into: &actions)
        } else {
            followUp = wantVerdict(on: attempt.call, running, outcome: outcome, kind: reading.kind)
        }
        fillHosts(now: now, into: &actions)
        return (AttemptEnd(healthChange: healthChange, followUp: followUp), actions)
    }

    /// The verdict on an attempt whose call waited for it (a ``VerdictWanted``): the call's
    /// token is refreshed, or it is tried again, or its callers get `ended` (the attempt's
    /// outcome as the layer beside the transport read it: the error that stalled it, or a
    /// stale answer from the cache); its callers whose own policy gives up
    /// (``AttemptVerdict/givingUp``) get it while the others wait for the retry, which event
    /// monitors hear `answer` caused. Nothing happens if the call has gone meanwhile (its
    /// callers left), or for any other attempt.
    @inlinable package mutating func verdictReached(_ attempt: AttemptID, _ verdict: AttemptVerdict,
                                 answer: Outcome, endingWith ended: Outcome? = nil, now: UInt64) -> (FollowUp, Actions) {
        let slot = attempt.call.slot
        guard calls.contains(slot), attempt.serial == calls[slot].attemptsStarted,
              case .awaitingVerdict(let started) = calls[slot].attempt else { return (.none, Actions()) }
        calls[slot].attempt = .between
        var actions = Actions()
        hostsToFill.insert(calls[slot].host)
        let followUp = decide(attempt.call, after: answer, endingWith: ended ?? answer, verdict: verdict, startedAt: started,
                              now: now, into: &actions)
        fillHosts(now: now, into: &actions)
        return (followUp, actions)
    }

    /// The timer fired: callers past their own deadline end with
    /// ``CallOutcome/callerDeadlinePassed``, attempts past theirs as
    /// ``CallOutcome/attemptTimedOut`` (their tasks are cancelled), calls that waited too long
    /// are promoted, and calls whose backoff is over go back in their lines.
    @inlinable package mutating func timerFired(now: UInt64) -> (TimerFired, Actions) {
        var actions = Actions()
        var fired = TimerFired()
        let due = timers.filter { $0.value <= now }.keys.sorted(by: TimerKey.firesBefore)
        for key in due { timers[key] = nil }
        var expired: [(CallID, Running)] = []
        var backedOff: [CallID] = []
        var late: [CallerID] = []
        var outwaited: [CallerID] = []
        for key in due {
            switch key {
            case .caller(let id):
                late.append(id)
            case .patience(let id):
                outwaited.append(id)
            case .host(let host):
                if let change = hostTimerFired(host, now: now) { fired.healthChanges.append(change) }
            case .cooling(let host):
                endGrace(onHost: host, now: now, into: &actions)
            case .call(let callID):
                switch calls[callID.slot].attempt {
                case .running(let running), .abandoned(let running): expired.append((callID, running))
                case .waiting:
                    if let promotion = promote(callID, now: now, into: &actions) { fired.promotions.append(promotion) }
                case .between, .held: backedOff.append(callID)
                case .kept: forget(callID, now: now, into: &actions)
                case .awaitingVerdict, .inLane: break
                }
            }
        }
        // Backoffs first: a call back in its line then competes, by priority, for the slots
        // that callers past their deadline and attempts past theirs free next.
        for callID in backedOff { line(callID, now: now, into: &actions) }
        for id in late {
            if let handle = leave(id, now: now, into: &actions) {
                actions.unlocked.deliveries.append(Delivery(caller: handle, outcome: .callerDeadlinePassed))
            }
        }
        for (callID, running) in expired where calls.contains(callID.slot) {
            let (healthChange, settled) = end(callID, running, with: .attemptTimedOut, .timedOut, now: now, into: &actions)
            if let healthChange { fired.healthChanges.append(healthChange) }
            fired.expired.append(Expiry(attempt: AttemptID(call: callID, serial: running.serial),
                                        followUp: settled ?? wantVerdict(on: callID, running, outcome: .attemptTimedOut, kind: .timedOut)))
        }
        // After the attempts past their deadline: their calls' verdicts ask every caller.
        for wanted in patienceRanOut(outwaited) { fired.outwaited.append(wanted) }
        hostsToFill.removeAll(keepingCapacity: true)
        startWaitingOnEveryHost(now: now, into: &actions)
        armedFor = nil
        if let next = timers.values.min() { arm(next, into: &actions) }
        return (fired, actions)
    }

    /// Promotes a call that waited longer than its rank's maximum wait one level: it moves up
    /// in its line, ahead of the calls of its new rank that arrived after it.
    @inlinable mutating func promote(_ callID: CallID, now: UInt64, into actions: inout Actions) -> Promotion? {
        guard let from = calls[callID.slot].rank, from < .critical else { return nil }
        calls[callID.slot].promotions += 1
        calls[callID.slot].rankSince = now
        line(callID, now: now, into: &actions)
        let call = calls[callID.slot]
        return Promotion(call: callID, request: call.request, from: from, to: call.rank ?? from, callers: namedCallers(of: callID))
    }

    /// A token refresh for `callID` ended with a new token: its request, `rebuilt` with it, is
    /// sent again.
    @inlinable package mutating func tokenRefreshed(_ callID: CallID, rebuilt: Request, now: UInt64) -> Actions {
        guard isBetweenAttempts(callID) else { return Actions() }
        var actions = Actions()
        calls[callID.slot].request = rebuilt
        hostsToFill.insert(calls[callID.slot].host)
        line(callID, now: now, into: &actions)
        fillHosts(now: now, into: &actions)
        return actions
    }

    /// A token refresh for `callID` failed, or its request could not be built again: its
    /// callers get `outcome`.
    @inlinable package mutating func tokenRefreshFailed(_ callID: CallID, with outcome: Outcome, now: UInt64) -> Actions {
        guard isBetweenAttempts(callID) else { return Actions() }
        var actions = Actions()
        deliver(outcome, failed: true, of: callID, startedAt: nil, now: now, into: &actions)
        fillHosts(now: now, into: &actions)
        return actions
    }

    /// The network became reachable or not. While it is not, no waiting call starts; once it
    /// is, what fits starts.
    @inlinable package mutating func connectivityChanged(isConnected: Bool, now: UInt64) -> Actions {
        isOffline = !isConnected
        var actions = Actions()
        startWaitingOnEveryHost(now: now, into: &actions)
        return actions
    }

    // MARK: - Ending an attempt

    /// Ends an attempt, whose result reads as `kind`: frees its slot, and tells its host's
    /// health what it learnt (returning the change, if any). A call whose callers all left is
    /// settled here (`settled`: it is retired, or its outcome kept); one with callers is
    /// settled by its caller, which decides on the attempt's verdict or asks for it
    /// (``wantVerdict(on:_:outcome:kind:)``).
    @inlinable mutating func end(
        _ callID: CallID,
        _ running: Running,
        with outcome: Outcome,
        _ kind: AttemptVerdict.Kind,
        now: UInt64,
        into actions: inout Actions
    ) -> (healthChange: HealthChange?, settled: FollowUp?) {
        let host = calls[callID.slot].host
        if calls[callID.slot].isAbandoned, cancellationGrace > 0 {
            keepSlotThroughGrace(of: running, onHost: host, now: now, into: &actions)
        } else {
            freeSlot(onHost: host, isLowPriority: running.holdsLowPrioritySlot)
        }
        timers[.call(callID)] = nil
        stopWatchingPatience(of: callID)
        let healthChange = judge(kind, of: callID, onHost: host, now: now, into: &actions)
        if calls[callID.slot].isAbandoned {
            retire(callID, now: now, into: &actions)
            return (healthChange, FollowUp.none)
        }
        if calls[callID.slot].callers.count == 0 {
            return (healthChange, .kept(keep(outcome, of: callID, now: now, into: &actions)))
        }
        return (healthChange, nil)
    }

    /// A failed attempt (one the machine ended at its deadline included) whose call has
    /// callers: the call waits for the verdict on it.
    @inlinable mutating func wantVerdict(on callID: CallID, _ running: Running, outcome: Outcome,
                                         kind: AttemptVerdict.Kind) -> FollowUp {
        calls[callID.slot].attempt = .awaitingVerdict(started: running.started)
        return .verdictWanted(VerdictWanted(id: AttemptID(call: callID, serial: running.serial), request: calls[callID.slot].request,
                                            callers: calls[callID.slot].callers.map { asked($0, of: callID) },
                                            outcome: outcome, kind: kind))
    }

    /// What an attempt's `outcome` means for its call: a token refresh, a retry, or `ended`,
    /// which its callers get (among `actions`' deliveries); with a retry, the callers whose own
    /// policy gives up get it, unless that is all of them.
    @inlinable mutating func decide(
        _ callID: CallID,
        after outcome: Outcome,
        endingWith ended: Outcome,
        verdict: AttemptVerdict,
        startedAt attemptStart: UInt64,
        now: UInt64,
        into actions: inout Actions
    ) -> FollowUp {
        if case .unauthorized = verdict.kind, !calls[callID.slot].replayedWithNewToken {
            calls[callID.slot].replayedWithNewToken = true
            let call = calls[callID.slot]
            return .retry(Retry(call: callID, request: call.request, attempt: call.attemptNumber + 1, delay: 0, outcome: outcome,
                                callers: namedCallers(of: callID)),
                          refresh: TokenRefresh(call: callID, rejected: verdict.rejectedToken, request: call.request,
                                                patience: call.request.attemptTimeout))
        }
        if isOffline, verdict.kind == .unreachable {
            // Offline with a monitor: wait in the line until the network returns; not an attempt.
            let call = calls[callID.slot]
            line(callID, now: now, into: &actions)
            return .retry(Retry(call: callID, request: call.request, attempt: call.attemptNumber, delay: 0, outcome: outcome,
                                callers: namedCallers(of: callID)), refresh: nil)
        }
        let givingUp = verdict.givingUp.filter { id in
            guard case .attached(let call, _)? = callers.lookup(id.slot)?.stage else { return false }
            return call == callID
        }
        if let retry = verdict.retry, givingUp.count < calls[callID.slot].callers.count {
            for id in givingUp {
                release(id, of: callID, with: ended, startedAt: attemptStart, now: now, into: &actions)
            }
            let delay = delay(of: retry)
            calls[callID.slot].attemptNumber += 1
            let call = calls[callID.slot]
            if delay > 0 {
                setTimer(.call(callID), at: now + UInt64(delay * 1_000_000_000), into: &actions)
            } else {
                line(callID, now: now, into: &actions)
            }
            return .retry(Retry(call: callID, request: call.request, attempt: call.attemptNumber, delay: delay, outcome: outcome,
                                callers: namedCallers(of: callID)), refresh: nil)
        }
        if verdict.isSuccess { keepSlot(forDependentsOf: callID) }
        deliver(ended, failed: !verdict.isSuccess, of: callID, startedAt: attemptStart, now: now, into: &actions)
        return .none
    }

    /// Removes a call and every caller still with it, with what each gets; the next call of
    /// its lane goes (see ``retire(_:failed:now:into:)``), or its lane's rest is cancelled if
    /// it `failed` and its lane says so. `attemptStart` is when its last attempt got its slot,
    /// if one did: each caller waited from joining until then (or not at all, joining a call on
    /// the wire), and the attempt was on the wire from then to `now`.
    @inlinable mutating func deliver(
        _ outcome: Outcome,
        failed: Bool,
        of callID: CallID,
        startedAt attemptStart: UInt64?,
        now: UInt64,
        into actions: inout Actions
    ) {
        unregister(callID)
        let call = retire(callID, failed: failed, now: now, into: &actions)
        let servedBy = ServingCall(id: callID, request: call.request)
        for id in call.callers {
            let caller = removeCaller(id)
            guard case .attached(_, let since) = caller.stage else { continue }
            actions.unlocked.deliveries.append(Delivery(caller: caller.handle, outcome: outcome,
                                                        measured: Self.measured(call, since: since, attemptStart: attemptStart, now: now),
                                                        servedBy: servedBy))
        }
    }

    /// What a caller of `call` attached `since` then waited: from then until its last attempt
    /// got its slot at `attemptStart` (if one did; not at all if it joined one on the wire), and
    /// on the wire from then to `now`.
    @inlinable static func measured(_ call: Call, since: UInt64, attemptStart: UInt64?, now: UInt64) -> Measured {
        Measured(wasShared: call.wasShared, queued: seconds(from: since, to: attemptStart ?? now),
                 onTheWire: attemptStart.map { seconds(from: $0, to: now) } ?? 0)
    }

    // MARK: - Keyed calls whose callers left

    /// A keyed call whose callers all left ended on the wire: its outcome is kept under its
    /// key for ``keptOutcomeWindow`` (or forgotten at once without one), and its lane goes on.
    /// Returns it, for the event monitors.
    @inlinable mutating func keep(
        _ outcome: Outcome,
        of callID: CallID,
        now: UInt64,
        into actions: inout Actions
    ) -> KeptOutcome {
        let kept = KeptOutcome(call: callID, request: calls[callID.slot].request, outcome: outcome)
        guard keptOutcomeWindow > 0, calls[callID.slot].key != nil else {
            forget(callID, now: now, into: &actions)
            return kept
        }
        calls[callID.slot].attempt = .kept(outcome, until: now + keptOutcomeWindow)
        setTimer(.call(callID), at: now + keptOutcomeWindow, into: &actions)
        if let lane = calls[callID.slot].request.lane { leaveLane(lane, callID, failed: false, now: now, into: &actions) }
        return kept
    }

    /// Removes a kept outcome, or a keyed call that ended without callers.
    @inlinable mutating func forget(_ callID: CallID, now: UInt64, into actions: inout Actions) {
        unregister(callID)
        retire(callID, now: now, into: &actions)
    }

    /// Whether a call is still here and waits between attempts (for a token refresh): one
    /// whose callers all left is not (it is abandoned, or gone).
    @inlinable func isBetweenAttempts(_ callID: CallID) -> Bool {
        guard calls.contains(callID.slot), case .between = calls[callID.slot].attempt else { return false }
        return true
    }

    // MARK: - The timer

    /// Sets a call's one timer, arming the scheduler's timer if it is the earliest.
    @inlinable mutating func setTimer(_ key: TimerKey, at uptime: UInt64, into actions: inout Actions) {
        timers[key] = uptime
        if let armedFor, armedFor <= uptime { return }
        arm(uptime, into: &actions)
    }

    @inlinable mutating func arm(_ uptime: UInt64, into actions: inout Actions) {
        armedFor = uptime
        actions.locked.armTimer = uptime
    }

}

extension SchedulerMachine.Actions {
    /// Adds another event's actions to these.
    @inlinable mutating func merge(_ other: Self) {
        locked.starts.append(contentsOf: other.locked.starts)
        locked.cancels.append(contentsOf: other.locked.cancels)
        locked.reprioritized.append(contentsOf: other.locked.reprioritized)
        if let time = other.locked.armTimer { locked.armTimer = min(locked.armTimer ?? .max, time) }
        unlocked.deliveries.append(contentsOf: other.unlocked.deliveries)
        unlocked.cancelled.append(contentsOf: other.unlocked.cancelled)
    }
}


// The events of callers: they arrive, wait for dependencies, attach to calls, and leave.
extension SchedulerMachine {
    /// What became of a caller whose request was ready.
    @usableFromInline package enum Attachment: Equatable {
        /// It had left before it could attach.
        case gone
        /// It joined the identical call in flight, whose upload under way had gone as far as
        /// `lastStep`, which it is told as it joins (nil if none is under way).
        case joined(CallID, lastStep: TransferProgress? = nil)
        /// It made a new call.
        case created(CallID)

        /// The call it made or joined, if it did.
        @inlinable package var call: CallID? {
            switch self {
            case .gone: nil
            case .joined(let call, _), .created(let call): call
            }
        }
    }

    /// A caller that waits for `dependencies` to succeed before its request is built. Those
    /// of them (`waitingFor`) that are this machine's and still here inherit its priority
    /// while it waits; another machine's caller inherits nothing, since its ID names a place
    /// in that machine only. With a deadline (`within` so many seconds), it ends then with
    /// ``CallOutcome/callerDeadlinePassed`` if it has not ended. `host` is where its request
    /// will go (its ``SchedulingTerms/origin``), if known, and `opensStream` whether it goes to
    /// that host's line of streams: the slot its last dependency's call frees there may be kept
    /// for it.
    @inlinable package mutating func add(
        _ handle: CallerHandle,
        number: UInt64,
        priority: RequestPriority,
        dependencies: Int,
        waitingFor waited: [DependencyID] = [],
        host: String? = nil,
        opensStream: Bool = false,
        isSuspended: Bool = false,
        within timeout: Seconds? = nil,
        now: UInt64
    ) -> (CallerID, Actions) {
        precondition(dependencies > 0, "a caller without dependencies is submitted with its request")
        let deadline = timeout.map { Self.deadline(after: now, timeout: max($0, 0.000_001)) }
        let host = host.map { Self.lineName(of: $0, opensStream: opensStream) }
        var caller = Caller(handle: handle, number: number, priority: priority, stage: .waiting(dependencies: dependencies),
                            isSuspended: isSuspended, hasDeadline: deadline != nil)
        let lentTo = waited.compactMap { $0.machine == self.id && callers.contains($0.caller.slot) ? $0.caller : nil }
        if !lentTo.isEmpty {
            caller.lending = Lending(dependencies: lentTo, host: host)
        }
        let id = CallerID(slot: callers.insert(caller), number: number)
        for dependency in lentTo { callers[dependency.slot].changeLending { $0.dependents.append(id) } }
        var actions = Actions()
        if let deadline { setTimer(.caller(id), at: deadline, into: &actions) }
        lend(from: id, now: now, into: &actions)
        fillHosts(now: now, into: &actions)
        return (id, actions)
    }

    /// One dependency of a waiting caller succeeded. Once all have, the caller is ready
    /// (`ready` is its handle): its request is to be built, outside the lock (with the token its
    /// dependencies may have stored), then attached with ``attach(_:request:key:now:)``; a
    /// caller that stops waiting takes back the priority it lent.
    @inlinable package mutating func dependencySucceeded(_ id: CallerID, now: UInt64) -> (ready: CallerHandle?, Actions) {
        guard callers.contains(id.slot), case .waiting(let remaining) = callers[id.slot].stage else { return (nil, Actions()) }
        var actions = Actions()
        var ready: CallerHandle?
        if remaining == 1 {
            stopLending(from: id, now: now, into: &actions)
            ready = callers[id.slot].handle
        }
        fillHosts(now: now, into: &actions)
        callers[id.slot].stage = remaining > 1 ? .waiting(dependencies: remaining - 1) : .building
        return (ready, actions)
    }

    /// A new caller whose request is ready: it joins the identical call in flight, or makes a
    /// new one, which sends `request`. `isSuspended` is whether its group is; `within`, the
    /// seconds after which it ends with ``CallOutcome/callerDeadlinePassed`` if it has not ended.
    @inlinable package mutating func submit(
        _ handle: CallerHandle,
        number: UInt64,
        priority: RequestPriority,
        isSuspended: Bool = false,
        request: Request,
        key: Request.Key?,
        within timeout: Seconds? = nil,
        now: UInt64
    ) -> (CallerID, Attachment, Actions) {
        let deadline = timeout.map { Self.deadline(after: now, timeout: max($0, 0.000_001)) }
        let id = CallerID(slot: callers.insert(Caller(handle: handle, number: number, priority: priority, stage: .building,
                                                      isSuspended: isSuspended, hasDeadline: deadline != nil)),
                          number: number)
        var deadlineActions = Actions()
        if let deadline { setTimer(.caller(id), at: deadline, into: &deadlineActions) }
        var (attachment, actions) = attach(id, request: request, key: key, now: now)
        actions.merge(deadlineActions)
        return (id, attachment, actions)
    }

    /// A caller whose dependencies succeeded, with its request now built: as ``submit``.
    @inlinable package mutating func attach(
        _ id: CallerID,
        request: Request,
        key: Request.Key?,
        now: UInt64
    ) -> (Attachment, Actions) {
        guard let caller = callers.lookup(id.slot), case .building = caller.stage else { return (.gone, Actions()) }
        var actions = Actions()
        // The slot kept for it is free again, for its own call (which outranks what waits) or,
        // should it join one, for the rest of the line.
        releaseSlot(keptFor: id)
        if let key, let callID = registered(key, lane: request.lane?.name) {
            if case .kept(let outcome, _) = calls[callID.slot].attempt {
                removeCaller(id)
                let servedBy = ServingCall(id: callID, request: calls[callID.slot].request)
                actions.unlocked.deliveries.append(Delivery(caller: caller.handle, outcome: outcome,
                                                            measured: Measured(wasShared: true), servedBy: servedBy))
                fillHosts(now: now, into: &actions)
                return (.joined(callID, lastStep: nil), actions)
            }
            callers[id.slot].stage = .attached(callID, since: now)
            callers[id.slot].patience = request.attemptTimeout
            callers[id.slot].attemptOffset = Int32(calls[callID.slot].attemptNumber - 1)
            calls[callID.slot].callers.insert(id)
            calls[callID.slot].wasShared = true
            joinAttempt(id, of: callID, now: now, into: &actions)
            if caller.isSuspended { calls[callID.slot].suspendedCallers += 1 }
            var lastStep: TransferProgress?
            if case .running = calls[callID.slot].attempt { lastStep = calls[callID.slot].progress }
            reprioritize(callID, adding: caller.effectivePriority, into: &actions)
            holdOrRelease(callID, now: now, into: &actions)
            hostsToFill.insert(calls[callID.slot].host)
            fillHosts(now: now, into: &actions)
            return (.joined(callID, lastStep: lastStep), actions)
        }
        callsMade += 1
        var call = Call(number: callsMade, key: key, request: request, host: host(of: request), firstCaller: id,
                        priority: caller.effectivePriority)
        if caller.isSuspended { call.suspendedCallers = 1 }
        let callID = CallID(slot: calls.insert(call), number: callsMade)
        if key != nil { register(callID) }
        callers[id.slot].stage = .attached(callID, since: now)
        callers[id.slot].patience = request.attemptTimeout
        if request.lane.map({ enterLane(callID, named: $0.name) }) ?? true {
            hostsToFill.insert(call.host)
            line(callID, now: now, into: &actions)
        }
        fillHosts(now: now, into: &actions)
        return (.created(callID), actions)
    }

    /// Ends a caller that waits for its dependencies or is being built with `outcome`, which
    /// came from elsewhere than a call of its own (a dependency failed, its request could not be
    /// built, or the cache answered), unless it has ended already.
    @inlinable package mutating func end(_ id: CallerID, with outcome: Outcome, now: UInt64) -> Actions {
        guard let caller = callers.lookup(id.slot) else { return Actions() }
        switch caller.stage {
        case .waiting, .building:
            var actions = Actions()
            stopLending(from: id, now: now, into: &actions)
            removeCaller(id)
            fillHosts(now: now, into: &actions)
            actions.unlocked.deliveries.append(Delivery(caller: caller.handle, outcome: outcome))
            return actions
        case .attached:
            return Actions()
        }
    }

    /// Cancels callers: each still here ends with `.cancelled`; a call keeps going while other
    /// callers want it, and one left with none leaves its line, or has its task cancelled.
    @inlinable package mutating func cancel(_ ids: some Sequence<CallerID>, now: UInt64) -> Actions {
        var actions = Actions()
        for id in ids {
            if let handle = leave(id, now: now, into: &actions) { actions.unlocked.cancelled.append(handle) }
        }
        fillHosts(now: now, into: &actions)
        return actions
    }

    /// Takes a caller out, wherever it is, and returns its handle if it was still here, for
    /// the outcome it gets: its call keeps going while other callers want it, and one left
    /// with none leaves its line, or has its task cancelled.
    @inlinable mutating func leave(_ id: CallerID, now: UInt64, into actions: inout Actions) -> CallerHandle? {
        guard let caller = callers.lookup(id.slot) else { return nil }
        if !caller.dependencies.isEmpty { stopLending(from: id, now: now, into: &actions) }
        removeCaller(id)
        guard case .attached(let callID, _) = caller.stage else { return caller.handle }
        if calls[callID.slot].callers.count == 1, calls[callID.slot].runsOnWithoutCallers {
            orphan(callID, leaving: caller)
        } else if calls[callID.slot].callers.count == 1 {
            abandon(callID, now: now, into: &actions)
        } else {
            calls[callID.slot].callers.remove(id)
            if caller.isSuspended { calls[callID.slot].suspendedCallers -= 1 }
            reprioritize(callID, removing: caller.effectivePriority, into: &actions)
            // The last caller that was not suspended may have left.
            holdOrRelease(callID, now: now, into: &actions)
        }
        return caller.handle
    }

    /// Suspends or resumes callers (a group's). A call none of whose callers may start leaves
    /// its line, keeping its place, and takes it back (and may start) when one of them resumes
    /// or a caller that is not suspended joins it. Running calls go on; a suspended call that
    /// must try again after its attempt ended waits out of line until it is resumed.
    @inlinable package mutating func setSuspended(_ isSuspended: Bool, of ids: some Sequence<CallerID>, now: UInt64) -> Actions {
        var actions = Actions()
        for id in ids {
            guard let caller = callers.lookup(id.slot), caller.isSuspended != isSuspended else { continue }
            callers[id.slot].isSuspended = isSuspended
            guard case .attached(let callID, _) = caller.stage else { continue }
            calls[callID.slot].suspendedCallers += isSuspended ? 1 : -1
            holdOrRelease(callID, now: now, into: &actions)
        }
        fillHosts(now: now, into: &actions)
        return actions
    }

    /// Gives callers a new priority. A caller waiting for dependencies lends it to them, and
    /// keeps it for when it attaches; an attached one moves its call, which runs at its
    /// highest caller's priority: in its line, where a call that rose may start at once (in a
    /// slot kept for urgent calls), or on the wire, where its task is told. A caller counts
    /// with the more urgent of its own priority and any that callers waiting for it lend it.
    @inlinable package mutating func setPriority(
        _ priority: RequestPriority, of ids: some Sequence<CallerID>, now: UInt64
    ) -> Actions {
        var changes: [PriorityChange] = []
        for id in ids {
            guard let caller = callers.lookup(id.slot), caller.priority != priority else { continue }
            callers[id.slot].priority = priority
            let effective = callers[id.slot].effectivePriority
            if effective != caller.effectivePriority {
                changes.append(PriorityChange(caller: id, was: caller.effectivePriority, now: effective))
            }
        }
        var actions = Actions()
        carry(changes, now: now, into: &actions)
        fillHosts(now: now, into: &actions)
        return actions
    }

    // MARK: - Helpers

    /// Removes a caller, its deadline's timer if it has one, and the slot kept for it if one
    /// is (its host is then to be filled).
    @discardableResult
    @inlinable mutating func removeCaller(_ id: CallerID) -> Caller {
        releaseSlot(keptFor: id)
        let caller = callers.remove(id.slot)
        if caller.hasDeadline { timers[.caller(id)] = nil }
        if caller.patienceWatch == .timer { timers[.patience(id)] = nil }
        return caller
    }

    /// Keeps a keyed call on the wire after its last caller left: a POST the server may already
    /// be processing is not cut off halfway; it stays registered, so that an identical request
    /// joins it, and its outcome is kept for a while when it ends (see ``AttemptState/kept``).
    @inlinable mutating func orphan(_ callID: CallID, leaving caller: Caller) {
        calls[callID.slot].callers.removeAll()
        calls[callID.slot].priorities.remove(caller.effectivePriority)
        if caller.isSuspended { calls[callID.slot].suspendedCallers -= 1 }
    }

    /// Ends a call whose last caller left: a waiting one leaves its line, a backing-off one
    /// its timer, and one in a lane its place there; a running one keeps its budget slot (and
    /// its place at the head of its lane) until its task ends, and its task is cancelled.
    @inlinable mutating func abandon(_ callID: CallID, now: UInt64, into actions: inout Actions) {
        unregister(callID)
        switch calls[callID.slot].attempt {
        case .running(let running):
            calls[callID.slot].attempt = .abandoned(running)
            actions.locked.cancels.append(AttemptID(call: callID, serial: running.serial))
            return
        case .waiting:
            leaveLine(callID)
        case .between, .awaitingVerdict:
            timers[.call(callID)] = nil
        case .held, .inLane:
            break
        case .abandoned, .kept:
            preconditionFailure("\(callID) has no caller to leave it")
        }
        retire(callID, now: now, into: &actions)
    }

    /// The call in flight registered under `key` in the serial lane `lane` (or in none), if any.
    @inlinable func registered(_ key: Request.Key, lane: String?) -> CallID? {
        var candidate = registry[key.hashValue]
        while let id = candidate {
            if calls[id.slot].key == key, calls[id.slot].request.lane?.name == lane { return id }
            candidate = calls[id.slot].nextWithSameHash
        }
        return nil
    }

    /// Registers a new call under its key, so that identical requests join it.
    @inlinable mutating func register(_ callID: CallID) {
        guard let hash = calls[callID.slot].key?.hashValue else { return }
        calls[callID.slot].nextWithSameHash = registry.updateValue(callID, forKey: hash)
        registeredCount += 1
    }

    /// Takes a call's key out of the registry, so that new identical requests make a new call.
    @inlinable mutating func unregister(_ callID: CallID) {
        guard let hash = calls[callID.slot].key?.hashValue, let head = registry[hash] else { return }
        let following = calls[callID.slot].nextWithSameHash
        defer { calls[callID.slot].nextWithSameHash = nil }
        if head == callID {
            registry[hash] = following
            registeredCount -= 1
            return
        }
        var previous = head
        while let next = calls[previous.slot].nextWithSameHash {
            if next == callID {
                calls[previous.slot].nextWithSameHash = following
                registeredCount -= 1
                return
            }
            previous = next
        }
    }
}

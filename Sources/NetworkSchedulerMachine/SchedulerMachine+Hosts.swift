
// Each host's line and budget: who waits, in which order, and who starts when a slot frees.
extension SchedulerMachine {
    /// The index of the line `request` goes to, made on its first call: its host's, or the
    /// line of its host's streams.
    @inlinable mutating func host(of request: Request) -> Int {
        let opensStream = request.opensStream
        let name = Self.lineName(of: request.origin, opensStream: opensStream)
        if let index = hostIndices[name] { return index }
        let rateLimit = request.hostName.flatMap { rateLimits[$0] }
        let (all, lowPriority) = opensStream ? (streamBudget, streamBudget) : (budget, lowPriorityBudget)
        hosts.append(Host(name: name, budget: all, lowPriorityBudget: lowPriority, rateLimit: rateLimit,
                          window: Double(all)))
        hostIndices[name] = hosts.count - 1
        return hosts.count - 1
    }

    /// A host answered over `spoken`, `duration` after the attempt took its slot. One that
    /// multiplexes gets a budget of streams: the most its server allows at once if its
    /// transport knows it (up to ``HostProtocol/streamCeiling``), else ``multiplexedBudget``;
    /// one that answers over HTTP/1.x a budget of connections, ``distantBudget`` once it is
    /// distant (``Host/isDistant``). The slots low-priority calls leave free keep their share
    /// of the budget, so that an urgent call sent into a host full of them still starts at
    /// once, and so does its adaptive budget (a host at half its budget of connections is at
    /// half its budget of streams). Attempts beyond a narrower budget run on until they end.
    /// The line of a host's streams keeps its own budget.
    @inlinable mutating func host(_ host: Int, answeredOver spoken: HostProtocol, after duration: UInt64) {
        let wasDistant = hosts[host].isDistant
        hosts[host].quickestAnswer = min(hosts[host].quickestAnswer ?? .max, duration)
        guard hosts[host].speaks != spoken || hosts[host].isDistant != wasDistant else { return }
        hosts[host].speaks = spoken
        let all = fullBudget(of: hosts[host])
        let lowPriority = max(1, all * lowPriorityBudget / budget)
        let was = hosts[host].budget
        guard all != was || lowPriority != hosts[host].lowPriorityBudget else { return }
        if all < was { hosts[host].hasNarrowed = true }
        hosts[host].window = min(Double(all), max(1, hosts[host].window * Double(all) / Double(was)))
        hosts[host].budget = all
        hosts[host].lowPriorityBudget = lowPriority
        hostsToFill.insert(host)
    }

    /// The budget `host`'s protocol and distance give it (before its adaptive budget and its
    /// share for low priority).
    @inlinable func fullBudget(of host: Host) -> Int {
        switch host.speaks {
        case .multiplexed(let streams): min(max(1, streams ?? multiplexedBudget), HostProtocol.streamCeiling)
        case .http1, nil: host.isDistant ? distantBudget : budget
        }
    }

    /// The name of the line a request to `host` waits in: the host's own, or for a stream,
    /// the line of the host's streams, with a budget of its own (`http://h:80 streams`).
    @inlinable static func lineName(of host: String, opensStream: Bool) -> String {
        opensStream ? host + " streams" : host
    }

    /// Puts a call in its host's line at its rank: at the back, or, for a call already waiting
    /// (that moves to another rank) or held, at the place its arrival gives. A call whose
    /// callers are all suspended is held out of the line instead. A waiting call whose rank
    /// has a maximum wait gets a timer for its promotion. A call that enters a full line makes
    /// room by shedding the newest call of the lowest rank there, itself included: a call is
    /// never shed for a less urgent one.
    @inlinable mutating func line(_ callID: CallID, now: UInt64, into actions: inout Actions) {
        guard let priority = calls[callID.slot].rank else { return }
        let host = calls[callID.slot].host
        let isEntering: Bool
        if case .waiting = calls[callID.slot].attempt { isEntering = false } else { isEntering = !calls[callID.slot].isHeld }
        if isEntering, let lineLimit {
            while hosts[host].waiting >= lineLimit {
                let victim = hosts[host].line.newest { Self.isLive($0, in: calls) }
                guard let (entry, victimRank) = victim, priority > victimRank else {
                    shed(callID, now: now, into: &actions)
                    return
                }
                leaveLine(entry.call)
                shed(entry.call, now: now, into: &actions)
            }
        }
        nextTicket += 1
        let arrival: Int
        let since: UInt64
        switch calls[callID.slot].attempt {
        case .waiting(_, let firstArrival, let firstSince):
            (arrival, since) = (firstArrival, firstSince)
            hosts[host].waiting -= 1
        case .held(let firstArrival, let firstSince):
            (arrival, since) = (firstArrival, firstSince)
        case .between, .awaitingVerdict, .running, .abandoned, .inLane, .kept:
            (arrival, since) = (nextTicket, now)
            calls[callID.slot].rankSince = now
        }
        timers[.call(callID)] = nil
        guard !calls[callID.slot].isHeld else {
            calls[callID.slot].attempt = .held(arrival: arrival, since: since)
            compactLine(of: host)
            return
        }
        if priority < .critical, let maximumWait = maximumWaits[priority.rawValue] {
            setTimer(.call(callID), at: calls[callID.slot].rankSince + maximumWait, into: &actions)
        }
        hosts[host].waiting += 1
        calls[callID.slot].attempt = .waiting(ticket: nextTicket, arrival: arrival, since: since)
        hosts[host].line.append(.init(call: callID, ticket: nextTicket, arrival: arrival), priority: priority)
        compactLine(of: host)
    }

    /// A waiting call left its host's line (its entry there is now stale), and its promotion
    /// timer with it.
    @inlinable mutating func leaveLine(_ callID: CallID) {
        timers[.call(callID)] = nil
        let host = calls[callID.slot].host
        calls[callID.slot].attempt = .between
        hosts[host].waiting -= 1
        compactLine(of: host)
    }

    @inlinable mutating func compactLine(of host: Int) {
        if hosts[host].waiting == 0 {
            hosts[host].line.removeAll()
        } else if hosts[host].line.isMostlyStale(live: hosts[host].waiting) {
            let calls = calls
            hosts[host].line.compact { Self.isLive($0, in: calls) }
        }
    }

    /// Whether a line entry's call still waits under it: it is here, and has not moved on
    /// (started, or lined up again at another priority) since the entry was made.
    @inlinable static func isLive(_ entry: WaitingLine.Entry, in calls: Slots<Call>) -> Bool {
        guard calls.contains(entry.call.slot), case .waiting(entry.ticket, _, _) = calls[entry.call.slot].attempt else { return false }
        return true
    }

    /// Gives a host's free budget slots to its first waiting calls. Low-priority calls stop
    /// short of the slots kept for more urgent ones. Nothing starts while offline, nor beyond
    /// what the host's health and rate limit admit.
    @inlinable mutating func startWaiting(onHost host: Int, now: UInt64, into actions: inout Actions) {
        let (all, lowPriorityBudget) = budgets(ofHost: host)
        // Slots kept for released dependents are not for the calls waiting.
        let budget = all - hosts[host].reserved
        guard !isOffline, hosts[host].running < budget, hosts[host].waiting > 0 else { return }
        while hosts[host].running < budget, hosts[host].waiting > 0, admitsAnother(onHost: host, now: now, into: &actions) {
            let minimum: RequestPriority = hosts[host].lowPriorityRunning < lowPriorityBudget ? .background : .normal
            guard let entry = hosts[host].line.popFirst(from: minimum) else { break }
            guard Self.isLive(entry, in: calls) else { continue }
            hosts[host].waiting -= 1
            actions.locked.starts.append(begin(entry.call, now: now, into: &actions))
        }
        if hosts[host].waiting == 0 { hosts[host].line.removeAll() }
    }

    /// Gives free slots to the calls waiting on the hosts marked during this event.
    @inlinable mutating func fillHosts(now: UInt64, into actions: inout Actions) {
        guard let first = hostsToFill.first else { return }
        // Most events mark one host: no array for it.
        let others = hostsToFill.count > 1 ? hostsToFill.sorted() : []
        hostsToFill.removeAll(keepingCapacity: true)
        if others.isEmpty {
            startWaiting(onHost: first, now: now, into: &actions)
        } else {
            for host in others { startWaiting(onHost: host, now: now, into: &actions) }
        }
    }

    /// Gives every host's free slots to its waiting calls.
    @inlinable mutating func startWaitingOnEveryHost(now: UInt64, into actions: inout Actions) {
        for host in hosts.indices { startWaiting(onHost: host, now: now, into: &actions) }
    }

    /// Moves a waiting call to running, in one of its host's budget slots, with a deadline.
    @inlinable mutating func begin(_ callID: CallID, now: UInt64, into actions: inout Actions) -> AttemptStart {
        guard case .waiting(_, _, let since) = calls[callID.slot].attempt,
              let rank = calls[callID.slot].rank, let priority = calls[callID.slot].priorities.highest else {
            preconditionFailure("only a waiting call, which has callers, can begin an attempt")
        }
        // A promoted call takes a slot of its rank; its task gets its callers' priority.
        let isLowPriority = rank < .normal
        calls[callID.slot].promotions = 0
        let host = calls[callID.slot].host
        admitted(callID, onHost: host)
        hosts[host].running += 1
        if isLowPriority { hosts[host].lowPriorityRunning += 1 }
        calls[callID.slot].attemptsStarted += 1
        calls[callID.slot].progress = nil
        let serial = calls[callID.slot].attemptsStarted
        calls[callID.slot].attempt = .running(Running(serial: serial, holdsLowPrioritySlot: isLowPriority, started: now))
        setDeadlines(ofAttemptOf: callID, from: now, into: &actions)
        return AttemptStart(id: AttemptID(call: callID, serial: serial), request: calls[callID.slot].request,
                            waitingSince: since, priority: priority, rank: rank, attemptNumber: calls[callID.slot].attemptNumber,
                            callers: namedCallers(of: callID), isProbe: hosts[host].availability == .probing(callID))
    }

    /// A call that freed a slot on its host succeeded: if that releases a dependent of one of
    /// its callers (its last dependency) bound for the same host and more urgent than every
    /// call waiting there, the slot is kept for it, until its request, built outside the
    /// machine once its dependency's completion has run, attaches (or it leaves). Without
    /// this, the freed slot would go to a less urgent call, and the dependent would wait a
    /// whole attempt. One slot per call: the one it freed.
    @inlinable mutating func keepSlot(forDependentsOf callID: CallID) {
        let host = calls[callID.slot].host
        guard hosts[host].running + hosts[host].reserved < budgets(ofHost: host).all else { return }
        var chosen: (id: CallerID, priority: RequestPriority)?
        for dependency in calls[callID.slot].callers {
            guard let dependents = callers[dependency.slot].lending?.dependents else { continue }
            for id in dependents {
                guard let dependent = callers.lookup(id.slot), case .waiting(dependencies: 1) = dependent.stage,
                      let lending = dependent.lending, lending.reservedSlot == nil, lending.host == hosts[host].name,
                      lending.dependencies.contains(dependency) else { continue }
                if let chosen, dependent.effectivePriority <= chosen.priority { continue }
                chosen = (id, dependent.effectivePriority)
            }
        }
        guard let chosen else { return }
        let calls = calls
        if let waiting = hosts[host].line.highestLivePriority(isLive: { Self.isLive($0, in: calls) }),
           waiting >= chosen.priority {
            return
        }
        hosts[host].reserved += 1
        callers[chosen.id.slot].lending?.reservedSlot = host
    }

    /// Frees the slot kept for a caller, if one is: its host is then to be filled.
    @inlinable mutating func releaseSlot(keptFor id: CallerID) {
        guard let host = callers.lookup(id.slot)?.lending?.reservedSlot else { return }
        callers[id.slot].lending?.reservedSlot = nil
        hosts[host].reserved -= 1
        hostsToFill.insert(host)
    }

    /// Gives back a budget slot: of an attempt that ended, or one whose grace ended.
    @inlinable mutating func freeSlot(onHost host: Int, isLowPriority: Bool) {
        hosts[host].running -= 1
        if isLowPriority { hosts[host].lowPriorityRunning -= 1 }
    }

    /// Keeps the slot of an attempt whose callers all left, and whose task just ended, taken
    /// for ``cancellationGrace`` more: the other cancellations of a burst land first.
    @inlinable mutating func keepSlotThroughGrace(of running: Running, onHost host: Int, now: UInt64,
                                                  into actions: inout Actions) {
        let until = now + cancellationGrace
        hosts[host].cooling.append((until, running.holdsLowPrioritySlot))
        if hosts[host].cooling.count == 1 { setTimer(.cooling(host), at: until, into: &actions) }
    }

    /// Frees the slots of `host` whose grace has ended, and sets the timer for the next.
    @inlinable mutating func endGrace(onHost host: Int, now: UInt64, into actions: inout Actions) {
        while let first = hosts[host].cooling.first, first.until <= now {
            hosts[host].cooling.removeFirst()
            freeSlot(onHost: host, isLowPriority: first.isLowPriority)
            hostsToFill.insert(host)
        }
        if let next = hosts[host].cooling.first { setTimer(.cooling(host), at: next.until, into: &actions) }
    }

    /// Counts a caller's priority in its call, stops counting one, or both (a caller that
    /// changed its own). When the call's highest priority changes, a waiting call moves in its
    /// line and a running one's task is given the new priority.
    @inlinable mutating func reprioritize(
        _ callID: CallID,
        adding added: RequestPriority? = nil,
        removing removed: RequestPriority? = nil,
        into actions: inout Actions
    ) {
        let (before, rankBefore) = (calls[callID.slot].priorities.highest, calls[callID.slot].rank)
        if let removed { calls[callID.slot].priorities.remove(removed) }
        if let added { calls[callID.slot].priorities.add(added) }
        switch calls[callID.slot].attempt {
        case .waiting(_, _, let since) where calls[callID.slot].rank != rankBefore:
            line(callID, now: since, into: &actions)
        case .running(let running):
            if let after = calls[callID.slot].priorities.highest, after != before {
                actions.locked.reprioritized.append(Reprioritization(attempt: AttemptID(call: callID, serial: running.serial), priority: after))
            }
        case .waiting, .between, .awaitingVerdict, .abandoned, .held, .inLane, .kept:
            break
        }
    }

    /// Holds a waiting call whose callers are now all suspended, or lines a held one up again
    /// (in its old place) now that one of them is not; its host is then to be filled.
    @inlinable mutating func holdOrRelease(_ callID: CallID, now: UInt64, into actions: inout Actions) {
        let (isHeld, host) = (calls[callID.slot].isHeld, calls[callID.slot].host)
        switch calls[callID.slot].attempt {
        case .waiting where isHeld:
            line(callID, now: now, into: &actions)
        case .held where !isHeld:
            // Entering a full line may shed it: its host is read before.
            line(callID, now: now, into: &actions)
            hostsToFill.insert(host)
        default:
            break
        }
    }

    /// Ends a call that is not in its line (or has just left it) without sending it: its host's
    /// line is full.
    @inlinable mutating func shed(_ callID: CallID, now: UInt64, into actions: inout Actions) {
        let host = hosts[calls[callID.slot].host].name
        calls[callID.slot].attempt = .between
        deliver(.lineFull(host: host), failed: true, of: callID, startedAt: nil,
                now: now, into: &actions)
    }

    /// The uptime `timeout` seconds after `start`; a timeout of zero or less waits a day, and a
    /// longer one is capped there.
    @inlinable static func deadline(after start: UInt64, timeout: Double) -> UInt64 {
        let day = 86_400.0
        let seconds = timeout > 0 ? min(timeout, day) : day
        return start + UInt64(seconds * 1_000_000_000)
    }
}

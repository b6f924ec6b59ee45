
// Each host's health (a circuit breaker: available, paused, probing) and rate limit (a token
// bucket): what lets a host's waiting calls start, besides its budget.
extension SchedulerMachine {
    /// Whether a host takes new attempts.
    @usableFromInline package enum Availability: Equatable, Sendable {
        case available
        /// Nothing new starts before this uptime, for this reason.
        case paused(until: UInt64, reason: HostPauseReason)
        /// One attempt may go (and this is its call, once it went); its answer opens the host,
        /// its failure pauses it again.
        case probing(CallID?)
    }

    /// A host's health changed: for the monitors, and for ``RequestScheduler/health(of:)``.
    @usableFromInline package struct HealthChange: Equatable, Sendable {
        @usableFromInline package let host: String
        @usableFromInline package let availability: Availability

        @inlinable package init(host: String, availability: Availability) {
            self.host = host
            self.availability = availability
        }
    }

    /// The most attempts `host` may run now, and the most of them low-priority calls may:
    /// the scheduler's, or fewer while its adaptive budget is lowered (keeping as many slots
    /// for urgent calls, but at least one for any).
    @inlinable func budgets(ofHost host: Int) -> (all: Int, lowPriority: Int) {
        let (budget, lowPriorityBudget) = (hosts[host].budget, hosts[host].lowPriorityBudget)
        guard healthPolicy.adaptsBudget else { return (budget, lowPriorityBudget) }
        let all = max(1, min(budget, Int(hosts[host].window)))
        return (all, max(1, all - (budget - lowPriorityBudget)))
    }

    /// An answer grows a host's adaptive budget by a slot per budget's worth of answers; a
    /// 429, 503 or timeout halves it.
    @inlinable mutating func adaptBudget(ofHost host: Int, isStrained: Bool) {
        guard healthPolicy.adaptsBudget else { return }
        let window = hosts[host].window
        hosts[host].window = isStrained ? max(1, window / 2) : min(Double(hosts[host].budget), window + 1 / window)
    }

    /// Whether one more waiting call may start on `host` now, as its health and rate limit
    /// allow (its budget aside). A host out of rate-limit tokens gets a timer for the next one.
    @inlinable mutating func admitsAnother(onHost host: Int, now: UInt64, into actions: inout Actions) -> Bool {
        switch hosts[host].availability {
        case .paused, .probing(.some): return false
        case .available, .probing(.none): break
        }
        guard let limit = hosts[host].rateLimit else { return true }
        refill(host, limit, now: now)
        guard hosts[host].tokens < 1 else { return true }
        let wait = (1 - hosts[host].tokens) / limit.requestsPerSecond
        setTimer(.host(host), at: now + UInt64((wait * 1_000_000_000).rounded(.up)), into: &actions)
        return false
    }

    /// An attempt of `callID` began on `host`: it takes a token, and is the probe if the host
    /// is probing.
    @inlinable mutating func admitted(_ callID: CallID, onHost host: Int) {
        if hosts[host].rateLimit != nil { hosts[host].tokens -= 1 }
        if case .probing(.none) = hosts[host].availability { hosts[host].availability = .probing(callID) }
    }

    @inlinable mutating func refill(_ host: Int, _ limit: HostRateLimit, now: UInt64) {
        guard let refilledAt = hosts[host].refilledAt else {
            (hosts[host].tokens, hosts[host].refilledAt) = (Double(limit.burst), now)
            return
        }
        let elapsed = Double(now - min(now, refilledAt)) / 1_000_000_000
        hosts[host].tokens = min(Double(limit.burst), hosts[host].tokens + elapsed * limit.requestsPerSecond)
        hosts[host].refilledAt = now
    }

    /// What an attempt's result says of its host: a server that asks to slow down for a
    /// while (a 429 or 503 with `Retry-After`) pauses it; failing (to connect, or with a status
    /// the policy counts) too many times in a row, or as the probe, pauses it (longer each
    /// time); any other answer from the server counts as healthy and, from the probe, opens it.
    /// Returns the change of its health, if there is one.
    @inlinable mutating func judge(
        _ result: AttemptVerdict.Kind,
        of callID: CallID,
        onHost host: Int,
        now: UInt64,
        into actions: inout Actions
    ) -> HealthChange? {
        let isProbe = hosts[host].availability == .probing(callID)
        switch result {
        case .throttled(let retryAfter):
            return serverAnswered(on: host, isProbe: isProbe, isStrained: true, pausingFor: retryAfter, now: now, into: &actions)
        case .succeeded, .unauthorized, .rejected:
            return serverAnswered(on: host, isProbe: isProbe, isStrained: false, pausingFor: nil, now: now, into: &actions)
        case .unreachable:
            return failed(host, isProbe: isProbe, reason: .unreachable, now: now, into: &actions)
        case .timedOut:
            adaptBudget(ofHost: host, isStrained: true)
            return failed(host, isProbe: isProbe, reason: .unreachable, now: now, into: &actions)
        case .serverFailed:
            adaptBudget(ofHost: host, isStrained: true)
            return failed(host, isProbe: isProbe, reason: .serverErrors, now: now, into: &actions)
        case .noAnswer:
            // Cancelled, refused by the policy, too large: nothing about the host. A probe
            // that ended so lets another through.
            if isProbe { hosts[host].availability = .probing(nil) }
            return nil
        }
    }

    /// The head of a probe's answer arrived, read as `kind` beside the transport. An answer that
    /// would open the host at the probe's end opens it now, and the calls waiting on it start
    /// while the probe's body is still coming (a slow body, a large download): the head says the
    /// host is healthy. The probe's end then counts as any attempt's. Any other head (a failure,
    /// a request to wait), or the head of an attempt that is not its host's probe, changes
    /// nothing: the attempt's end decides. Returns the change of the host's health, if any.
    @inlinable package mutating func probeAnswered(_ attempt: AttemptID, _ kind: AttemptVerdict.Kind,
                                                   now: UInt64) -> (HealthChange?, Actions) {
        let slot = attempt.call.slot
        guard calls.contains(slot), calls[slot].running?.serial == attempt.serial else { return (nil, Actions()) }
        let host = calls[slot].host
        guard hosts[host].availability == .probing(attempt.call), opensHost(kind) else { return (nil, Actions()) }
        hosts[host].consecutiveFailures = 0
        hosts[host].failurePauses = 0
        let change = setAvailability(.available, of: host)
        var actions = Actions()
        hostsToFill.insert(host)
        fillHosts(now: now, into: &actions)
        return (change, actions)
    }

    /// Whether the probe's answer of this kind opens its host, as ``judge(_:of:onHost:now:into:)``
    /// decides at its end: the server answered, and did not ask for a pause.
    @inlinable func opensHost(_ kind: AttemptVerdict.Kind) -> Bool {
        switch kind {
        case .succeeded, .unauthorized, .rejected: true
        case .throttled(let retryAfter): retryAfter == nil || !healthPolicy.pausesOnRetryAfter
        case .serverFailed, .unreachable, .timedOut, .noAnswer: false
        }
    }

    /// An attempt failed for its host's sake: one failure more in a row, which pauses the host
    /// once there are as many as the policy allows, or at once for the probe. Under a policy
    /// that never pauses for failures, a failed probe hands its turn to the next attempt (its
    /// own retry, or another call's): a probe's end always lets the host move on.
    @inlinable mutating func failed(_ host: Int, isProbe: Bool, reason: HostPauseReason, now: UInt64,
                                 into actions: inout Actions) -> HealthChange? {
        hosts[host].consecutiveFailures += 1
        guard let threshold = healthPolicy.failuresBeforePause else {
            return isProbe ? setAvailability(.probing(nil), of: host) : nil
        }
        guard isProbe || (hosts[host].consecutiveFailures >= threshold && hosts[host].availability == .available) else {
            return nil
        }
        let seconds = healthPolicy.pauseAfterFailures * Double(1 << min(hosts[host].failurePauses, 30))
        hosts[host].failurePauses += 1
        return pause(host, for: seconds, reason: reason, now: now, into: &actions)
    }

    /// The server answered: the host is reachable; one that asked to slow down with a
    /// `Retry-After` pauses if the policy says so.
    @inlinable mutating func serverAnswered(on host: Int, isProbe: Bool, isStrained: Bool, pausingFor retryAfter: Seconds?,
                                         now: UInt64, into actions: inout Actions) -> HealthChange? {
        hosts[host].consecutiveFailures = 0
        adaptBudget(ofHost: host, isStrained: isStrained)
        if healthPolicy.pausesOnRetryAfter, let retryAfter {
            return pause(host, for: retryAfter, reason: .askedToWait, now: now, into: &actions)
        }
        hosts[host].failurePauses = 0
        guard isProbe || hosts[host].availability == .probing(nil) else { return nil }
        return setAvailability(.available, of: host)
    }

    /// Pauses a host, unless it is paused longer already.
    @inlinable mutating func pause(_ host: Int, for seconds: Seconds, reason: HostPauseReason, now: UInt64,
                                into actions: inout Actions) -> HealthChange? {
        let until = now + UInt64(min(max(seconds, 0), healthPolicy.maximumPause) * 1_000_000_000)
        if case .paused(let current, _) = hosts[host].availability, current >= until { return nil }
        setTimer(.host(host), at: until, into: &actions)
        return setAvailability(.paused(until: until, reason: reason), of: host)
    }

    /// A host's timer fired: a pause that is over lets one probe through.
    @inlinable mutating func hostTimerFired(_ host: Int, now: UInt64) -> HealthChange? {
        guard case .paused(let until, _) = hosts[host].availability, until <= now else { return nil }
        return setAvailability(.probing(nil), of: host)
    }

    @inlinable mutating func setAvailability(_ availability: Availability, of host: Int) -> HealthChange {
        hosts[host].availability = availability
        return HealthChange(host: hosts[host].name, availability: availability)
    }
}

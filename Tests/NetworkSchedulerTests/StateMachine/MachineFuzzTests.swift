import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine
import NetworkSchedulerTesting

extension HeavyTests {
    /// Random sequences of events, seeded, one seed at a time. After every step every invariant
    /// of the machine holds (each counter equals a recount, the budget, the line, the registry,
    /// the timer), no caller gets a second outcome, and no call starts while a more urgent one,
    /// or an earlier one of its priority, waits on its host; once everything is answered, every
    /// caller ended exactly once and nothing is left.
    @Suite struct MachineFuzzTests {
        /// 10 seeds × 10,000 steps in CI; a tenth of that under the thread sanitizer, which has
        /// nothing to find in a machine that one thread drives. `FUZZ_STEPS=1000000` runs longer,
        /// and `FUZZ_SEED=7` only the seed a failure names, to replay it.
        static let stepsPerSeed = ProcessInfo.processInfo.environment["FUZZ_STEPS"].flatMap(Int.init)
            ?? (isThreadSanitized ? 1_000 : 10_000)
        static let seeds = ProcessInfo.processInfo.environment["FUZZ_SEED"].flatMap(UInt64.init).map { [$0] } ?? Array(1...10)

        @Test(arguments: seeds)
        func everyInvariantHoldsAfterEveryStep(seed: UInt64) async {
            let problems = await onOwnThread { Self.problems(seed: seed) }
            #expect(problems.isEmpty, "seed \(seed): \(problems)")
        }

        /// What went wrong in the run of `seed`: the first step after which an invariant or a
        /// contract broke, or what is left once everything is answered; empty when nothing did.
        static func problems(seed: UInt64) -> [String] {
            var run = FuzzRun(seed: seed)
            for step in 0..<stepsPerSeed {
                run.step()
                let violations = run.driver.violations + run.driver.brokenContracts
                guard violations.isEmpty else { return ["step \(step) (\(run.lastEvent)): \(violations.prefix(3))"] }
            }
            run.drain()
            var problems = (run.driver.violations + run.driver.brokenContracts).map { "after draining: \($0)" }
            if run.driver.machine.census != (0, 0, 0) { problems.append("left after draining: \(run.driver.machine.census)") }
            if run.driver.machine.lineEntryCount != 0 || !run.driver.machine.timers.isEmpty {
                problems.append("line entries or timers left after draining")
            }
            let counts = Dictionary(run.driver.outcomes.map { ($0.caller, 1) }, uniquingKeysWith: +)
            let unended = run.sent.filter { counts[$0] != 1 }
            if !unended.isEmpty { problems.append("callers without exactly one outcome: \(unended.prefix(5))") }
        if seed.isMultiple(of: 2), run.driver.promotions.isEmpty { problems.append("no call was ever promoted") }
        // Every situation must have come up in a run of CI's length; the tenth of it that runs
        // under the thread sanitizer need not meet the rarest.
        guard stepsPerSeed >= 10_000 else { return problems }
        let errors = run.driver.outcomes.compactMap(\.result.failure)
        if !errors.contains(.deadlineExceeded) { problems.append("no caller ever passed its deadline") }
        if !errors.contains(.timedOut) { problems.append("no attempt ever timed out to its callers") }
        if run.driver.kept.isEmpty { problems.append("no keyed call ran on after its callers left") }
        if !run.driver.healthChanges.contains(where: { if case .paused = $0.availability { true } else { false } }) {
            problems.append("no host was ever paused")
        }
        if seed.isMultiple(of: 3), !errors.contains(where: { if case .lineFull = $0 { true } else { false } }) {
            problems.append("no call was ever shed")
        }
            return problems
        }
    }
}

/// One seeded sequence of events on a machine with two hosts, a budget of 3 (2 for low
/// priorities), a few paths (so that callers share calls), retries, token refreshes,
/// deadlines, dependencies, priority changes, suspensions, aging and the network coming and
/// going.
struct FuzzRun {
    var driver: MachineDriver
    var random: SeededGenerator
    /// Every caller sent.
    var sent: [String] = []
    /// Callers waiting for dependencies.
    var dependents: [String] = []
    /// Tasks the transport has not reported yet.
    var unreported: [String] = []
    var reported: [String] = []
    var lastEvent = ""
    private var isConnected = true
    /// Whether answers say what they came over (even seeds).
    private let reportsProtocols: Bool
    private let authenticator = TokenAuthenticator(token: "t") { _ in "u" }
    private static let retrying = RetryPolicy(maxAttempts: 3, baseDelay: 0.5)

    /// Even seeds promote calls that wait too long (aging); odd ones keep strict order. One
    /// seed in three bounds each host's line to four calls; odd seeds rate-limit one host.
    /// Every seed pauses hosts on `Retry-After`; all but one seed in four also after three
    /// failures in a row (that one keeps the default policy, under which a failure never
    /// pauses, so that a failed probe must hand its turn on by itself); one in five adapts each
    /// host's budget. Seeds of three in seven keep a cancelled attempt's slot for a grace.
    /// Even seeds' answers say what they came over, widening hosts to 6 streams and back.
    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
        reportsProtocols = seed.isMultiple(of: 2)
        driver = MachineDriver(budget: 3, lowPriorityBudget: 2,
                               maximumWaits: seed.isMultiple(of: 2) ? [.background: 2, .low: 1.5, .normal: 3] : [:],
                               lineLimit: seed.isMultiple(of: 3) ? 4 : nil,
                               healthPolicy: HostHealth.Policy(failuresBeforePause: seed % 4 == 1 ? nil : 3, pauseAfterFailures: 0.5, maximumPause: 4,
                                                              adaptsBudget: seed.isMultiple(of: 5)),
                               rateLimits: seed.isMultiple(of: 2) ? [:] : ["two.test": HostHealth.RateLimit(requestsPerSecond: 4, burst: 2)],
                               cancellationGrace: seed % 7 < 3 ? 0.25 : 0,
                               multiplexedBudget: 6, distantBudget: 4)
        driver.judgesAtOnce = false
    }

    mutating func step() {
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<27: send()
        case 27..<29: changeAPriority()
        case 29..<30: suspendOrResumeACaller()
        case 30..<35: sendAfterDependencies()
        case 35..<43: resolveADependency()
        case 43..<54: cancelACaller()
        case 54..<77: endAnAttempt()
        case 77..<79: judgeAFailure()
        case 79..<81: reportAnAttemptAgain()
        case 81..<82: reportProgress()
        case 82..<92: advanceTheClock()
        case 92..<95: toggleTheNetwork()
        default: finishARefresh()
        }
        startedTasks()
    }

    /// Answers everything until every caller has ended (bounded).
    mutating func drain() {
        for _ in 0..<1_000 where driver.machine.callers.count > 0 || !unreported.isEmpty {
            lastEvent = "drain"
            if !isConnected { toggleTheNetwork() }
            let suspended = sent.filter { driver.machine.callers.lookup(driver.callers[$0]!.slot)?.isSuspended == true }
            for name in suspended { driver.setSuspended(false, name) }
            while let name = dependents.popLast() {
                // One waits for four at most.
                for _ in 0..<4 { driver.dependencySucceeded(name) }
            }
            while let refresh = driver.refreshes.first { driver.tokenRefreshed(refresh) }
            while let wanted = driver.pendingVerdicts.first { driver.judge(wanted) }
            startedTasks()
            for task in unreported { driver.end(task) }
            reported += unreported
            unreported = []
            driver.advance(seconds: 100)
            startedTasks()
        }
    }

    // MARK: - Events

    private mutating func send() {
        let name = "c\(sent.count)"
        let path = ["/a", "/b", "/c", "/d"].randomElement(using: &random)!
        let host = Bool.random(using: &random) ? "https://one.test" : "https://two.test"
        let priority = RequestPriority.allCases.randomElement(using: &random)!
        let method = Int.random(in: 0..<10, using: &random) < 8 ? "GET" : "POST"
        let timeout = TimeInterval(Int.random(in: 1...30, using: &random))
        let (request, _) = MachineDriver.request(method, host + path, shared: true, timeout: timeout)
        let policy = Bool.random(using: &random) ? Self.retrying : nil
        let authenticator = Int.random(in: 0..<10, using: &random) == 0 ? authenticator : nil
        let lane = Int.random(in: 0..<6, using: &random) == 0
            ? Lane(["l1", "l2"].randomElement(using: &random)!, onFailure: Bool.random(using: &random) ? .runTheRest : .cancelTheRest)
            : nil
        let deadline = Int.random(in: 0..<6, using: &random) == 0 ? TimeInterval(Int.random(in: 1...20, using: &random)) : nil
        lastEvent = "send \(name) \(method) \(host)\(path) \(priority) lane \(lane?.name ?? "-") deadline \(deadline ?? 0)"
        driver.send(name, path, method: method, priority: priority, host: host,
                    shared: Int.random(in: 0..<10, using: &random) > 0,
                    submission: MachineDriver.submission(request, retryPolicy: policy, authenticator: authenticator, lane: lane),
                    deadline: deadline, idempotencyKey: method == "POST" && Int.random(in: 0..<4, using: &random) > 0 ? "key \(path)" : nil,
                    timeout: timeout)
        sent.append(name)
    }

    private mutating func sendAfterDependencies() {
        let name = "c\(sent.count)"
        // Some of them may have ended already; those still here inherit its priority.
        let waitedFor = sent.isEmpty ? [] : (0..<Int.random(in: 1...2, using: &random)).map { _ in sent.randomElement(using: &random)! }
        // Requests of another scheduler, whose IDs may name a caller here (a place held now,
        // or later), and IDs of this machine that name nobody: none inherits anything.
        // As many dependencies in all as before foreign ones were sent, or one more at most,
        // so that dependents do not pile up in a long run.
        let others = waitedFor.count < 2 && Bool.random(using: &random) ? [randomDependencyID()] : []
        let priority = RequestPriority.allCases.randomElement(using: &random)!
        let deadline = Int.random(in: 0..<6, using: &random) == 0 ? TimeInterval(Int.random(in: 1...20, using: &random)) : nil
        lastEvent = "send \(name) at \(priority) after \(waitedFor) and \(others) deadline \(deadline ?? 0)"
        driver.sendAfter(max(1, waitedFor.count + others.count), waitingFor: waitedFor, others: others, name,
                         priority: priority, deadline: deadline)
        sent.append(name)
        dependents.append(name)
    }

    /// Another machine's caller, most often at a place this machine uses; or a place of this
    /// machine in a generation it has not reached.
    private mutating func randomDependencyID() -> DependencyID {
        let place = Int32(Int.random(in: 0..<16, using: &random))
        let generation = UInt32(Int.random(in: 0..<4, using: &random))
        let isOwn = Int.random(in: 0..<4, using: &random) == 0
        return DependencyID(machine: isOwn ? MachineDriver.machineID : MachineID(value: 2),
                            caller: CallerID(slot: SlotID(index: place, generation: isOwn ? generation + 1_000_000 : generation),
                                             number: UInt64(place)))
    }

    private mutating func resolveADependency() {
        guard !dependents.isEmpty else { return }
        let index = Int.random(in: 0..<dependents.count, using: &random)
        let name = dependents[index]
        if Int.random(in: 0..<5, using: &random) == 0 {
            lastEvent = "dependency of \(name) failed"
            driver.dependencyFailed(name, with: .dependencyFailed(cause: .timedOut, dependency: RequestHandle.ID(value: 0)))
            dependents.remove(at: index)
        } else {
            lastEvent = "dependency of \(name) succeeded"
            driver.dependencySucceeded(name, then: ["/a", "/b"].randomElement(using: &random)!)
            if driver.machine.callers.lookup(driver.callers[name]!.slot).map({ if case .waiting = $0.stage { false } else { true } }) ?? true {
                dependents.remove(at: index)
            }
        }
    }

    private mutating func cancelACaller() {
        guard let name = sent.randomElement(using: &random) else { return }
        lastEvent = "cancel \(name)"
        driver.cancel(name)
        dependents.removeAll { $0 == name }
    }

    private mutating func suspendOrResumeACaller() {
        guard let name = sent.randomElement(using: &random) else { return }
        let isSuspended = Int.random(in: 0..<3, using: &random) > 0
        lastEvent = "\(name) \(isSuspended ? "suspended" : "resumed")"
        driver.setSuspended(isSuspended, name)
    }

    private mutating func changeAPriority() {
        guard let name = sent.randomElement(using: &random) else { return }
        let priority = RequestPriority.allCases.randomElement(using: &random)!
        lastEvent = "\(name) changes to \(priority)"
        driver.setPriority(priority, of: name)
    }

    private mutating func endAnAttempt() {
        guard !unreported.isEmpty else { return }
        let task = unreported.remove(at: Int.random(in: 0..<unreported.count, using: &random))
        reported.append(task)
        let roll = Int.random(in: 0..<100, using: &random)
        lastEvent = "end \(task) (\(roll))"
        // A host's probe reports its answer's head first, as the scheduler does.
        if driver.starts[task]?.isProbe == true, roll < 85 {
            let status = roll < 60 ? 200 : roll < 72 ? 503 : roll < 75 ? 429 : 401
            driver.answerHead(task, status: status, headers: status == 429 ? ["Retry-After": "1"] : [:])
        }
        // What the answer came over, if its transport said: on even seeds hosts change
        // protocol mid-run. Odd seeds draw nothing for it, and keep every host at its
        // connections: a host that widens to streams rarely stays full long enough for the
        // rarest situations (a keyed call left running by all its callers) to come up.
        var spoken: HostProtocol?
        if reportsProtocols {
            spoken = switch Int.random(in: 0..<10, using: &random) {
            case 0..<5: nil
            case 5..<7: .http1
            case 7..<9: .multiplexed(maximumStreams: nil)
            default: .multiplexed(maximumStreams: Int.random(in: 1...4, using: &random))
            }
        }
        switch roll {
        case 0..<60: driver.end(task, status: 200, over: spoken)
        case 60..<72: driver.end(task, status: 503, over: spoken)
        case 72..<75: driver.end(task, status: 429, headers: ["Retry-After": "\(Int.random(in: 0...3, using: &random))"], over: spoken)
        case 75..<85: driver.end(task, status: 401, over: spoken)
        case 85..<92: driver.end(task, error: .timedOut)
        default: driver.end(task, error: .noConnection(URLError(.notConnectedToInternet)))
        }
        // The scheduler reports a failure's verdict right after the event that wanted it: here
        // seven times in eight; the eighth comes some events later (``judgeAFailure()``).
        if let wanted = driver.pendingVerdicts.last, wanted.id == driver.starts[task]?.id, Int.random(in: 0..<8, using: &random) > 0 {
            driver.judge(wanted)
        }
    }

    /// The verdict on a failed attempt (one the machine ended at its deadline included)
    /// arrives, some events later: its callers may have left, or been cancelled, meanwhile.
    private mutating func judgeAFailure() {
        guard let wanted = driver.pendingVerdicts.randomElement(using: &random) else { return }
        lastEvent = "judge the failure of \(wanted.id)"
        driver.judge(wanted)
    }

    private mutating func reportAnAttemptAgain() {
        guard let task = reported.randomElement(using: &random) else { return }
        lastEvent = "report \(task) again"
        driver.end(task, status: 200)
    }

    /// A body goes out further (or comes in, for a stream), on an attempt that may have been
    /// abandoned meanwhile: only callers still there are told.
    private mutating func reportProgress() {
        guard let task = unreported.randomElement(using: &random) else { return }
        lastEvent = "progress of \(task)"
        _ = driver.progressed(task)
    }

    private mutating func advanceTheClock() {
        let seconds = TimeInterval(Int.random(in: 0...5_000, using: &random)) / 1_000
        lastEvent = "advance \(seconds) s"
        driver.advance(seconds: seconds)
    }

    private mutating func toggleTheNetwork() {
        isConnected.toggle()
        lastEvent = isConnected ? "online" : "offline"
        driver.setConnected(isConnected)
    }

    private mutating func finishARefresh() {
        guard let refresh = driver.refreshes.randomElement(using: &random) else { return }
        let fails = Int.random(in: 0..<4, using: &random) == 0
        lastEvent = "refresh of \(refresh.call) \(fails ? "failed" : "succeeded")"
        driver.tokenRefreshed(refresh, failing: fails ? .authenticationFailed(cause: .timedOut) : nil)
    }

    /// Tasks started since the last look, which the transport will report some day.
    private mutating func startedTasks() {
        let known = unreported.count + reported.count
        unreported += driver.started.dropFirst(known)
    }
}

import Foundation
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

import Testing

/// Each event of the machine, fed to a bare machine, and the whole value it returns compared
/// with the one expected: its ``SchedulerMachine/Actions`` (what must happen under the
/// scheduler's lock: attempts started, cancelled, re-ranked, the timer; and what runs after it:
/// the callers told), and its own result, if it has one (what follows for a call after an
/// attempt, what the timer found, a caller ready).
@Suite struct MachineActionsTests {
    typealias Machine = MachineDriver.Machine
    typealias Actions = Machine.Actions

    private var machine = Machine(id: MachineID(value: 1), budget: 1, lowPriorityBudget: 1, jitterSeed: 1)
    private let now: UInt64 = 1_000_000_000
    /// The number the last caller was given.
    private var lastNumber: UInt64 = 0
    private static let timeout: TimeInterval = 60

    /// A request to `path` of `https://api.test`, and its dedup key.
    private static func request(_ path: String, method: String = "GET") -> (ScheduledRequest, CallKey?) {
        let (request, key) = MachineDriver.request(method, "https://api.test" + path, shared: true, timeout: timeout)
        return (ScheduledRequest(request, of: MachineDriver.submission(request)), key)
    }

    private mutating func submit(_ caller: String, _ path: String, priority: RequestPriority = .normal,
                                 at uptime: UInt64? = nil) -> (CallerID, Machine.Attachment, Actions, ScheduledRequest) {
        let (request, key) = Self.request(path)
        lastNumber += 1
        let (id, attachment, actions) = machine.submit(caller, number: lastNumber, priority: priority, request: request,
                                                       key: key, now: uptime ?? now)
        return (id, attachment, actions, request)
    }

    private func start(_ call: CallID, _ request: ScheduledRequest, serial: Int = 1,
                       waitingSince: UInt64, priority: RequestPriority = .normal,
                       attemptNumber: Int = 1) -> Machine.AttemptStart {
        Machine.AttemptStart(id: AttemptID(call: call, serial: serial), request: request,
                             waitingSince: waitingSince, priority: priority, rank: priority, attemptNumber: attemptNumber)
    }

    private static func ok(_ status: Int = 200) -> TransportResponse {
        MachineDriver.response(status: status)
    }

    private static func seconds(_ value: Double) -> UInt64 { UInt64(value * 1_000_000_000) }

    @Test mutating func aNewCallerMakesACallThatStartsWithItsDeadlineArmed() throws {
        let (_, attachment, actions, request) = submit("a", "/users/1")

        guard case .created(let call) = attachment else { throw Failure("expected a new call, got \(attachment)") }
        var expected = Actions()
        expected.locked.starts = [start(call, request, waitingSince: now)]
        expected.locked.armTimer = now + Self.seconds(Self.timeout)
        #expect(actions == expected)
    }

    @Test func aMachineThatNamesCallersPutsThemInEveryActionThatStartsOrRetriesTheirCall() throws {
        var machine = Machine(id: MachineID(value: 1), budget: 1, lowPriorityBudget: 1, namesCallers: true, jitterSeed: 1)
        let (blocker, blockerKey) = Self.request("/blocker")
        let (_, blocking, _) = machine.submit("blocker", number: 1, priority: .normal, request: blocker, key: blockerKey, now: now)
        let (request, key) = Self.request("/users/1")
        let (_, attachment, _) = machine.submit("a", number: 2, priority: .normal, request: request, key: key, now: now)
        _ = machine.submit("b", number: 3, priority: .normal, request: request, key: key, now: now)
        guard case .created(let call) = attachment, case .created(let blockerCall) = blocking else {
            throw Failure("expected new calls, got \(attachment) and \(blocking)")
        }

        let freed = machine.attemptEnded(AttemptID(call: blockerCall, serial: 1), with: .success(Self.ok()),
                                         .verdict(AttemptVerdict(kind: .succeeded, retry: nil)), now: now)
        #expect(freed.1.locked.starts.map { $0.callers.sorted() } == [["a", "b"]], "what the start's event names, with the start")

        let attempt = AttemptID(call: call, serial: 1)
        _ = machine.attemptEnded(attempt, with: .success(Self.ok(503)), .failure(.throttled(retryAfter: 3)), now: now)
        let (retried, _) = machine.verdictReached(attempt, AttemptVerdict(kind: .throttled(retryAfter: 3), retry: .after(3)),
                                                  answer: .success(Self.ok(503)), now: now)
        guard case .retry(let retry, refresh: nil) = retried else { throw Failure("expected a retry, got \(retried)") }
        #expect(retry.callers.sorted() == ["a", "b"])
    }

    @Test mutating func anIdenticalCallerJoinsAndNothingHappens() {
        let (_, first, _, _) = submit("a", "/users/1")
        let (_, second, actions, _) = submit("b", "/users/1")

        guard case .created(let call) = first else { Issue.record("expected a new call"); return }
        #expect(second == .joined(call, lastStep: nil))
        #expect(actions == Actions())
    }

    @Test mutating func aCallBeyondTheBudgetWaitsInItsLine() {
        _ = submit("a", "/users/1")
        let (_, attachment, actions, _) = submit("b", "/users/2")

        guard case .created = attachment else { Issue.record("expected a new call"); return }
        #expect(actions == Actions())
    }

    @Test mutating func raisingARunningCallersPriorityReranksItsAttempt() {
        let (id, attachment, _, _) = submit("a", "/users/1")
        guard case .created(let call) = attachment else { Issue.record("expected a new call"); return }

        let actions = machine.setPriority(.high, of: [id], now: now)

        var expected = Actions()
        expected.locked.reprioritized = [Machine.Reprioritization(attempt: AttemptID(call: call, serial: 1), priority: .high)]
        #expect(actions == expected)
    }

    @Test mutating func cancellingTheLastCallerCancelsItsAttemptAndEndsIt() {
        let (id, attachment, _, _) = submit("a", "/users/1")
        guard case .created(let call) = attachment else { Issue.record("expected a new call"); return }

        let actions = machine.cancel([id], now: now)

        var expected = Actions()
        expected.locked.cancels = [AttemptID(call: call, serial: 1)]
        expected.unlocked.cancelled = ["a"]
        #expect(actions == expected)
    }

    @Test mutating func anAttemptThatEndsDeliversAndStartsTheNextCallInItsSlot() {
        let (_, first, _, firstRequest) = submit("a", "/users/1")
        let (_, second, _, request) = submit("b", "/users/2")
        guard case .created(let firstCall) = first, case .created(let secondCall) = second else {
            Issue.record("expected two new calls"); return
        }
        let later = now + Self.seconds(2)

        let (end, actions) = machine.attemptEnded(AttemptID(call: firstCall, serial: 1), with: .success(Self.ok()),
                                                  .verdict(AttemptVerdict(kind: .succeeded, retry: nil)), now: later)

        // The timer stays armed for the first attempt's deadline, earlier than the second's.
        var expected = Actions()
        expected.locked.starts = [start(secondCall, request, waitingSince: now)]
        expected.unlocked.deliveries = [Machine.Delivery(caller: "a", outcome: .success(Self.ok()),
                                                         measured: Machine.Measured(queued: 0, onTheWire: 2),
                                                         servedBy: Machine.ServingCall(id: firstCall, request: firstRequest))]
        #expect(actions == expected)
        #expect(end == Machine.AttemptEnd(), "its callers' outcomes are the deliveries; its host's health stays")
    }

    @Test mutating func aRetryableFailureWaitsForItsVerdictThenOutItsBackoffThenStartsAgain() {
        let (caller, attachment, _, request) = submit("a", "/users/1")
        guard case .created(let call) = attachment else { Issue.record("expected a new call"); return }
        let answer = Self.ok(503)
        let attempt = AttemptID(call: call, serial: 1)

        let (ended, endActions) = machine.attemptEnded(attempt, with: .success(answer), .failure(.throttled(retryAfter: 3)), now: now)

        let wanted = Machine.VerdictWanted(id: attempt, request: request, callers: [Machine.AskedCaller(id: caller, handle: "a", attemptNumber: 1)],
                                           outcome: .success(answer),
                                           kind: .throttled(retryAfter: 3))
        #expect(ended == Machine.AttemptEnd(followUp: .verdictWanted(wanted)))
        #expect(endActions == Actions())

        let (judged, judgedActions) = machine.verdictReached(attempt, AttemptVerdict(kind: .throttled(retryAfter: 3), retry: .after(3)),
                                                             answer: .success(answer), now: now)

        #expect(judged == .retry(Machine.Retry(call: call, request: request, attempt: 2, delay: 3, outcome: .success(answer)),
                                 refresh: nil))
        var expected = Actions()
        expected.locked.armTimer = now + Self.seconds(3)
        #expect(judgedActions == expected)

        let (resumed, resumedActions) = machine.timerFired(now: now + Self.seconds(3))

        var restarted = Actions()
        restarted.locked.starts = [start(call, request, serial: 2, waitingSince: now + Self.seconds(3), attemptNumber: 2)]
        restarted.locked.armTimer = now + Self.seconds(3 + Self.timeout)
        #expect(resumedActions == restarted)
        #expect(resumed == Machine.TimerFired(), "a backoff that is over is no news for the monitors")
    }

    @Test mutating func anAttemptPastItsDeadlineIsCancelledAndItsCallWaitsForTheVerdict() {
        let (caller, attachment, _, request) = submit("a", "/users/1")
        guard case .created(let call) = attachment else { Issue.record("expected a new call"); return }
        let deadline = now + Self.seconds(Self.timeout)
        let attempt = AttemptID(call: call, serial: 1)

        let (fired, firedActions) = machine.timerFired(now: deadline)

        var expected = Machine.TimerFired()
        expected.expired = [Machine.Expiry(attempt: attempt, followUp: .verdictWanted(
            Machine.VerdictWanted(id: attempt, request: request, callers: [Machine.AskedCaller(id: caller, handle: "a", attemptNumber: 1)],
                                  outcome: .failure(.timedOut), kind: .timedOut)))]
        #expect(fired == expected)
        #expect(firedActions == Actions())

        let (judged, judgedActions) = machine.verdictReached(attempt, AttemptVerdict(kind: .timedOut, retry: nil),
                                                             answer: .failure(.timedOut), now: deadline)

        var delivered = Actions()
        delivered.unlocked.deliveries = [Machine.Delivery(caller: "a", outcome: .failure(.timedOut),
                                                          measured: Machine.Measured(queued: 0, onTheWire: Self.timeout),
                                                          servedBy: Machine.ServingCall(id: call, request: request))]
        #expect(judgedActions == delivered)
        #expect(judged == .none)
    }

    @Test mutating func aRejectedTokenAsksForARefreshAndTheRebuiltRequestStarts() {
        let (_, attachment, _, request) = submit("a", "/users/1")
        guard case .created(let call) = attachment else { Issue.record("expected a new call"); return }

        let attempt = AttemptID(call: call, serial: 1)
        _ = machine.attemptEnded(attempt, with: .success(Self.ok(401)), .failure(.unauthorized(rejectedToken: "old")), now: now)
        let (ended, endActions) = machine.verdictReached(attempt, AttemptVerdict(kind: .unauthorized(rejectedToken: "old"), retry: nil),
                                                         answer: .success(Self.ok(401)), now: now)

        // Told to the monitors as a retry with no delay; the replay keeps its attempt number.
        #expect(ended == .retry(Machine.Retry(call: call, request: request, attempt: 2, delay: 0, outcome: .success(Self.ok(401))),
                                refresh: Machine.TokenRefresh(call: call, rejected: "old", request: request,
                                                              patience: request.attemptTimeout)))
        #expect(endActions == Actions())

        let (rebuilt, _) = Self.request("/users/1?token=new")
        let refreshed = machine.tokenRefreshed(call, rebuilt: rebuilt, now: now)

        var restarted = Actions()
        restarted.locked.starts = [start(call, rebuilt, serial: 2, waitingSince: now)]
        #expect(refreshed == restarted)
    }

    @Test mutating func aDependentLendsItsPriorityWhileItWaitsAndIsReadyOnceItsDependencySucceeds() {
        let (dependency, attachment, _, _) = submit("login", "/login")
        guard case .created(let call) = attachment else { Issue.record("expected a new call"); return }
        let (id, added) = machine.add("me", number: lastNumber + 1, priority: .high, dependencies: 1,
                                      waitingFor: [DependencyID(machine: MachineID(value: 1), caller: dependency)], now: now)
        var lent = Actions()
        lent.locked.reprioritized = [Machine.Reprioritization(attempt: AttemptID(call: call, serial: 1), priority: .high)]
        #expect(added == lent)

        let (ready, actions) = machine.dependencySucceeded(id, now: now)
        var takenBack = Actions()
        takenBack.locked.reprioritized = [Machine.Reprioritization(attempt: AttemptID(call: call, serial: 1), priority: .normal)]
        #expect(actions == takenBack)
        #expect(ready == "me")

        var failed = Actions()
        failed.unlocked.deliveries = [Machine.Delivery(caller: "me", outcome: .failure(.invalidRequest(reason: "no URL")))]
        #expect(machine.end(id, with: .failure(.invalidRequest(reason: "no URL")), now: now) == failed)
        #expect(machine.end(id, with: .failure(.cancelled), now: now) == Actions())
    }

    @Test mutating func goingOfflineHoldsNewCallsAndComingBackStartsThem() {
        #expect(machine.connectivityChanged(isConnected: false, now: now) == Actions())
        let (_, attachment, queued, request) = submit("a", "/users/1")
        guard case .created(let call) = attachment else { Issue.record("expected a new call"); return }
        #expect(queued == Actions())

        let online = machine.connectivityChanged(isConnected: true, now: now + Self.seconds(1))

        var expected = Actions()
        expected.locked.starts = [start(call, request, waitingSince: now)]
        expected.locked.armTimer = now + Self.seconds(1 + Self.timeout)
        #expect(online == expected)
    }

    @Test mutating func suspendingTheOnlyCallerOfAWaitingCallTakesItOutOfItsLine() {
        _ = submit("a", "/users/1")
        let (id, _, _, _) = submit("b", "/users/2")

        #expect(machine.setSuspended(true, of: [id], now: now) == Actions())
        #expect(machine.lineCounts.waiting == 0)
    }

    private struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// Only what an event asked for, so that a failed comparison reads in a line or two.
extension SchedulerMachine.Actions: CustomTestStringConvertible where Request == ScheduledRequest, Outcome == Result<TransportResponse, ServiceError> {
    public var testDescription: String {
        var parts: [String] = []
        func add<Element>(_ name: String, _ batch: some Sequence<Element>) {
            let elements = batch.map { String(describing: $0) }
            if !elements.isEmpty { parts.append("\(name): \(elements.joined(separator: "; "))") }
        }
        add("starts", locked.starts.map { "\($0.id) \($0.request.prepared.urlRequest.url?.path ?? "") at \($0.priority), try \($0.attemptNumber)" })
        add("cancels", locked.cancels)
        add("reprioritized", locked.reprioritized.map { "\($0.attempt) to \($0.priority)" })
        if let armTimer = locked.armTimer { parts.append("armTimer: \(armTimer)") }
        add("cancelled", unlocked.cancelled)
        add("deliveries", unlocked.deliveries.map { "\($0.caller): \($0.outcome.map(\.statusCode)), \($0.measured)" })
        return parts.isEmpty ? "no action" : parts.joined(separator: " | ")
    }
}

import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler

/// What a soak runs.
public struct SoakConfiguration: Sendable {
    /// Callers to make while the faults are on (callers sent again from completions come on top).
    public var callers: Int
    /// Fixes the mix of what happens; the threads fix its order.
    public var seed: UInt64
    /// Callers in flight at most, before the soak waits for some to end.
    public var window: Int
    /// The most seconds every caller may take to end once the faults stop.
    public var quietTimeout: TimeInterval

    public init(callers: Int, seed: UInt64, window: Int = 1_000, quietTimeout: TimeInterval = 60) {
        self.callers = callers
        self.seed = seed
        self.window = window
        self.quietTimeout = quietTimeout
    }
}

/// The chaos soak of the whole library: randomized callers through every entry point of three
/// schedulers (each with its own health policy; one with a cache, one with a flapping
/// network, one with an authenticator whose refreshes fail or hang), with dependencies across
/// schedulers and on the app's operations, groups cancelled and released on other threads,
/// priorities changed live, uploads, downloads, streams and sends from completions, over a
/// chaotic transport. Then the faults stop, and every caller must end, exactly once, leaving
/// every scheduler idle.
public enum Soak {
    public static func run(_ configuration: SoakConfiguration, progress: (@Sendable (String) -> Void)? = nil) async -> SoakReport {
        let world = SoakWorld(seed: configuration.seed)
        defer { world.tearDown() }
        let started = Date()
        var memory = [ResidentMemory.megabytes()]
        var launched = 0
        let step = max(1, configuration.callers / 10)
        var nextSample = step
        var stalls = 0
        while launched < configuration.callers {
            let batch = min(max(1, configuration.window / 4), configuration.callers - launched)
            // From many threads at once, as an app's screens and tasks send.
            DispatchQueue.concurrentPerform(iterations: batch) { _ in world.launchCaller() }
            launched += batch
            world.stirChaos()
            if await !world.ledger.wait(untilEnded: world.ledger.begun - configuration.window, timeout: 10) {
                // Callers that do not end: a broken promise. Stop making more, and report it.
                stalls += 1
                if stalls == 3 { break }
            }
            if launched >= nextSample {
                memory.append(ResidentMemory.megabytes())
                nextSample += step
                progress?("\(launched) callers, \(world.ledger.ended) ended, \(memory.last!) MB resident")
            }
        }
        let chaosSeconds = Date().timeIntervalSince(started)

        // The faults stop: the network is up, the server answers well, refreshes succeed.
        world.calm()
        let allEnded = await world.ledger.wait(timeout: configuration.quietTimeout)
        let outboxDisagreement = await world.identity.outboxDisagreement(with: world.transport.server, timeout: 30)
        let census = await world.idleCensus(timeout: 30)
        // A caller that never ended stays open: the summary counts it.
        _ = await world.stories.settled(timeout: 10)
        let stories = world.stories.summary
        memory.append(ResidentMemory.megabytes())
        let schedule = world.recorder.timeline()
        return SoakReport(
            seed: configuration.seed,
            callers: world.ledger.begun,
            ended: world.ledger.ended,
            twice: world.ledger.twice,
            outcomes: world.ledger.outcomes,
            allEndedOnceQuiet: allEnded,
            windowStalls: stalls,
            attempts: world.transport.counts.withLock { $0 },
            census: census,
            crossedUsers: world.identity.crossedUsers.withLock { $0 },
            switchedWhileSent: world.identity.ambiguous.withLock { $0 },
            whoamiAnswers: world.identity.answered.withLock { $0 },
            outboxWrites: world.identity.enqueued.withLock { $0 },
            outboxDisagreement: outboxDisagreement,
            outboxState: world.transport.server.snapshot,
            residentMegabytes: memory,
            schedule: (schedule.callCount, schedule.sharedCallerCount, world.recorder.droppedEvents),
            heard: (stories.heard, stories.ended, stories.unbalanced),
            forbiddenAnswers: world.terms.forbidden.withLock { $0 },
            answeredWithOptions: world.terms.answered.withLock { $0 },
            files: (world.terms.savedFiles.withLock { $0 }, world.terms.wrongFiles.withLock { $0 }),
            transportsShutDown: world.terms.closings.withLock { $0 },
            chaosSeconds: chaosSeconds,
            totalSeconds: Date().timeIntervalSince(started)
        )
    }
}

/// What a soak found.
public struct SoakReport: Sendable, CustomStringConvertible {
    public let seed: UInt64
    /// Callers made, those sent again from completions included.
    public let callers: Int
    /// Callers that ended at least once.
    public let ended: Int
    /// Second (or later) outcomes of a caller: must be 0.
    public let twice: Int
    public let outcomes: [String: Int]
    /// Whether every caller ended once the faults stopped, within the bound.
    public let allEndedOnceQuiet: Bool
    /// Times the window of callers in flight did not drain within 10 s while faults were on
    /// (the third ends the chaos early).
    public let windowStalls: Int
    public let attempts: (started: Int, hung: Int)
    /// What each scheduler still held at the end: all zero when idle.
    public let census: [RequestScheduler.Census]
    /// Callers of the adapter that switches users who got another user's answer: must be 0.
    public let crossedUsers: Int
    /// Callers whose user switched as they were sent (cancelled: who they asked as is unknown).
    public let switchedWhileSent: Int
    /// Callers of the adapter that switches users who got an answer.
    public let whoamiAnswers: Int
    /// Writes enqueued in the outbox (merged ones included).
    public let outboxWrites: Int
    /// How the outbox's lanes and the server's final state disagree, if they do: must be nil.
    public let outboxDisagreement: String?
    /// The server's final state of the outbox's lanes, and the counter taps it counted.
    public let outboxState: (presence: [String: String], taps: Int)
    /// Resident memory at the start, after each tenth of the callers, and at the end.
    public let residentMegabytes: [Int]
    /// The first scheduler's timeline: its calls, the callers that joined one, and the events
    /// its recorder had no room for.
    public let schedule: (calls: Int, joined: Int, dropped: Int)
    /// What the event monitors heard: callers, those heard to end once, and those whose story
    /// broke the monitors' contract (never ended, ended twice, begun twice or after their end).
    /// Each caller the soak made is at least one caller to the monitors (an outbox's writes and
    /// a stream's reconnections are more).
    public let heard: (callers: Int, endedOnce: Int, unbalanced: Int)
    /// Callers given an answer their own options forbid (another origin's answer they would
    /// not have followed, a body past their limit): must be 0.
    public let forbiddenAnswers: Int
    /// Callers of identical requests with options of their own that got an answer.
    public let answeredWithOptions: Int
    /// Downloads saved as one whole version, and those saved as anything else (must be 0).
    public let files: (saved: Int, wrong: Int)
    /// Transports shut down mid-run, and their schedulers found holding something afterwards
    /// (must be 0; those not checked then count in `census`).
    public let transportsShutDown: (closed: Int, notIdle: Int)
    public let chaosSeconds: TimeInterval
    public let totalSeconds: TimeInterval

    /// Callers that never ended.
    public var lost: Int { callers - ended }

    /// Whether the monitors heard each caller end once, and no story break their contract.
    public var heardEveryCaller: Bool {
        heard.unbalanced == 0 && heard.endedOnce >= callers
    }

    /// Whether every scheduler was left idle.
    public var isIdle: Bool {
        census.allSatisfy { $0.callers == 0 && $0.networkCalls == 0 && $0.registeredKeys == 0 && $0.queuedOperations == 0 }
    }

    /// Whether it held every promise it checks.
    public var isClean: Bool {
        lost == 0 && twice == 0 && allEndedOnceQuiet && isIdle && crossedUsers == 0 && outboxDisagreement == nil
            && heardEveryCaller && forbiddenAnswers == 0 && files.wrong == 0 && transportsShutDown.notIdle == 0
    }

    public var description: String {
        let kinds = outcomes.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let idle = census.map { "\($0.callers)/\($0.networkCalls)/\($0.registeredKeys)/\($0.queuedOperations)" }.joined(separator: " ")
        return """
        seed \(seed): \(callers) callers, \(ended) ended, lost \(lost), twice \(twice), \
        \(attempts.started) attempts (\(attempts.hung) hung), \(String(format: "%.1f", chaosSeconds)) s of chaos, \
        \(String(format: "%.1f", totalSeconds)) s in all, window stalls \(windowStalls)
          outcomes: \(kinds)
          census (callers/calls/keys/operations) per scheduler: \(idle)\(isIdle ? " (idle)" : " (NOT IDLE)")
          resident MB: \(residentMegabytes.map(String.init).joined(separator: " → "))
          monitors: \(heard.callers) callers heard, \(heard.endedOnce) ended once, \(heard.unbalanced) unbalanced\(heardEveryCaller ? "" : " (BROKEN)")
          first scheduler's timeline: \(schedule.calls) calls, \(schedule.joined) callers joined one, \(schedule.dropped) events dropped
          users switched mid-run: \(crossedUsers) answers crossed users of \(whoamiAnswers) answered, \(switchedWhileSent) callers switched as they were sent
          outbox: \(outboxDisagreement ?? "each lane ends in its last write") (\(outboxWrites) enqueued; server: \(outboxState.presence), \(outboxState.taps) taps)
          options of their own: \(forbiddenAnswers) answers forbidden by them, of \(answeredWithOptions) answered
          downloads of a changing file: \(files.saved) saved whole, \(files.wrong) wrong
          transports shut down mid-run: \(transportsShutDown.closed), schedulers not idle after: \(transportsShutDown.notIdle)
        """
    }
}

/// The process's resident memory, from `/proc/self/statm` (0 where there is none).
enum ResidentMemory {
    static func megabytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / (1 << 20)
    }
}

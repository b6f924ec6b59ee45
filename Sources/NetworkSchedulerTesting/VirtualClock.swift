import Dispatch
import Foundation
import NetworkScheduler

/// A clock that moves only when the test says: give it to a scheduler
/// (`RequestScheduler.Configuration.clock`) and to a ``StubTransport``, and
/// retries, backoffs, `Retry-After` pauses, deadlines, rate limits and latency pass at once.
///
/// ```swift
/// let clock = VirtualClock()
/// let transport = StubTransport(clock: clock, script: ["GET /v1/feed": [.tooManyRequests(retryAfter: 30), .json("[]")]])
/// let scheduler = RequestScheduler { $0.transport = transport; $0.clock = clock }
/// … send the request, wait for the 429 to arrive …
/// clock.advance(by: 30) // the host's pause ends and the retry goes out
/// ```
///
/// Timers fire on the thread that advances the clock, in the order of their deadlines; a
/// timer armed for a time already passed fires at once on another thread (it is armed under
/// its scheduler's lock, which its handler takes).
public final class VirtualClock: SchedulerClock {
    private struct State {
        var uptime: UInt64
        var date: Date
        /// Each armed timer's deadline, by the timer's identity.
        var armed: [ObjectIdentifier: (deadline: UInt64, timer: VirtualTimer)] = [:]
    }

    private let state: Locked<State>

    /// A clock at `date`; its uptime starts at one second.
    ///
    /// - Parameter date: the clock's date at its start.
    public init(startingAt date: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Locked(State(uptime: 1_000_000_000, date: date))
    }

    /// The clock's uptime.
    public var uptimeNanoseconds: UInt64 { state.withLock { $0.uptime } }
    /// The clock's date.
    public var now: Date { state.withLock { $0.date } }
    /// How many timers are armed: zero once nothing waits for time to pass.
    public var armedTimers: Int { state.withLock { $0.armed.count } }

    /// Moves the clock `seconds` ahead, firing every timer due meanwhile, earliest first, each
    /// at its own deadline (a timer armed by a handler fires too, if it is due within the move).
    ///
    /// A stub's answer arrives on another thread, in no virtual time but some real time: an
    /// attempt that a timer started during the move may meet its own deadline within the same
    /// move, before its answer is in. Move in steps shorter than your attempts' timeout.
    ///
    /// - Parameter seconds: how far to move the clock.
    public func advance(by seconds: TimeInterval) {
        let target = state.withLock { $0.uptime } &+ UInt64(max(0, seconds) * 1_000_000_000)
        while let timer = nextTimer(dueBy: target) {
            timer.fire()
        }
        state.withLock { state in
            state.date.addTimeInterval(Double(target &- state.uptime) / 1_000_000_000)
            state.uptime = target
        }
    }

    /// Takes the earliest timer due by `target` off the armed list and moves the clock to its
    /// deadline.
    private func nextTimer(dueBy target: UInt64) -> VirtualTimer? {
        state.withLock { state in
            guard let (key, next) = state.armed.min(by: { $0.value.deadline < $1.value.deadline }),
                  next.deadline <= target else { return nil }
            state.armed[key] = nil
            if next.deadline > state.uptime {
                state.date.addTimeInterval(Double(next.deadline - state.uptime) / 1_000_000_000)
                state.uptime = next.deadline
            }
            return next.timer
        }
    }

    /// A timer on this clock.
    public func makeTimer() -> any SchedulerTimer {
        VirtualTimer(clock: self)
    }

    fileprivate func arm(_ timer: VirtualTimer, at deadline: UInt64) {
        let isDue = state.withLock { state in
            guard deadline > state.uptime else {
                state.armed[ObjectIdentifier(timer)] = nil
                return true
            }
            state.armed[ObjectIdentifier(timer)] = (deadline, timer)
            return false
        }
        if isDue { DispatchQueue.global().async { timer.fire() } }
    }

    fileprivate func disarm(_ timer: VirtualTimer) {
        state.withLock { $0.armed[ObjectIdentifier(timer)] = nil }
    }
}

/// A timer of a ``VirtualClock``.
private final class VirtualTimer: SchedulerTimer {
    private struct State {
        var handler: (@Sendable () -> Void)?
        var isStopped = false
    }

    private weak let clock: VirtualClock?
    private let state = Locked(State())

    init(clock: VirtualClock) {
        self.clock = clock
    }

    func start(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.handler = handler }
    }

    func arm(at uptimeNanoseconds: UInt64) {
        guard !state.withLock({ $0.isStopped }) else { return }
        clock?.arm(self, at: uptimeNanoseconds)
    }

    func stop() {
        state.withLock { state in
            state.isStopped = true
            state.handler = nil
        }
        clock?.disarm(self)
    }

    func fire() {
        let handler = state.withLock { $0.isStopped ? nil : $0.handler }
        handler?()
    }
}

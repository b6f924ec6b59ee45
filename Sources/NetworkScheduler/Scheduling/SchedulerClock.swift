import Dispatch
import Foundation

/// Where a scheduler reads the time and sets its one timer: the system's clock unless you
/// give another. A test gives a virtual clock (`VirtualClock` in `NetworkSchedulerTesting`)
/// so that backoffs, deadlines, pauses and rate limits pass without waiting.
///
/// ```swift
/// let clock = VirtualClock()
/// let scheduler = RequestScheduler { $0.clock = clock }
/// clock.advance(by: 30) // every timer due in the next 30 seconds fires, in order
/// ```
public protocol SchedulerClock: Sendable {
    /// Nanoseconds since an arbitrary origin; never goes back.
    var uptimeNanoseconds: UInt64 { get }
    /// The date now, to read `Retry-After` dates and to report when a paused host reopens.
    var now: Date { get }
    /// A new timer, not started.
    func makeTimer() -> any SchedulerTimer
}

/// One timer of a ``SchedulerClock``: each arm replaces the one before.
public protocol SchedulerTimer: Sendable {
    /// Sets what the timer calls when it fires; called once, before the first arm.
    ///
    /// - Parameter handler: called each time the timer fires.
    func start(_ handler: @escaping @Sendable () -> Void)
    /// Fires the timer's handler once the clock reaches `uptimeNanoseconds`, instead of when it
    /// was armed for before; at once if that time has passed.
    ///
    /// - Parameter uptimeNanoseconds: the clock's uptime to fire at.
    func arm(at uptimeNanoseconds: UInt64)
    /// Stops the timer for good: its handler is not called again.
    func stop()
}

/// The system's clock, every scheduler's unless its configuration gives another:
/// `DispatchTime` for uptime, a dispatch timer source for the timer.
package struct SystemClock: SchedulerClock {
    package var uptimeNanoseconds: UInt64 { DispatchTime.now().uptimeNanoseconds }

    package var now: Date { Date() }

    package func makeTimer() -> any SchedulerTimer {
        DispatchTimer()
    }
}

extension SchedulerClock where Self == SystemClock {
    /// The system's clock.
    package static var system: SystemClock { SystemClock() }
}

/// The system clock's timer.
private final class DispatchTimer: SchedulerTimer, @unchecked Sendable {
    // Safety: a dispatch source may be scheduled and cancelled from any thread; the scheduler
    // arms it only under its lock, so that arms happen in the machine's order.
    private let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "NetworkScheduler.timer"))

    func start(_ handler: @escaping @Sendable () -> Void) {
        source.setEventHandler(handler: handler)
        source.activate()
    }

    func arm(at uptimeNanoseconds: UInt64) {
        source.schedule(deadline: DispatchTime(uptimeNanoseconds: uptimeNanoseconds), leeway: .milliseconds(5))
    }

    func stop() {
        source.cancel()
    }
}

import Foundation
import NetworkScheduler

/// Records a scheduler's events with the time each happened, to draw them as a timeline:
/// which call waited behind which and for how long, what was shared, retried or paused.
///
/// ```swift
/// let recorder = ScheduleRecorder()
/// let scheduler = RequestScheduler { $0.eventMonitors.append(recorder) }
/// // … the requests of a screen, a test or a whole run …
/// let timeline = recorder.timeline()
/// try timeline.traceEvents().write(to: URL(fileURLWithPath: "schedule.json")) // Perfetto
/// try timeline.svg().write(to: URL(fileURLWithPath: "schedule.svg"), atomically: true, encoding: .utf8)
/// ```
///
/// It keeps at most `limit` events and counts those it had no room for
/// (``droppedEvents``), so that a recorder left on in a long run holds a bounded memory.
public final class ScheduleRecorder: RequestEvent.Monitor {
    private struct State {
        var events: [ScheduleTimeline.Stamped] = []
        var dropped = 0
    }

    private let clock: any SchedulerClock
    private let limit: Int
    private let state = Locked(State())

    /// A recorder that reads the time from `clock`: give it the scheduler's when that is a
    /// virtual one, so that the picture shows the scheduler's time.
    ///
    /// - Parameters:
    ///   - clock: where the time of each event is read; nil for the system's clock.
    ///   - limit: the most events it keeps.
    public init(clock: (any SchedulerClock)? = nil, limit: Int = 100_000) {
        self.clock = clock ?? .system
        self.limit = max(limit, 0)
    }

    /// Notes `event` with the time now.
    ///
    /// - Parameter event: what happened.
    public func record(_ event: RequestEvent) {
        let uptime = clock.uptimeNanoseconds
        state.withLock { state in
            guard state.events.count < limit else {
                state.dropped += 1
                return
            }
            state.events.append(ScheduleTimeline.Stamped(uptime: uptime, event: event))
        }
    }

    /// Events it had no room for.
    public var droppedEvents: Int {
        state.withLock { $0.dropped }
    }

    /// The timeline of the events recorded so far; what is still under way ends at the last
    /// event.
    public func timeline() -> ScheduleTimeline {
        ScheduleTimeline(state.withLock { $0.events })
    }

    /// Forgets the events recorded so far, to record another run.
    public func reset() {
        state.withLock { $0 = State() }
    }
}

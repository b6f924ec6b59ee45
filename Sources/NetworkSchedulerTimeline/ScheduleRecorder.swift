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
/// It keeps at most `limit` events, and at most about `byteLimit` bytes of them, and counts
/// those it had no room for (``droppedEvents``), so that a recorder left on in a long run holds
/// a bounded memory whatever its requests' URLs and errors hold.
public final class ScheduleRecorder: RequestEvent.Monitor {
    private struct State {
        var events: [ScheduleTimeline.Stamped] = []
        var bytes = 0
        var dropped = 0
    }

    private let clock: any SchedulerClock
    private let limit: Int
    private let byteLimit: Int
    private let state = Locked(State())

    /// A recorder that reads the time from `clock`: give it the scheduler's when that is a
    /// virtual one, so that the picture shows the scheduler's time.
    ///
    /// - Parameters:
    ///   - clock: where the time of each event is read; nil for the system's clock.
    ///   - limit: the most events it keeps.
    ///   - byteLimit: about the most bytes the events it keeps take, counting for each its URL,
    ///     the callers it names, and an error's text and the body a server sent with it, as if
    ///     it had its own copy of each: 64 MiB by default.
    public init(clock: (any SchedulerClock)? = nil, limit: Int = 100_000, byteLimit: Int = 64 << 20) {
        self.clock = clock ?? .system
        self.limit = max(limit, 0)
        self.byteLimit = max(byteLimit, 0)
    }

    /// Notes `event` with the time now, if there is room for it.
    ///
    /// - Parameter event: what happened.
    public func record(_ event: RequestEvent) {
        let uptime = clock.uptimeNanoseconds
        let bytes = Self.footprint(of: event)
        state.withLock { state in
            guard state.events.count < limit, bytes <= byteLimit - state.bytes else {
                state.dropped += 1
                return
            }
            state.bytes += bytes
            state.events.append(ScheduleTimeline.Stamped(uptime: uptime, event: event))
        }
    }

    /// About how many bytes keeping `event` takes: its place in the list, and what it holds
    /// beyond it (its URL, the callers it names, an error's text and the body a server sent
    /// with it), counted as if it had its own copy of each, so that the bound holds whatever
    /// events share.
    static func footprint(of event: RequestEvent) -> Int {
        var bytes = MemoryLayout<ScheduleTimeline.Stamped>.stride
        switch event {
        case .enqueued(let caller), .joined(let caller), .cancelled(let caller),
             .succeeded(let caller, _), .servedFromCache(let caller, _):
            bytes += footprint(of: caller)
        case .failed(let caller, let error, _):
            bytes += footprint(of: caller) + footprint(of: error)
        case .retried(let call, _, _, let cause):
            bytes += footprint(of: call) + footprint(of: cause)
        case .outcomeKept(let call, let outcome):
            bytes += footprint(of: call)
            if case .failure(let error) = outcome { bytes += footprint(of: error) }
        case .started(let call, _), .promoted(let call, _, _), .progressed(let call, _), .revalidated(let call, _):
            bytes += footprint(of: call)
        case .hostHealthChanged(let host, _):
            bytes += host.utf8.count
        }
        return bytes
    }

    private static func footprint(of caller: RequestEvent.Caller) -> Int {
        caller.method.utf8.count + (caller.url?.absoluteString.utf8.count ?? 0)
            + caller.dependencies.count * MemoryLayout<RequestHandle.ID>.stride
    }

    private static func footprint(of call: RequestEvent.Call) -> Int {
        call.method.utf8.count + (call.url?.absoluteString.utf8.count ?? 0)
            + call.callers.count * MemoryLayout<RequestHandle.ID>.stride
    }

    private static func footprint(of error: ServiceError) -> Int {
        let response = error.rootCause.serverResponse
        let headers = response?.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count } ?? 0
        return "\(error)".utf8.count + (response?.body.count ?? 0) + headers
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

import Foundation
import NetworkScheduler

/// A recorded run of a scheduler, laid out as a timeline: a track per host line, and in it a
/// row per call (and one per caller that joined a call), with the call's wait in its line,
/// its attempts on the wire and the backoffs between them. Callers that shared a call and
/// requests that waited for others are drawn as arrows; retries, promotions, answers from the
/// cache and host pauses are marked. Made by ``ScheduleRecorder/timeline()``.
///
/// It writes itself as the Trace Event Format that Perfetto (ui.perfetto.dev) and
/// `chrome://tracing` open (``traceEvents()``), and as a self-contained SVG picture
/// (``svg(width:)``).
public struct ScheduleTimeline: Sendable {
    /// An event and the uptime it was recorded at.
    struct Stamped: Sendable {
        let uptime: UInt64
        let event: RequestEvent
    }

    /// What a bar shows.
    enum SpanKind: String, Sendable {
        /// A call waiting in its host's line for a budget slot.
        case queued
        /// An attempt on the wire.
        case wire
        /// A call waiting to be tried again.
        case backoff
        /// A caller that joined another's call, until it got its answer.
        case shared
        /// A host paused (``HostHealth/paused(until:reason:)``).
        case paused
    }

    /// One bar: its kind, when it began and ended (seconds since the first event), its label,
    /// and the details a viewer shows on hover.
    struct Span: Sendable {
        let kind: SpanKind
        let start: TimeInterval
        let end: TimeInterval
        let name: String
        let priority: RequestPriority?
        let details: [(String, String)]
    }

    /// A moment worth a mark: a retry, a promotion, an answer from the cache.
    struct Marker: Sendable {
        let time: TimeInterval
        /// The row it belongs to; nil for the whole track.
        let row: Int?
        let name: String
    }

    /// A row of a track, whose bars do not overlap: the calls to one endpoint (`GET /v1/feed`),
    /// or the callers that joined them.
    struct Row: Sendable {
        let label: String
        var spans: [Span]
        /// The most callers one of its calls had (itself and those that joined it).
        var callers = 1

        /// Whether it holds callers that joined calls drawn elsewhere, and no call.
        var holdsJoinersOnly: Bool { spans.allSatisfy { $0.kind == .shared } }
    }

    /// A host's line.
    struct Track: Sendable {
        let name: String
        var rows: [Row] = []
        var pauses: [Span] = []
        var markers: [Marker] = []
    }

    /// A place on the timeline: a row of a track, at a time.
    struct Point: Sendable, Equatable {
        let track: Int
        let row: Int
        let time: TimeInterval
    }

    /// An arrow: the answer of a shared call reaching a caller that joined it, or a request's
    /// end releasing one that waited for it.
    struct Flow: Sendable {
        enum Kind: String, Sendable {
            case shared
            case dependency
        }

        let kind: Kind
        let from: Point
        let to: Point
    }

    let tracks: [Track]
    let flows: [Flow]

    /// Seconds from the first event to the last.
    public let duration: TimeInterval
    /// The network calls it shows.
    public let callCount: Int
    /// The callers it shows that joined a call another made.
    public let sharedCallerCount: Int

    init(_ events: [Stamped]) {
        var builder = ScheduleTimelineBuilder(origin: events.first?.uptime ?? 0)
        for stamped in events { builder.add(stamped) }
        self = builder.timeline()
    }

    init(tracks: [Track], flows: [Flow], duration: TimeInterval, callCount: Int, sharedCallerCount: Int) {
        self.tracks = tracks
        self.flows = flows
        self.duration = duration
        self.callCount = callCount
        self.sharedCallerCount = sharedCallerCount
    }
}

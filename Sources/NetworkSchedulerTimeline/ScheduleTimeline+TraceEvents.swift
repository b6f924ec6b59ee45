import Foundation
import NetworkScheduler

extension ScheduleTimeline {
    /// The timeline in the Trace Event Format (JSON), which Perfetto (ui.perfetto.dev) and
    /// `chrome://tracing` open: a process per host line, a thread per row, a slice per bar,
    /// flow arrows for shared calls and dependencies, and instant events for the marks.
    /// Times are in microseconds since the first event.
    ///
    /// - Returns: the JSON document, UTF-8.
    public func traceEvents() -> Data {
        var events: [[String: Any]] = []
        for (index, track) in tracks.enumerated() {
            let pid = index + 1
            events.append(["ph": "M", "name": "process_name", "pid": pid, "args": ["name": track.name]])
            events.append(["ph": "M", "name": "process_sort_index", "pid": pid, "args": ["sort_index": pid]])
            if !track.pauses.isEmpty {
                events.append(["ph": "M", "name": "thread_name", "pid": pid, "tid": 0, "args": ["name": "health"]])
                for pause in track.pauses { events.append(Self.slice(pause, pid: pid, tid: 0)) }
            }
            for (row, content) in track.rows.enumerated() {
                events.append(["ph": "M", "name": "thread_name", "pid": pid, "tid": row + 1, "args": ["name": content.label]])
                for span in content.spans { events.append(Self.slice(span, pid: pid, tid: row + 1)) }
            }
            for marker in track.markers {
                var event: [String: Any] = ["ph": "i", "name": marker.name, "cat": "mark", "pid": pid,
                                            "ts": Self.microseconds(marker.time)]
                if let row = marker.row {
                    event["tid"] = row + 1
                    event["s"] = "t"
                } else {
                    event["tid"] = 0
                    event["s"] = "p"
                }
                events.append(event)
            }
        }
        for (id, flow) in flows.enumerated() {
            // The start binds to the slice it ends, the finish to the one it enters.
            events.append(["ph": "s", "name": flow.kind.rawValue, "cat": flow.kind.rawValue, "id": id + 1,
                           "pid": flow.from.track + 1, "tid": flow.from.row + 1,
                           "ts": max(Self.microseconds(flow.from.time) - 1, 0)])
            events.append(["ph": "f", "bp": "e", "name": flow.kind.rawValue, "cat": flow.kind.rawValue, "id": id + 1,
                           "pid": flow.to.track + 1, "tid": flow.to.row + 1, "ts": Self.microseconds(flow.to.time)])
        }
        let document: [String: Any] = ["traceEvents": events, "displayTimeUnit": "ms"]
        // Only strings, numbers, arrays and dictionaries: always valid JSON.
        return (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data()
    }

    private static func slice(_ span: Span, pid: Int, tid: Int) -> [String: Any] {
        var args: [String: Any] = Dictionary(span.details, uniquingKeysWith: { first, _ in first })
        if let priority = span.priority { args["priority"] = priority.description }
        return ["ph": "X", "name": span.name, "cat": span.kind.rawValue, "pid": pid, "tid": tid,
                "ts": microseconds(span.start), "dur": max(microseconds(span.end) - microseconds(span.start), 0),
                "args": args]
    }

    /// Whole microseconds, which keeps the document's numbers short.
    private static func microseconds(_ seconds: TimeInterval) -> Int {
        Int((seconds * 1_000_000).rounded())
    }
}

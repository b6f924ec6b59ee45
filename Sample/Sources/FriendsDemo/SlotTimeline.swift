import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import Synchronization

/// Records what runs in a host's slots, and when the host is paused, to draw it: a transport
/// around the real one (each task is a slot taken, from its start to its answer), and an event
/// monitor for the host's health.
final class SlotTimeline: HTTPTransport, RequestEvent.Monitor {
    /// One task on the wire: its label, and when it started and ended (uptime nanoseconds).
    struct Task {
        let label: Character
        let start: UInt64
        var end: UInt64?
    }

    private struct Recording {
        var label: (@Sendable (URLRequest) -> Character?)?
        var tasks: [Task] = []
        var pauses: [(start: UInt64, end: UInt64?)] = []
        /// When the host was told available again: its probe's answer had come.
        var openings: [UInt64] = []
    }

    private let transport: any HTTPTransport
    private let recording = Mutex(Recording())

    init(_ transport: any HTTPTransport) {
        self.transport = transport
    }

    var maximumConnectionsPerHost: Int { transport.maximumConnectionsPerHost }

    /// Starts recording the tasks `label` names (nil leaves a request out), forgetting earlier ones.
    func record(labelling label: @escaping @Sendable (URLRequest) -> Character?) {
        recording.withLock { $0 = Recording(label: label) }
    }

    func startTask(
        for request: TransportRequest,
        policy: TransportPolicy,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        let index: Int? = recording.withLock { recording in
            guard let label = recording.label?(request.urlRequest) else { return nil }
            recording.tasks.append(Task(label: label, start: DispatchTime.now().uptimeNanoseconds))
            return recording.tasks.count - 1
        }
        return transport.startTask(for: request, policy: policy, progress: progress) { [self] result in
            if let index {
                recording.withLock { $0.tasks[index].end = DispatchTime.now().uptimeNanoseconds }
            }
            completion(result)
        }
    }

    /// Records a pause from the moment it is reported to the moment it was set to end (the
    /// event that ends it may be told after the probe it lets through has started), and when
    /// the host is available again (told before the attempts that its probe's answer lets start).
    func record(_ event: RequestEvent) {
        guard case .hostHealthChanged(_, let health) = event else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        recording.withLock { recording in
            guard recording.label != nil else { return }
            switch health {
            case .paused(let until, _): recording.pauses.append((now, now + UInt64(max(0, until.timeIntervalSinceNow) * 1_000_000_000)))
            case .available: recording.openings.append(now)
            case .probing: break
            }
        }
    }

    /// The tasks recorded so far, in the order they started.
    var tasks: [Task] { recording.withLock { $0.tasks } }

    /// The host's pauses recorded so far.
    var pauses: [(start: UInt64, end: UInt64?)] { recording.withLock { $0.pauses } }

    /// When the host was told available again, each time.
    var openings: [UInt64] { recording.withLock { $0.openings } }

    /// One row per slot, each task in the first slot free when it started (its label in
    /// capitals and small letters in turn, so that tasks one after the other can be told
    /// apart), and a row for the host when it was paused (`‖`); time runs left to right in
    /// `width` columns.
    func render(slots: Int, width: Int = 60) -> [String] {
        let (tasks, pauses) = recording.withLock { ($0.tasks, $0.pauses) }
        guard let first = tasks.map(\.start).min() else { return [] }
        let last = max(tasks.map { $0.end ?? $0.start }.max() ?? first, pauses.compactMap(\.end).max() ?? first)
        let step = max(1, (last - first) / UInt64(width))
        func column(_ time: UInt64) -> Int { min(width - 1, Int((max(time, first) - first) / step)) }

        var rows = [[Character]](repeating: Array(repeating: "·", count: width), count: slots)
        var freeFrom = [UInt64](repeating: 0, count: slots)
        var taken = [Int](repeating: 0, count: slots)
        for task in tasks {
            let end = task.end ?? last
            let slot = freeFrom.firstIndex { $0 <= task.start } ?? freeFrom.indices.min { freeFrom[$0] < freeFrom[$1] }!
            freeFrom[slot] = end
            let label = taken[slot].isMultiple(of: 2) ? task.label : Character(task.label.lowercased())
            taken[slot] += 1
            for index in column(task.start)...max(column(task.start), column(end) - 1) { rows[slot][index] = label }
        }
        var lines = rows.enumerated().map { "   slot \($0.offset + 1) │\(String($0.element))│" }
        if !pauses.isEmpty {
            var host = [Character](repeating: " ", count: width)
            for pause in pauses {
                for index in column(pause.start)...max(column(pause.start), column(pause.end ?? last) - 1) { host[index] = "‖" }
            }
            lines.append("   paused │\(String(host))│")
        }
        let milliseconds = Double(last - first) / 1_000_000
        lines.append("          0 ms" + String(repeating: " ", count: max(1, width - 12)) + String(format: "%.0f ms", milliseconds))
        return lines
    }
}

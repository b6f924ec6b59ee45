import Foundation

/// Counts what a scheduler did, for dashboards, logs and the demo's table. Works everywhere
/// Foundation does, Linux included.
///
/// ```swift
/// let metrics = MetricsCollector()
/// let scheduler = RequestScheduler { $0.eventMonitors = [metrics] }
/// …
/// let snapshot = metrics.snapshot
/// print(snapshot.networkCalls, snapshot.deduplicated, snapshot.queueWait[.high]?.p99 ?? 0)
/// print(metrics)  // the whole table, as of now
/// ```
public final class MetricsCollector: RequestEvent.Monitor, CustomStringConvertible {
    /// Queue-wait figures for one priority, in seconds.
    public struct QueueWait: Sendable, Equatable {
        /// How many callers were measured.
        public let count: Int
        /// The median wait.
        public let p50: TimeInterval
        /// The wait 99 % of callers did not exceed.
        public let p99: TimeInterval
        /// The longest wait.
        public let max: TimeInterval
    }

    /// The counts at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Callers that have ended, in any way.
        public var requests: Int { succeeded + servedFromCache + failed + cancelled }
        /// Network calls started.
        public var networkCalls = 0
        /// Callers that joined a call in flight instead of making their own.
        public var deduplicated = 0
        /// Attempts scheduled again after a failure, a 401 or a lost connection.
        public var retries = 0
        /// Callers that got their model.
        public var succeeded = 0
        /// Callers that got their model from the cache without waiting for the server (see
        /// ``CacheUse/servedFromCache``); not counted in ``succeeded``.
        public var servedFromCache = 0
        /// Answers to requests the cache made conditional: a 304 or a new answer.
        public var revalidated = 0
        /// Callers that got an error other than cancellation.
        public var failed = 0
        /// Callers that were cancelled.
        public var cancelled = 0
        /// Network calls promoted one level after waiting longer than their priority's
        /// maximum wait (each level counts once).
        public var promotions = 0
        /// Times a host was paused (see ``HostHealth``).
        public var hostPauses = 0
        /// Time between entering the queue and the call starting, for callers whose call got an
        /// answer from the server, by the priority they asked for.
        public var queueWait: [RequestPriority: QueueWait] = [:]
    }

    private struct Counts {
        var snapshot = Snapshot()
        var queueWait: [RequestPriority: LatencyHistogram] = [:]
    }

    private let counts = Locked(Counts())

    /// A collector with every count at zero.
    public init() {}

    /// What it counted so far, a figure a line: the ``snapshot``'s table.
    public var description: String { snapshot.description }

    /// The counts so far.
    public var snapshot: Snapshot {
        counts.withLock { counts in
            var snapshot = counts.snapshot
            for (priority, histogram) in counts.queueWait {
                snapshot.queueWait[priority] = QueueWait(count: histogram.count, p50: histogram.quantile(0.5),
                                                         p99: histogram.quantile(0.99), max: histogram.max)
            }
            return snapshot
        }
    }

    /// Starts counting again from zero.
    public func reset() {
        counts.withLock { $0 = Counts() }
    }

    /// Counts one event.
    ///
    /// - Parameter event: what happened.
    public func record(_ event: RequestEvent) {
        counts.withLock { counts in
            switch event {
            case .enqueued:
                break
            case .joined:
                counts.snapshot.deduplicated += 1
            case .started:
                counts.snapshot.networkCalls += 1
            case .retried:
                counts.snapshot.retries += 1
            case .succeeded(let caller, let metrics):
                counts.snapshot.succeeded += 1
                counts.queueWait[caller.priority, default: LatencyHistogram()].record(metrics.queuedDuration)
            case .failed(let caller, _, let metrics):
                counts.snapshot.failed += 1
                if metrics.statusCode != nil {
                    counts.queueWait[caller.priority, default: LatencyHistogram()].record(metrics.queuedDuration)
                }
            case .cancelled:
                counts.snapshot.cancelled += 1
            case .promoted:
                counts.snapshot.promotions += 1
            case .hostHealthChanged(_, .paused):
                counts.snapshot.hostPauses += 1
            case .servedFromCache:
                counts.snapshot.servedFromCache += 1
            case .revalidated:
                counts.snapshot.revalidated += 1
            case .hostHealthChanged, .outcomeKept, .progressed:
                break
            }
        }
    }
}

extension MetricsCollector.Snapshot: CustomStringConvertible {
    /// One line per figure, as a log or a test failure shows it:
    ///
    /// ```
    /// requests: 14 (10 succeeded, 2 from the cache, 1 failed, 1 cancelled)
    /// network calls: 9, deduplicated: 3, retries: 1, promotions: 0, host pauses: 0
    /// cache: 2 served, 1 revalidated
    /// queue wait high: 4 callers, p50 0.002 s, p99 0.010 s, max 0.010 s
    /// ```
    public var description: String {
        var lines = [
            "requests: \(requests) (\(succeeded) succeeded, \(servedFromCache) from the cache, \(failed) failed, "
                + "\(cancelled) cancelled)",
            "network calls: \(networkCalls), deduplicated: \(deduplicated), retries: \(retries), "
                + "promotions: \(promotions), host pauses: \(hostPauses)",
            "cache: \(servedFromCache) served, \(revalidated) revalidated",
        ]
        for priority in RequestPriority.allCases.reversed() {
            guard let wait = queueWait[priority] else { continue }
            lines.append("queue wait \(priority): \(wait.count) callers, p50 \(Self.seconds(wait.p50)), "
                         + "p99 \(Self.seconds(wait.p99)), max \(Self.seconds(wait.max))")
        }
        return lines.joined(separator: "\n")
    }

    private static func seconds(_ value: TimeInterval) -> String {
        String(format: "%.3f s", value)
    }
}

import CoreMetrics
import Foundation
import NetworkScheduler
import NIOConcurrencyHelpers

/// Reports a scheduler's events to swift-metrics: requests by outcome, network calls,
/// deduplicated callers, retries, promotions, queue wait per priority, and each host's health.
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())
/// let scheduler = RequestScheduler {
///     $0.eventMonitors = [MetricsEventMonitor()]
/// }
/// ```
///
/// | Metric | Kind | Dimensions |
/// |---|---|---|
/// | `network_scheduler_requests_total` | counter | `outcome`: succeeded, failed, cancelled, cached; `error`: the ``ServiceError/caseName`` of a failure; `cache`: how the cache answered (fresh, staleWhileRevalidating, staleAfterError, onlyCache) |
/// | `network_scheduler_revalidations_total` | counter | `result`: not_modified (a 304), changed |
/// | `network_scheduler_network_calls_total` | counter | |
/// | `network_scheduler_deduplicated_total` | counter | (callers that joined a call in flight) |
/// | `network_scheduler_retries_total` | counter | `error`: what the last attempt ended with |
/// | `network_scheduler_promotions_total` | counter | `to`: the priority reached |
/// | `network_scheduler_queue_wait_seconds` | timer | `priority` |
/// | `network_scheduler_network_seconds` | timer | `outcome` |
/// | `network_scheduler_host_pauses_total` | counter | `host` |
/// | `network_scheduler_host_available` | gauge | `host`: 1 available, 0.5 probing, 0 paused |
///
/// Dimensions take a few values each, and a host's dimension is its `scheme://host:port`:
/// no path, query, header or identifier, so nothing secret and nothing unbounded.
public final class MetricsEventMonitor: RequestEvent.Monitor {
    private let factory: any MetricsFactory
    private let prefix: String
    private let fixed: Fixed
    /// Metrics whose dimensions are only known as events arrive (an error's case, a host).
    private let made = NIOLockedValueBox<[Key: any AnyObject & Sendable]>([:])

    /// A monitor reporting to `factory` (the bootstrapped system's by default).
    ///
    /// - Parameters:
    ///   - factory: where the metrics go; `MetricsSystem.factory` unless you pass one.
    ///   - prefix: the start of every metric's label.
    public init(factory: any MetricsFactory = MetricsSystem.factory, prefix: String = "network_scheduler") {
        self.factory = factory
        self.prefix = prefix
        fixed = Fixed(factory: factory, prefix: prefix)
    }

    /// Reports `event`.
    ///
    /// - Parameter event: what happened.
    public func record(_ event: RequestEvent) {
        switch event {
        case .enqueued, .progressed:
            break
        case .joined:
            fixed.deduplicated.increment()
        case .started:
            fixed.networkCalls.increment()
        case let .retried(_, _, _, cause):
            counter("retries_total", [("error", cause.caseName)]).increment()
        case let .succeeded(caller, metrics):
            fixed.succeeded.increment()
            fixed.networkSucceeded.recordSeconds(metrics.networkDuration)
            fixed.queueWait[caller.priority]?.recordSeconds(metrics.queuedDuration)
        case let .failed(caller, error, metrics):
            counter("requests_total", [("outcome", "failed"), ("error", error.caseName)]).increment()
            if metrics.statusCode != nil {
                fixed.networkFailed.recordSeconds(metrics.networkDuration)
                fixed.queueWait[caller.priority]?.recordSeconds(metrics.queuedDuration)
            }
        case let .servedFromCache(_, metrics):
            counter("requests_total", [("outcome", "cached"), ("cache", "\(metrics.cacheUse)")]).increment()
        case let .revalidated(_, statusCode):
            counter("revalidations_total", [("result", statusCode == 304 ? "not_modified" : "changed")]).increment()
        case .cancelled:
            fixed.cancelled.increment()
        case let .promoted(_, _, to):
            fixed.promotions[to]?.increment()
        case .outcomeKept:
            fixed.keptOutcomes.increment()
        case let .hostHealthChanged(host, health):
            let gauge: Gauge = metric("host_available", [("host", host)]) { Gauge(label: $0, dimensions: $1, factory: $2) }
            switch health {
            case .available: gauge.record(1)
            case .probing: gauge.record(0.5)
            case .paused:
                gauge.record(0)
                counter("host_pauses_total", [("host", host)]).increment()
            }
        }
    }

    private func counter(_ name: String, _ dimensions: [(String, String)]) -> Counter {
        metric(name, dimensions) { Counter(label: $0, dimensions: $1, factory: $2) }
    }

    /// The metric named `name` with `dimensions`, made once and kept.
    private func metric<Metric: AnyObject & Sendable>(
        _ name: String, _ dimensions: [(String, String)],
        make: (String, [(String, String)], any MetricsFactory) -> Metric
    ) -> Metric {
        let key = Key(name: name, dimensions: dimensions.map { "\($0.0)=\($0.1)" })
        return made.withLockedValue { made in
            if let metric = made[key] as? Metric { return metric }
            let metric = make("\(prefix)_\(name)", dimensions, factory)
            made[key] = metric
            return metric
        }
    }

    private struct Key: Hashable {
        let name: String
        let dimensions: [String]
    }

    /// The metrics whose dimensions are known beforehand, made once.
    private struct Fixed {
        let succeeded: Counter
        let cancelled: Counter
        let networkCalls: Counter
        let deduplicated: Counter
        let keptOutcomes: Counter
        let networkSucceeded: CoreMetrics.Timer
        let networkFailed: CoreMetrics.Timer
        let queueWait: [RequestPriority: CoreMetrics.Timer]
        let promotions: [RequestPriority: Counter]

        init(factory: any MetricsFactory, prefix: String) {
            func label(_ name: String) -> String { "\(prefix)_\(name)" }
            succeeded = Counter(label: label("requests_total"), dimensions: [("outcome", "succeeded")], factory: factory)
            cancelled = Counter(label: label("requests_total"), dimensions: [("outcome", "cancelled")], factory: factory)
            networkCalls = Counter(label: label("network_calls_total"), factory: factory)
            deduplicated = Counter(label: label("deduplicated_total"), factory: factory)
            keptOutcomes = Counter(label: label("kept_outcomes_total"), factory: factory)
            networkSucceeded = CoreMetrics.Timer(label: label("network_seconds"), dimensions: [("outcome", "succeeded")], factory: factory)
            networkFailed = CoreMetrics.Timer(label: label("network_seconds"), dimensions: [("outcome", "failed")], factory: factory)
            var queueWait: [RequestPriority: CoreMetrics.Timer] = [:]
            var promotions: [RequestPriority: Counter] = [:]
            for priority in RequestPriority.allCases {
                queueWait[priority] = CoreMetrics.Timer(label: label("queue_wait_seconds"), dimensions: [("priority", "\(priority)")], factory: factory)
                promotions[priority] = Counter(label: label("promotions_total"), dimensions: [("to", "\(priority)")], factory: factory)
            }
            self.queueWait = queueWait
            self.promotions = promotions
        }
    }
}

import Foundation
import NetworkScheduler

/// The metrics collector's counts as a table.
enum MetricsTable {
    static func render(_ snapshot: MetricsCollector.Snapshot) -> String {
        var rows: [(String, String)] = [
            ("calls asked", "\(snapshot.requests)"),
            ("network calls made", "\(snapshot.networkCalls)"),
            ("dedup hits", "\(snapshot.deduplicated)"),
            ("retries", "\(snapshot.retries)"),
            ("succeeded", "\(snapshot.succeeded)"),
            ("answered by the cache", "\(snapshot.servedFromCache)"),
            ("revalidated (304 or new)", "\(snapshot.revalidated)"),
            ("failed", "\(snapshot.failed)"),
            ("cancelled", "\(snapshot.cancelled)"),
        ]
        for priority in RequestPriority.allCases.reversed() {
            guard let wait = snapshot.queueWait[priority] else { continue }
            rows.append(("queue wait \(priority) p50 / p99",
                         "\(milliseconds(wait.p50)) / \(milliseconds(wait.p99))  (\(wait.count) calls)"))
        }
        let left = rows.map(\.0.count).max() ?? 0
        let right = rows.map(\.1.count).max() ?? 0
        let rule = "+" + String(repeating: "-", count: left + 2) + "+" + String(repeating: "-", count: right + 2) + "+"
        let lines = rows.map { "| " + $0.0.padding(toLength: left, withPad: " ", startingAt: 0) + " | "
            + $0.1.padding(toLength: right, withPad: " ", startingAt: 0) + " |" }
        return ([rule] + lines + [rule]).joined(separator: "\n")
    }

    private static func milliseconds(_ seconds: TimeInterval) -> String {
        String(format: "%.1f ms", seconds * 1_000)
    }
}

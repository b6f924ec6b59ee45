import Foundation

/// Durations in logarithmic buckets (four per doubling, from one microsecond), so that
/// quantiles cost constant memory however many samples arrive. Quantiles are accurate to
/// within a bucket's width, about 19 %.
struct LatencyHistogram: Sendable {
    private static let floor: TimeInterval = 1e-6
    private static let bucketsPerDoubling = 4.0
    private var buckets = [Int](repeating: 0, count: 128)
    private(set) var count = 0
    private(set) var max: TimeInterval = 0

    mutating func record(_ duration: TimeInterval) {
        buckets[Self.bucket(for: duration)] += 1
        count += 1
        max = Swift.max(max, duration)
    }

    /// The duration below which a fraction `q` of the samples fall (0 when there are none).
    func quantile(_ q: Double) -> TimeInterval {
        guard count > 0 else { return 0 }
        let rank = Swift.max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (index, samples) in buckets.enumerated() {
            seen += samples
            if seen >= rank { return Swift.min(Self.upperBound(of: index), max) }
        }
        return max
    }

    private static func bucket(for duration: TimeInterval) -> Int {
        guard duration > floor else { return 0 }
        let index = Int((log2(duration / floor) * bucketsPerDoubling).rounded(.down)) + 1
        return Swift.min(index, 127)
    }

    private static func upperBound(of bucket: Int) -> TimeInterval {
        floor * pow(2, Double(bucket) / bucketsPerDoubling)
    }
}

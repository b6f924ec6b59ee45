import Foundation

/// Where a moment of a recorded run goes across a picture: each stretch between two moments
/// when something began or ended is drawn by a share of the width that grows with its length
/// but slower than it (logarithmically past a knee of a two-hundredth of the run), and never
/// falls below a floor. A busy second of many short calls keeps the room it needs, and a long
/// wait, or a long idle stretch, takes little more than a short one. Moments keep their
/// order, and the axis says the real times.
struct TimeScale {
    /// The moments, in order, and the x of each.
    private let times: [TimeInterval]
    private let xs: [Double]

    /// The room every stretch gets however short, in knees: a burst of calls a millisecond
    /// apart is spread out enough to tell them apart.
    static let floor = 0.3

    /// A scale from `left` over `width` pixels for a run of `duration` seconds, whose bars and
    /// marks begin and end at `moments`.
    init(moments: [TimeInterval], duration: TimeInterval, left: Double, width: Double) {
        let knee = max(duration / 200, 0.000_1)
        let times = Array(Set(moments.map { min(max($0, 0), duration) } + [0, duration])).sorted()
        var weights = [0.0]
        for (start, end) in zip(times, times.dropFirst()) {
            weights.append(weights[weights.count - 1] + knee * (Self.floor + log2(1 + (end - start) / knee)))
        }
        let total = max(weights.last ?? 0, .leastNonzeroMagnitude)
        self.times = times
        xs = weights.map { left + width * $0 / total }
    }

    /// The x of `time`: between two moments, in proportion.
    func x(_ time: TimeInterval) -> Double {
        guard let first = times.first, let firstX = xs.first else { return 0 }
        guard time > first else { return firstX }
        // The first moment at or after `time`.
        var low = 0
        var high = times.count - 1
        guard time < times[high] else { return xs[high] }
        while low < high {
            let middle = (low + high) / 2
            if times[middle] < time { low = middle + 1 } else { high = middle }
        }
        let (before, after) = (times[low - 1], times[low])
        return xs[low - 1] + (xs[low] - xs[low - 1]) * (time - before) / max(after - before, .leastNonzeroMagnitude)
    }

    /// The inverse of ``x(_:)``: the time drawn at `x`.
    func time(at x: Double) -> TimeInterval {
        guard let last = xs.indices.last else { return 0 }
        guard x > xs[0] else { return times[0] }
        guard x < xs[last] else { return times[last] }
        let index = xs.firstIndex { $0 >= x } ?? last
        let (before, after) = (xs[index - 1], xs[index])
        return times[index - 1] + (times[index] - times[index - 1]) * (x - before) / max(after - before, .leastNonzeroMagnitude)
    }
}

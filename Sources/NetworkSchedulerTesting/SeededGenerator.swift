import NetworkScheduler

/// A random number generator that a seed replays: SplitMix64. Give a failing run's seed back
/// to replay its choices.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    /// The scheduler's own: a test's seed and the scheduler's jitter come from one algorithm.
    private var mix: SplitMix64

    /// A generator whose numbers follow from `seed`.
    ///
    /// - Parameter seed: the seed the numbers follow from.
    public init(seed: UInt64) {
        mix = SplitMix64(seed: seed)
    }

    /// The next number of the sequence.
    public mutating func next() -> UInt64 {
        mix.next()
    }
}

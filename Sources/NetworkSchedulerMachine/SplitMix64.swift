/// A small, fast generator of pseudo-random numbers from a seed (SplitMix64): the machine
/// draws its backoff jitter from one, seeded by the scheduler once, so that it reads no system
/// randomness per request and the same seed replays the same backoffs (in tests, in the fuzz).
/// The only one in the project: the testing kit's `SeededGenerator`, which tests and the chaos
/// soak draw from, is this one.
@usableFromInline package struct SplitMix64: RandomNumberGenerator, Sendable {
    @usableFromInline var state: UInt64

    @inlinable package init(seed: UInt64) {
        state = seed
    }

    @inlinable package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

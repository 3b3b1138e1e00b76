/// SplitMix64: a small deterministic generator, one independent stream per (seed, stream) pair,
/// so a failing seed can be replayed exactly.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    /// The generator of `stream` (a debugger, a test case) under `seed`.
    public init(seed: UInt64, stream: UInt64 = 0) {
        state = seed &+ (stream &+ 1) &* 0x9E37_79B9_7F4A_7C15
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bounded wait for a busy chip. It gives up when the chip is still busy in the answer to a
/// poll *asked* after the deadline, or after the last poll allowed. An answer is judged by when
/// its question was asked, so a host paused past the deadline (SIGSTOP, a laptop's sleep, a
/// starved process) asks once more rather than fail an operation that finished meanwhile.
struct BoundedWait {
    let deadline: Double
    let maximumPolls: Int
    let clock: () -> Double
    private var polls = 0
    /// When the poll whose answer is being judged was asked (the wait's start for the first).
    private var lastAsked: Double

    init(seconds: Double, polls: Int, clock: @escaping () -> Double) {
        self.clock = clock
        self.maximumPolls = polls
        lastAsked = clock()
        deadline = lastAsked + seconds
    }

    /// Called when the last answer said busy: `false` when the wait is over; otherwise it leaves
    /// the chip a moment (the first polls go straight out, as an operation is usually done by
    /// the next round trip; later ones a millisecond apart, not to flood the bus) and notes that
    /// the next poll is asked now.
    mutating func pollAgain() -> Bool {
        polls += 1
        guard polls < maximumPolls, lastAsked <= deadline else { return false }
        if polls > 3 { usleep(1000) }
        lastAsked = clock()
        return true
    }
}

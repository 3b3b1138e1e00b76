import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How long a real CC Debugger with a CC2541 takes for what the emulator does: the one place the
/// emulator's device-time figures and their sources live.
///
/// The model, transfer by transfer, on the debugger's own time line (a transfer starts when the
/// host sends it or when the debugger is done with the previous one, whichever is later):
///
/// 1. **USB.** A transfer takes whole full-speed frames: at least one, and one more for every
///    `bulkBytesPerFrame` bytes of data beyond the first frame's.
/// 2. **Debug interface.** Then the debugger clocks the bulk OUT's debug commands to the chip, one
///    after the other: every command byte, parameter byte and reply byte costs 8 periods of the
///    debug clock (the debugger's header bytes stay in the debugger). A command acts on the chip
///    once its own bytes are in, so a status or FCTL read sees the time of its place in the transfer.
/// 3. **Flash.** The flash controller works on its own time and reports BUSY meanwhile: a chip
///    erase for `chipErase`, a page erase for `pageErase`, a write for `flashWordWrite` per 32-bit
///    word. The host finds out by polling, which costs transfers of its own.
///
/// Control transfers (GET_STATE, reset, …) cost their frames; what the debugger does on the pins
/// for them is not published and not charged. Host time (its CPU, its sleeps) is not the
/// device's: it shows only on a clock that really passes (`MonotonicDeviceClock`).
public struct DeviceTiming: Sendable, Equatable {
    /// One USB full-speed frame, 1 ms: the host starts a frame every 1.00 ms ± 0.0005 ms at full
    /// speed (USB 2.0 specification, §8.4.3 "Start-of-Frame Packets"). The CC Debugger is a
    /// full-speed device (cc-debugger-protocol.md §1.2). Every transfer costs at least one: its
    /// completion is seen by the host at a frame's end at the earliest.
    public var frame: Duration
    /// 1,216 bytes: the most bulk data one full-speed frame can carry, 19 transactions of 64-byte
    /// packets (USB 2.0 specification, §5.8.4, Table 5-9 "Full-speed Bulk Transaction Limits").
    /// Only the reference client's 10,275-byte slow writes need more than one frame for their data.
    public var bulkBytesPerFrame: Int
    /// The debug clock (DC) the debugger drives, in hertz. **An assumption, not a published
    /// figure:** TI documents the debug interface's protocol (SWRU191 §3.2: one bit per DC period,
    /// bytes MSB first) but not the rate of the CC Debugger's "slow" and "fast" settings, and
    /// nobody has published a measurement (cc-debugger-protocol.md §13.5). 1 MHz is a round
    /// figure for a bit-serial link driven by the debugger's 8051; `benchmarks/device-time.md`
    /// compares what it predicts with what users report from real hardware.
    public var debugClockHertz: Int
    /// 20 µs to write one 32-bit flash word: "Flash write time (4 bytes): 20 µs" (TI SWRU191,
    /// CC253x/CC254x User's Guide, §2.2.3 "Physical Memory", flash memory features).
    public var flashWordWrite: Duration
    /// 20 ms to erase one flash page: "Flash-page erase time: 20 ms" (SWRU191 §2.2.3).
    public var pageErase: Duration
    /// 20 ms for the debug interface's CHIP_ERASE: "Flash-chip (mass) erase time: 20 ms"
    /// (SWRU191 §2.2.3).
    public var chipErase: Duration

    /// Debug-clock periods per byte on the debug interface: bytes are sent MSB first, one bit per
    /// clock (SWRU191 §3.2, Figure 3-2 "Transmission of One Byte").
    public static let clocksPerByte = 8

    /// The figures above: what a bench with a CC Debugger and a CC2541 is modelled to take.
    public static let hardware = DeviceTiming()

    /// A model with the given figures; the defaults are `hardware`'s.
    public init(
        frame: Duration = .milliseconds(1), bulkBytesPerFrame: Int = 19 * 64, debugClockHertz: Int = 1_000_000,
        flashWordWrite: Duration = .microseconds(20), pageErase: Duration = .milliseconds(20),
        chipErase: Duration = .milliseconds(20)
    ) {
        self.frame = frame
        self.bulkBytesPerFrame = bulkBytesPerFrame
        self.debugClockHertz = debugClockHertz
        self.flashWordWrite = flashWordWrite
        self.pageErase = pageErase
        self.chipErase = chipErase
    }

    /// The USB part of a transfer carrying `bytes` bytes of data: whole frames, at least one.
    public func usbTime(bytes: Int) -> Duration {
        let frames = max(1, (bytes + bulkBytesPerFrame - 1) / bulkBytesPerFrame)
        return frame * frames
    }

    /// `bytes` bytes clocked over the debug interface.
    public func debugTime(bytes: Int) -> Duration {
        // Integer nanoseconds: exact for the clock rates that divide 8 GHz (1 MHz: 8 µs a byte).
        .nanoseconds(Int64(bytes) * Int64(Self.clocksPerByte) * 1_000_000_000 / Int64(debugClockHertz))
    }

    /// The flash controller writing `words` 32-bit words.
    public func flashWriteTime(words: Int) -> Duration { flashWordWrite * words }
}

/// The time line device time is kept on. A debugger charges each transfer on it; the clock says
/// whether that time really passes.
public protocol DeviceClock: Sendable {
    /// Now, since the clock's own origin.
    var now: Duration { get }
    /// Returns once `deadline` has come (at once when it has passed).
    func wait(until deadline: Duration)
}

/// The host's monotonic clock: device time really passes. `wait` sleeps the calling thread, so
/// several emulated debuggers served by several threads wait in parallel, like real ones.
public struct MonotonicDeviceClock: DeviceClock {
    /// The host's monotonic clock.
    public init() {}

    /// CLOCK_MONOTONIC (never set back, unlike the wall clock).
    public var now: Duration {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    /// Sleeps until `deadline` on CLOCK_MONOTONIC. The kernel may wake the thread up to its timer
    /// slack late (50 µs by default): like a real host's latency, that delays the next transfer.
    public func wait(until deadline: Duration) {
        let (seconds, attoseconds) = deadline.components
        var target = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }
}

/// A clock on which only waits move time: the device time a sequence of transfers takes, without
/// taking it (tests, and the benchmark's predictions). Host time between transfers counts as none.
public final class VirtualDeviceClock: DeviceClock {
    private let current: Mutex<Duration>

    /// A clock at `start`.
    public init(start: Duration = .zero) { current = Mutex(start) }

    /// The time the waits so far have reached.
    public var now: Duration { current.withLock { $0 } }

    /// Moves the clock to `deadline` if it is later; never sleeps.
    public func wait(until deadline: Duration) { current.withLock { $0 = max($0, deadline) } }

    /// Moves the clock on by `interval`, as a host that sleeps does.
    public func advance(by interval: Duration) { current.withLock { $0 += interval } }
}

/// Where a command falls on the device's time line, and the figures the chip's flash controller
/// takes its durations from.
struct DeviceMoment: Sendable {
    var now: Duration
    var timing: DeviceTiming
}

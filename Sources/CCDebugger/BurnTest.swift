public import IntelHex
public import TargetData

/// The burn test for a debugger and chip that have never been used together: on the attached
/// chip, for each USB framing in turn, erase, write an image that covers every flash page with
/// address-dependent bytes, read every byte back, run the CRC verify; then erase the chip again
/// and leave it so (checked by CRC). On a chip whose flash the CRC cannot see (the CC243x,
/// `VerifyMode.effective(on:)`) the read-back is the check in both. Each framing writes a
/// different pattern, the second the complement of the first, so every bit of every byte is
/// written as 0 once.
///
/// The lock bits (the last 16 bytes) are never written: their 0xFF is what keeps the chip
/// unlocked and unprotected.
public struct BurnTest {
    /// How one framing fared.
    public struct Pass: Sendable, Equatable {
        /// The framing the write used.
        public var framing: USBFraming
        /// What happened.
        public var outcome: Outcome
        /// Seconds from the erase to the end of the CRC verify (or the failure).
        public var seconds: Double
        /// USB transfers from the erase to the end.
        public var transfers: Int
        /// Bytes written (the whole flash but the lock bits).
        public var bytesWritten: Int
    }

    /// The outcome of a pass.
    public enum Outcome: Sendable, Equatable {
        /// Written, every byte read back equal, CRC verified (where the chip's CRC is used).
        case works
        /// A byte read back differs from what was written: the first such.
        case readBackDiffers(address: Int, wrote: UInt8, read: UInt8)
        /// The debugger or chip failed during `step` (a stall, a timeout, the CRC).
        case failed(step: String, error: DebuggerError)
        /// The chip's data refuses the test image (a chips.json whose lock bits do not end the
        /// flash): nothing was written.
        case imageRefused(String)

        /// Whether the framing works on this debugger.
        public var works: Bool { self == .works }

        /// Whether this says the framing itself is refused by the debugger's firmware — a stall
        /// or a timeout on the USB side — rather than that the debugger, the chip or its flash
        /// failed (an unplug, an I/O error, a byte read back wrong), which fails the test.
        public var refusesTheFraming: Bool {
            switch self {
            case .failed(_, .transport(.pipe, _)), .failed(_, .transport(.timeout, _)): return true
            default: return false
            }
        }
    }

    /// Why the test could not begin (no target, a chip the data does not describe), with the
    /// debugger's answer to GET_STATE when it gave one: a report is still written from it.
    public struct CannotBegin: Error, Sendable {
        /// GET_STATE's answer, if the debugger gave one.
        public var state: DebuggerState?
        /// What stopped it.
        public var error: DebuggerError
        /// Whether the chip erase had begun: a debug-locked chip is erased to tell its part
        /// before anything else, and what stopped the test may come after that.
        public var erased: Bool
    }

    /// What the test found.
    public struct Report: Sendable {
        /// The debugger's answer to GET_STATE.
        public var state: DebuggerState
        /// The chip as identified before the test.
        public var chip: Chip
        /// Its identity (chip ID, revision).
        public var identity: ChipIdentity
        /// The factory IEEE address (info page), MSB first; `nil` on a chip that has none.
        public var primaryAddress: [UInt8]?
        /// The secondary address the last page held before the test erased it, MSB first
        /// (unknown when the chip was locked: its erase came first).
        public var secondaryAddress: [UInt8]?
        /// Whether the chip was debug-locked when the test found it.
        public var wasLocked: Bool
        /// One per framing, in the order run.
        public var passes: [Pass]
        /// Whether the chip was erased at the end and read as erased (by CRC); nil when that
        /// failed, with the reason in `finalError`.
        public var leftErased: Bool
        /// Why the final erase did not happen or did not check, if it did not.
        public var finalError: DebuggerError?

        /// Nothing disagreed: every read-back equal, the default framing works, the chip left
        /// erased. (A non-default framing the firmware refuses is a finding, not a failure.)
        public var passed: Bool {
            leftErased
                && passes.allSatisfy { pass in
                    pass.outcome.works || (pass.framing != .proven && pass.outcome.refusesTheFraming)
                }
        }
    }

    /// The framings in the order they are tried: the default first, so its result stands even
    /// when the other leaves the debugger unusable.
    public static let framings: [USBFraming] = [.proven, .packed]

    /// The byte pass `pass` writes at `address`: the address's low byte mixed with its 1 KiB
    /// block number, so that a write landing in the wrong page or bank reads back wrong; the
    /// second pass the complement.
    public static func patternByte(at address: Int, pass: Int) -> UInt8 {
        let byte = UInt8(truncatingIfNeeded: address) ^ UInt8(truncatingIfNeeded: (address >> 10) &* 0x5B)
        return pass % 2 == 0 ? byte : ~byte
    }

    /// The image pass `pass` writes on `chip`: every byte below the lock bits (all of the flash
    /// on a chip whose lock byte is elsewhere).
    public static func image(for chip: Chip, pass: Int) -> MemoryImage {
        let bytes = (0..<(chip.lockBits?.lowerBound ?? chip.flashSize)).map { patternByte(at: $0, pass: pass) }
        return (try? MemoryImage(bytes: bytes, at: 0)) ?? MemoryImage()
    }

    /// Opens a session on the debugger (again, after a failure: opening sets its configuration,
    /// which clears a stalled endpoint); `counting` counts its transfers.
    public typealias Opener = () throws(DebuggerError) -> (session: CC254xSession, counting: CountingTransport)

    let open: Opener
    let progress: (String, FlashProgress?) -> Void

    /// A test that opens its sessions with `open`; `progress` hears each step's name and its
    /// progress (nil when a step begins).
    public init(open: @escaping Opener, progress: @escaping (String, FlashProgress?) -> Void = { _, _ in }) {
        self.open = open
        self.progress = progress
    }

    /// Runs the test. Throws only when it cannot begin (no target, a chip the data does not
    /// describe, a locked chip's identity unknown after its erase); whatever happens after the
    /// first erase is in the report.
    public func run() throws(CannotBegin) -> Report {
        var state: DebuggerState?
        var erased = false
        do throws(DebuggerError) {
            return try run(state: &state, erased: &erased)
        } catch {
            throw CannotBegin(state: state, error: error, erased: erased)
        }
    }

    func run(state found: inout DebuggerState?, erased: inout Bool) throws(DebuggerError) -> Report {
        var (session, counting) = try open()
        let state = try session.open()
        found = state
        guard state.targetID != 0 else { throw .noTarget }
        var identity = try session.connect(targetID: state.targetID)
        // A chip that reports no size needs one given, before a locked one is erased.
        if session.possibleChips(targetID: state.targetID).isEmpty,
            let family = ChipFamily(targetID: state.targetID, in: session.chips)?.name
        {
            throw .flashSizeNotGiven(family: family)
        }
        // A locked chip hides its size and its flash: the erase unlocks it, then it tells (the
        // secondary address in its last page is gone with the erase).
        let wasLocked = identity.locked
        if wasLocked {
            erased = true
            identity = try session.chipErase(targetID: state.targetID)
        }
        guard let chip = identity.chip(targetID: state.targetID, in: session.chips) else {
            throw .unknownPart(targetID: state.targetID, flashSizeCode: identity.flashSizeCode)
        }
        let primary = try session.primaryAddress(chip: chip)
        let secondary = wasLocked ? nil : try session.secondaryAddress(chip: chip)
        var passes: [Pass] = []
        for (number, framing) in Self.framings.enumerated() {
            let pass = self.pass(
                number, framing: framing, chip: chip, state: state, session: session, counting: counting)
            passes.append(pass)
            if case .failed(_, .transport) = pass.outcome {
                // The debugger may be left stalled: the rest runs on a fresh session.
                guard let reopened = try? reopen(state: state) else { break }
                (session, counting) = reopened
            }
        }
        var leftErased = false
        var finalError: DebuggerError?
        do throws(DebuggerError) {
            session.framing = .proven
            progress("erasing", nil)
            _ = try session.chipErase(targetID: state.targetID)
            let erased =
                (try? MemoryImage(bytes: [UInt8](repeating: 0xFF, count: chip.flashSize), at: 0)) ?? MemoryImage()
            progress("checking the erase", nil)
            try session.verifyCRC(erased) { progress("checking the erase", $0) }
            leftErased = true
        } catch {
            finalError = error
        }
        return Report(
            state: state, chip: chip, identity: identity, primaryAddress: primary, secondaryAddress: secondary,
            wasLocked: wasLocked, passes: passes, leftErased: leftErased, finalError: finalError)
    }

    func reopen(state: DebuggerState) throws(DebuggerError) -> (session: CC254xSession, counting: CountingTransport) {
        let (session, counting) = try open()
        _ = try session.open()
        _ = try session.connect(targetID: state.targetID)
        return (session, counting)
    }

    /// One framing: erase, write pattern `number`, read every byte back, CRC verify.
    func pass(
        _ number: Int, framing: USBFraming, chip: Chip, state: DebuggerState, session: CC254xSession,
        counting: CountingTransport
    ) -> Pass {
        let image = Self.image(for: chip, pass: number)
        let written = chip.lockBits?.lowerBound ?? chip.flashSize
        let start = MonotonicClock.now
        counting.reset()
        session.framing = framing
        var step = "erasing"
        func finished(_ outcome: Outcome) -> Pass {
            Pass(
                framing: framing, outcome: outcome, seconds: MonotonicClock.now - start,
                transfers: counting.statistics.transfers, bytesWritten: written)
        }
        do throws(DebuggerError) {
            progress("\(framing.rawValue): erasing", nil)
            _ = try session.chipErase(targetID: state.targetID)
            step = "writing"
            let plan: FlashPlan
            do { plan = try FlashPlan(image: image, chip: chip, allowLastPage: true) } catch {
                return finished(.imageRefused(error.description))
            }
            try session.program(plan) { progress("\(framing.rawValue): writing", $0) }
            step = "reading back"
            let read = try session.readFlash(0..<written) { progress("\(framing.rawValue): reading back", $0) }
            let expected = image.bytes(in: 0..<written, fill: 0xFF)
            if let offset = zip(read, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                return finished(.readBackDiffers(address: offset, wrote: expected[offset], read: read[offset]))
            }
            // Where the CRC cannot see the flash (the CC243x) the read-back above was the check.
            if VerifyMode.crc.effective(on: chip) == .crc {
                step = "CRC verify"
                try session.verifyCRC(image) { progress("\(framing.rawValue): CRC verify", $0) }
            }
            return finished(.works)
        } catch {
            return finished(.failed(step: step, error: error))
        }
    }
}

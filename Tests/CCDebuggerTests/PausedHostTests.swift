import CCDebuggerEmulator
import IntelHex
import TargetData
import TestSupport
import Testing

@testable import CCDebugger

/// A host paused past a poll's deadline (SIGSTOP, a laptop's sleep, a starved process) must not
/// fail an operation the chip finished meanwhile: the chip's answer to a poll asked before the
/// deadline is never the last word. Found by the nemesis suite on CI (a bench paused for 4 s
/// while its flash write was being polled gave up on the write with "stayed busy"). Here every
/// USB transfer takes 100 s of the session's clock, so every answer arrives long after every
/// deadline; no test sleeps.
struct PausedHostTests {
    /// The session's clock, moved on by each transfer through `SlowHost`.
    final class HostClock: @unchecked Sendable {
        var now = 1_000.0
    }

    /// A transport whose host is paused for `step` seconds in every transfer.
    final class SlowHost: DebuggerTransport {
        let inner: EmulatedDebugger
        let clock: HostClock
        let step: Double
        var transfers = 0

        init(_ inner: EmulatedDebugger, clock: HostClock, step: Double = 100) {
            self.inner = inner
            self.clock = clock
            self.step = step
        }

        func passes() {
            transfers += 1
            clock.now += step
        }

        func controlIn(request: UInt8, value: UInt16, index: UInt16, length: Int, timeoutMilliseconds: Int)
            throws(TransportError) -> [UInt8]
        {
            defer { passes() }
            return try inner.controlIn(
                request: request, value: value, index: index, length: length, timeoutMilliseconds: timeoutMilliseconds)
        }

        func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], timeoutMilliseconds: Int)
            throws(TransportError)
        {
            defer { passes() }
            try inner.controlOut(
                request: request, value: value, index: index, data: data, timeoutMilliseconds: timeoutMilliseconds)
        }

        func bulkOut(_ data: [UInt8], timeoutMilliseconds: Int) throws(TransportError) {
            defer { passes() }
            try inner.bulkOut(data, timeoutMilliseconds: timeoutMilliseconds)
        }

        func bulkIn(length: Int, timeoutMilliseconds: Int) throws(TransportError) -> [UInt8] {
            defer { passes() }
            return try inner.bulkIn(length: length, timeoutMilliseconds: timeoutMilliseconds)
        }
    }

    /// One part per write path: the DMA burst, 512-byte blocks through XDATA, the older register map.
    static let parts = ["CC2541F256", "CC2543F32", "CC2510F32"]

    /// A session on `part` through a slow host, connected.
    static func session(_ part: EmulatedPart, _ debugger: EmulatedDebugger) throws -> (
        CC254xSession, SlowHost, UInt16, ChipIdentity
    ) {
        let clock = HostClock()
        let host = SlowHost(debugger, clock: clock)
        let session = CC254xSession(transport: host, chips: try BundledData.boards().chips)
        session.clock = { clock.now }
        if part.hasOlderRegisterMap { session.assumedFlashSize = part.flashSize }
        let state = try session.open()
        return (session, host, state.targetID, try session.connect(targetID: state.targetID))
    }

    @Test(arguments: parts)
    func anEraseThatFinishesWhileTheHostSleepsIsNotFailed(name: String) throws {
        let part = try #require(EmulatedPart.named(name))
        let debugger = EmulatedDebugger(chip: EmulatedChip(part: part))
        debugger.chip!.flash = [UInt8](repeating: 0x5A, count: part.flashSize)
        // Busy in the answer to the first status poll, done by the second.
        debugger.chip!.busyPolls = 1
        let (session, _, targetID, _) = try Self.session(part, debugger)
        #expect(!(try session.chipErase(targetID: targetID)).locked)
        #expect(debugger.chip!.flash.allSatisfy { $0 == 0xFF })
    }

    @Test(arguments: parts)
    func writesAndCRCsThatFinishWhileTheHostSleepsAreNotFailed(name: String) throws {
        let part = try #require(EmulatedPart.named(name))
        let debugger = EmulatedDebugger(chip: EmulatedChip(part: part))
        // Each write busy in its own answer and the first poll's, done by the second; the CRC
        // DMA likewise.
        debugger.chip!.busyPolls = 3
        debugger.chip!.dmaBusyReads = 2
        let (session, _, _, _) = try Self.session(part, debugger)
        let image = try ChipFamilyTests.image(for: part)
        try session.program(try FlashPlan(image: image, chip: try BundledData.chip(part.name)))
        try session.verifyCRC(image)
        #expect(debugger.chip!.flash == image.bytes(in: 0..<part.flashSize, fill: 0xFF))
    }

    /// The bound still holds: a chip that never finishes is given up on by the first poll asked
    /// after the deadline, not after ten thousand.
    @Test(arguments: parts)
    func aChipThatNeverFinishesIsStillGivenUpOn(name: String) throws {
        let part = try #require(EmulatedPart.named(name))
        let stuck = EmulatedDebugger(chip: EmulatedChip(part: part))
        stuck.chip!.flashStuckBusy = true
        let (session, host, targetID, identity) = try Self.session(part, stuck)
        let plan = try FlashPlan(image: try ChipFamilyTests.image(for: part), chip: try BundledData.chip(part.name))
        _ = try session.chipErase(targetID: targetID)
        _ = identity
        let before = host.transfers
        #expect {
            try session.program(plan)
        } throws: { error in
            guard case .flashBusy = error as? DebuggerError else { return false }
            return true
        }
        // The write, its first answer, then one poll asked before the deadline and one after.
        #expect(host.transfers - before <= 12, "\(host.transfers - before) transfers")

        let erasing = EmulatedDebugger(chip: EmulatedChip(part: part))
        erasing.chip!.busyPolls = 1_000_000
        let (eraseSession, eraseHost, eraseTarget, _) = try Self.session(part, erasing)
        let beforeErase = eraseHost.transfers
        #expect(throws: DebuggerError.eraseTimeout) { try eraseSession.chipErase(targetID: eraseTarget) }
        #expect(eraseHost.transfers - beforeErase <= 8, "\(eraseHost.transfers - beforeErase) transfers")
    }

    /// A CRC DMA that never finishes is given up on the same way (found missing by a review).
    @Test(arguments: parts)
    func aCRCThatNeverFinishesIsStillGivenUpOn(name: String) throws {
        let part = try #require(EmulatedPart.named(name))
        let debugger = EmulatedDebugger(chip: EmulatedChip(part: part))
        let (session, host, _, _) = try Self.session(part, debugger)
        let image = try ChipFamilyTests.image(for: part)
        try session.program(try FlashPlan(image: image, chip: try BundledData.chip(part.name)))
        debugger.chip!.dmaBusyReads = 1_000_000
        let before = host.transfers
        #expect {
            try session.verifyCRC(image)
        } throws: { error in
            guard case .dmaTimeout = error as? DebuggerError else { return false }
            return true
        }
        #expect(host.transfers - before <= 8, "\(host.transfers - before) transfers")
    }
}

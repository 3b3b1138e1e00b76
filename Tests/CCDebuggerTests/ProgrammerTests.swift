import CCDebuggerEmulator
import FirmwareTemplate
import Foundation
import IntelHex
import TestSupport
import Testing

@testable import CCDebugger

/// The chip facts ccbeacon ships (boards/chips.json).
let cc2541 = try! BundledData.chip("CC2541F256")

/// A small program: code at 0, a table at 0x7F00, data in bank 2 (0x10000+).
func sampleImage() throws -> MemoryImage {
    var image = try MemoryImage(bytes: (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }, at: 0)
    try image.write((0..<38).map { UInt8($0) }, at: 0x7F00)
    try image.write((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 13) }, at: 0x10000)
    return image
}

/// Opens and connects, then runs the flash programmer (erase, program, CRC verify; no reset).
func burn(_ image: MemoryImage, on debugger: EmulatedDebugger) throws -> CC254xSession {
    let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
    let state = try session.open()
    let identity = try session.connect(targetID: state.targetID)
    do {
        _ = try FlashProgrammer(session: session).flash(
            image, targetID: state.targetID, identity: identity, options: FlashOptions(resetToRun: false))
    } catch .debugger(let error) {
        throw error  // the tests expect the debugger's own error
    } catch .flashChanged(let error, _) {
        throw error
    }
    return session
}

struct ProgrammerTests {
    @Test func identifiesTheDebuggerAndTheChip() throws {
        let debugger = EmulatedDebugger()
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        #expect(state == DebuggerState(targetID: 0x2541, firmwareID: 0x05CC, firmwareRevision: 0x0044))
        let chip = try session.connect(targetID: state.targetID)
        #expect(
            chip
                == ChipIdentity(
                    chipID: 0x41, revision: 0x13, flashSizeCode: 4, flashSize: 256 * 1024, ramSize: 8192, locked: false)
        )
        #expect(try session.primaryAddress(chip: cc2541) == [0x00, 0x12, 0x4B, 0x00, 0x25, 0x41])
    }

    @Test(arguments: [0, 1, 3])
    func erasesProgramsVerifiesAndReadsBack(busyPolls: Int) throws {
        let debugger = EmulatedDebugger()
        debugger.chip!.busyPolls = busyPolls
        let image = try sampleImage()
        let session = try burn(image, on: debugger)
        let flash = debugger.chip!.flash
        for segment in image.segments {
            #expect(Array(flash[segment.range]) == segment.bytes)
        }
        #expect(flash[3000..<0x7F00].allSatisfy { $0 == 0xFF })
        let read = try session.readFlash(0..<0x12000)
        #expect(read == image.bytes(in: 0..<0x12000, fill: 0xFF))
        try session.resetAndRun()
        #expect(debugger.chip!.halted == false)
    }

    /// A flash that fails once lock bits clearing DBGLOCK may be written says the chip may lock at
    /// its next reset (`locksAtReset`), and only then: the image's own bits or `lockDebug`'s,
    /// failing in verification, or once the last block's write (the top of flash) has started;
    /// not a failure before that write starts (on the burst path a block's write starts one block
    /// after it is handed over), nor an image that locks nothing. `stuck`: verification fails
    /// (a bad cell); otherwise the first write never ends (the emulator has written its block by
    /// then). `locked`: what the chip is after a reset.
    @Test(arguments: [
        (
            chip: "CC2541F256", imageLocks: true, lockDebug: false, stuck: true, blocks: 3, locksAtReset: true,
            locked: true
        ),
        (
            chip: "CC2541F256", imageLocks: false, lockDebug: true, stuck: true, blocks: 3, locksAtReset: true,
            locked: true
        ),
        (
            chip: "CC2541F256", imageLocks: false, lockDebug: false, stuck: true, blocks: 3, locksAtReset: false,
            locked: false
        ),
        (
            chip: "CC2541F256", imageLocks: true, lockDebug: false, stuck: false, blocks: 3, locksAtReset: false,
            locked: false
        ),
        (
            chip: "CC2541F256", imageLocks: true, lockDebug: false, stuck: false, blocks: 2, locksAtReset: false,
            locked: false
        ),
        (
            chip: "CC2541F256", imageLocks: true, lockDebug: false, stuck: false, blocks: 1, locksAtReset: true,
            locked: true
        ),
        (
            chip: "CC2543F32", imageLocks: true, lockDebug: false, stuck: false, blocks: 2, locksAtReset: false,
            locked: false
        ),
        (
            chip: "CC2543F32", imageLocks: true, lockDebug: false, stuck: false, blocks: 1, locksAtReset: true,
            locked: true
        ),
        (
            chip: "CC2543F32", imageLocks: true, lockDebug: false, stuck: true, blocks: 2, locksAtReset: true,
            locked: true
        ),
    ])
    func aFailureOnceTheLockMayBeWrittenSaysSo(
        chip: String, imageLocks: Bool, lockDebug: Bool, stuck: Bool, blocks: Int, locksAtReset: Bool, locked: Bool
    ) throws {
        let part = try #require(EmulatedPart.named(chip))
        let debugger = EmulatedDebugger(chip: EmulatedChip(part: part))
        let top = part.flashSize - 1
        // Up to three blocks; the lock bits, at the top of flash, are written with the last.
        var image = blocks > 1 ? try MemoryImage(bytes: [1, 2, 3, 4], at: 0) : try MemoryImage(bytes: [0xFF], at: top)
        if blocks > 2 { try image.write([5, 6], at: 0x1000) }
        if imageLocks { try image.write([0x7F], at: top) }
        if stuck {
            debugger.chip!.stuckAtZero[2] = 0x01
        } else {
            debugger.chip!.flashStuckBusy = true
        }
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        let identity = try session.connect(targetID: state.targetID)
        let options = FlashOptions(verify: .read, allowLastPage: true, lockDebug: lockDebug)
        #expect {
            _ = try FlashProgrammer(session: session).flash(
                image, targetID: state.targetID, identity: identity, options: options)
        } throws: { error in
            guard case .flashChanged(_, let said) = error as? FlashError else { return false }
            return said == locksAtReset
                && (error as? FlashError)?.description.hasSuffix(FlashError.mayLockAtReset) == locksAtReset
        }
        try session.resetAndRun()
        _ = try session.open()
        #expect(try session.connect(targetID: state.targetID).locked == locked)
    }

    @Test func verifyFindsACorruptedCell() throws {
        let debugger = EmulatedDebugger()
        let image = try sampleImage()
        // A cell whose lowest set bit (in the image's byte there) is stuck at 0.
        let address = 0x10123
        let byte = try #require(image[address])
        try #require(byte != 0)
        debugger.chip!.stuckAtZero[address] = byte & (~byte &+ 1)
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        _ = try session.connect(targetID: state.targetID)
        _ = try session.chipErase(targetID: state.targetID)
        try session.program(try FlashPlan(image: image, chip: cc2541))
        // Named within the 4 KiB the CRC covered.
        #expect(throws: DebuggerError.verifyMismatch(in: 0x10000..<0x11000)) { try session.verifyCRC(image) }
        #expect(try session.readFlash(address..<(address + 1)) == [byte & ~(byte & (~byte &+ 1))])
    }

    /// The message names what was compared: the CRC covers the whole blocks the image touches (a
    /// corruption at 0x100 was once reported "in the 1 KiB at 0x2B", which the CRC did not cover
    /// as said), and a full read finds the very byte.
    @Test func mismatchMessagesNameWhatWasCompared() throws {
        let image = try MemoryImage(bytes: (0..<0x800).map { UInt8(truncatingIfNeeded: $0 | 1) }, at: 0x2B)
        let debugger = EmulatedDebugger()
        let session = try burn(image, on: debugger)
        debugger.chip!.flash[0x100] ^= 0x01
        var message = ""
        do { try session.verifyCRC(image) } catch { message = error.description }
        #expect(
            message
                == "verification failed: flash differs from the image somewhere in 0x0-0xBFF (the chip's CRC over those 3072 bytes did not match)"
        )
        do { try session.verifyRead(image) } catch { message = error.description }
        #expect(message == "verification failed: flash differs from the image at 0x100")
    }

    /// Per KiB, proven framing: 3 OUT + 1 IN to program (the burst alone in its transfer);
    /// packed: 1 + 1. The reference client (§8) takes 6 to program and 9 to CRC-verify.
    @Test(arguments: [(USBFraming.proven, 4.1), (.packed, 2.1)])
    func skipsErasedBlocksAndCountsFarFewerTransfersThanTheReferenceClient(framing: USBFraming, perKiB: Double)
        throws
    {
        // A dense 64 KiB image: every block must be written.
        let image = try MemoryImage(bytes: (0..<0x10000).map { UInt8(truncatingIfNeeded: $0 * 31 + 7) }, at: 0)
        let debugger = EmulatedDebugger()
        debugger.chip!.busyPolls = 0
        let counting = CountingTransport(debugger)
        let session = CC254xSession(transport: counting, chips: try BundledData.boards().chips)
        session.framing = framing
        let state = try session.open()
        _ = try session.connect(targetID: state.targetID)
        _ = try session.chipErase(targetID: state.targetID)
        counting.reset()
        try session.program(try FlashPlan(image: image, chip: cc2541))
        let program = counting.statistics
        counting.reset()
        try session.verifyCRC(image)
        let verify = counting.statistics
        #expect(Double(program.transfers) / 64 <= perKiB)
        #expect(Double(verify.transfers) / 64 <= 2.1)
        #expect(Double(program.transfers + verify.transfers) / 64 <= (6 + 9) / 2)

        // A sparse image: only blocks that hold data are written.
        var sparse = MemoryImage()
        try sparse.write([1, 2, 3], at: 0x100)
        try sparse.write([4], at: 0x3E000)
        #expect(try FlashPlan(image: sparse, chip: cc2541).blocks.map(\.address) == [0x000, 0x3E000])
    }

    @Test func plansRefuseOversizedImagesAndTheLockPage() throws {
        var tooBig = MemoryImage()
        try tooBig.write([1], at: 0x40000)
        #expect(throws: FlashPlanError.tooLarge(end: 0x40001, flashSize: 0x40000)) {
            try FlashPlan(image: tooBig, chip: cc2541)
        }
        var lockPage = MemoryImage()
        try lockPage.write([0x7F], at: 0x3FFFF)
        #expect(throws: FlashPlanError.lastPage(address: 0x3FFFF)) { try FlashPlan(image: lockPage, chip: cc2541) }
        #expect(try FlashPlan(image: lockPage, chip: cc2541, allowLastPage: true).blocks.count == 1)
    }

    /// The CC2430/31 keep no lock bits in flash, but their last page holds the address given them:
    /// an image with data there (a dump of another chip, say) is refused as on a CC2541, saying
    /// what the page holds; a CC2510's last page holds nothing of ours and is taken.
    @Test func theLastPageIsGuardedWhereverItHoldsSomethingOfTheChips() throws {
        let cc2430 = try BundledData.chip("CC2430F64")
        var dump = MemoryImage()
        try dump.write([0xDD, 0xCC, 0xBB, 0xAA, 0x00, 0x4B, 0x12, 0x00], at: 0xFFF8)
        #expect(throws: FlashPlanError.lastPage(address: 0xFFF8, holdsLockBits: false)) {
            try FlashPlan(image: dump, chip: cc2430)
        }
        #expect(
            FlashPlanError.lastPage(address: 0xFFF8, holdsLockBits: false).description
                == "the image has data at 0xFFF8, in the last flash page, which holds the secondary address; writing it changes the address the chip keeps there"
        )
        #expect(try FlashPlan(image: dump, chip: cc2430, allowLastPage: true).blocks.count == 1)
        var top = MemoryImage()
        try top.write([1], at: 0x7FFF)
        #expect(try FlashPlan(image: top, chip: try BundledData.chip("CC2510F32")).blocks.count == 1)
    }

    @Test func lockedChipIsReportedAndAnEraseUnlocksIt() throws {
        let debugger = EmulatedDebugger()
        debugger.chip!.flash[0x100] = 0x42
        debugger.chip!.setDebugLockBit()
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        #expect(try session.connect(targetID: state.targetID).locked)
        let identity = try session.chipErase(targetID: state.targetID)
        #expect(!identity.locked)
        #expect(debugger.chip!.flash[0x100] == 0xFF)
    }

    @Test func aLockedPageAbortsTheWrite() throws {
        let debugger = EmulatedDebugger()
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        _ = try session.connect(targetID: state.targetID)
        _ = try session.chipErase(targetID: state.targetID)
        debugger.chip!.flash[0x3FFF0] = 0xFE  // page 0 write-protected (as firmware could leave it)
        let image = try MemoryImage(bytes: [1, 2, 3, 4], at: 0)
        #expect(throws: DebuggerError.writeAborted(address: 0)) {
            try session.program(try FlashPlan(image: image, chip: cc2541))
        }
    }

    @Test func faultsGiveTheirErrorsAndNeverSuccess() throws {
        let image = try sampleImage()
        // No target.
        let empty = EmulatedDebugger(chip: nil)
        let session = CC254xSession(transport: empty, chips: try BundledData.boards().chips)
        let state = try session.open()
        #expect(state.targetID == 0)
        #expect(throws: DebuggerError.noTarget) { try session.connect(targetID: state.targetID) }
        // Unplugged in the middle of programming.
        let unplugged = EmulatedDebugger()
        unplugged.faults.unplugAfterTransfers = 30
        #expect { try burn(image, on: unplugged) } throws: { error in
            guard case .transport(.noDevice, _) = error as? DebuggerError else { return false }
            return true
        }
        // One transfer times out.
        let slow = EmulatedDebugger()
        slow.faults.timeoutAtTransfer = 12
        #expect { try burn(image, on: slow) } throws: { error in
            guard case .transport(.timeout, _) = error as? DebuggerError else { return false }
            return true
        }
        // The flash controller never finishes.
        let stuck = EmulatedDebugger()
        stuck.chip!.flashStuckBusy = true
        let stuckSession = CC254xSession(transport: stuck, chips: try BundledData.boards().chips)
        stuckSession.maximumPolls = 5
        let stuckState = try stuckSession.open()
        _ = try stuckSession.connect(targetID: stuckState.targetID)
        #expect(throws: DebuggerError.flashBusy(address: 0)) {
            try stuckSession.program(try FlashPlan(image: image, chip: cc2541))
        }
        // Still locked after an erase (erase never completes within the bound).
        let stubborn = EmulatedDebugger()
        stubborn.chip!.setDebugLockBit()
        stubborn.chip!.busyPolls = 1000
        let stubbornSession = CC254xSession(transport: stubborn, chips: try BundledData.boards().chips)
        stubbornSession.maximumErasePolls = 10
        let stubbornState = try stubbornSession.open()
        #expect(throws: DebuggerError.eraseTimeout) { try stubbornSession.chipErase(targetID: stubbornState.targetID) }
    }
}

@Suite(.enabled(if: SharedFixtures.available, "needs ../shared/corpus"))
struct CorpusProgrammingTests {
    /// Real images, banked code included, through erase → program → CRC verify → read back.
    @Test(arguments: [
        "18_TI-BLE140-CC2541_SmartRF_HostTestRelease_All.hex", "01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex",
        "34_google-UriBeacon-SimpleBLEBroadcaster-CC2541.hex",
    ])
    func burnsARealImage(name: String) throws {
        let image = try SharedFixtures.corpusMemory(name)
        let debugger = EmulatedDebugger()
        let session = try burn(image, on: debugger)
        let end = image.endAddress!
        #expect(try session.readFlash(0..<end) == image.bytes(in: 0..<end, fill: 0xFF))
    }
}

struct LastPageTests {
    @Test func secondaryAddressAndDebugLockAreWrittenAndReadBack() throws {
        let debugger = EmulatedDebugger()
        let image = try FlashPlan.withLastPage(
            try sampleImage(), chip: cc2541, secondaryAddress: [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56], lockDebug: true)
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        _ = try session.connect(targetID: state.targetID)
        #expect(try session.secondaryAddress(chip: cc2541) == nil)
        _ = try session.chipErase(targetID: state.targetID)
        try session.program(try FlashPlan(image: image, chip: cc2541, allowLastPage: true))
        try session.verifyCRC(image)
        try session.verifyRead(image)
        #expect(try session.secondaryAddress(chip: cc2541) == [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56])
        #expect(Array(debugger.chip!.flash[0x3FFEA..<0x3FFF0]) == [0x56, 0x34, 0x12, 0xEE, 0xFF, 0xC0])
        try session.resetAndRun()
        // After the next reset into debug mode the chip reports itself locked.
        #expect(try session.connect(targetID: state.targetID).locked)
        #expect(throws: FlashPlanError.badAddressLength(5, expected: 6)) {
            try FlashPlan.withLastPage(
                MemoryImage(), chip: cc2541, secondaryAddress: [1, 2, 3, 4, 5], lockDebug: false)
        }
    }

    /// `--lock-debug` over an image that holds the lock bits itself (a dump, `--allow-last-page`)
    /// clears DBGLOCK and keeps the image's page write-protect bits; before, every other bit was
    /// set back to 1, unprotecting the pages the image protects. The secondary address given
    /// replaces the image's own (what `--mac` is asked for).
    @Test func theDebugLockKeepsTheImagesOwnLockBits() throws {
        let lockBits = try #require(cc2541.lockBits)
        var image = try MemoryImage(bytes: [1, 2, 3, 4], at: 0)
        var protect = [UInt8](repeating: 0xFF, count: lockBits.count)
        protect[0] = 0xFE  // page 0 write-protected
        protect[protect.count - 1] = 0xBF  // the last page's neighbour protected, DBGLOCK still 1
        try image.write(protect, at: lockBits.lowerBound)
        let place = try #require(cc2541.secondaryAddress)
        try image.write([0x66, 0x55, 0x44, 0x33, 0x22, 0x11], at: place.lowerBound)
        let planned = try FlashPlan.withLastPage(
            image, chip: cc2541, secondaryAddress: [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56], lockDebug: true)
        var expected = protect
        expected[expected.count - 1] = 0x3F
        #expect(planned.bytes(in: lockBits) == expected)
        #expect(planned.bytes(in: place) == [0x56, 0x34, 0x12, 0xEE, 0xFF, 0xC0])
        #expect(planned.bytes(in: 0..<4) == [1, 2, 3, 4])
    }

    @Test func readBackVerifyNamesTheExactAddress() throws {
        let debugger = EmulatedDebugger()
        let image = try sampleImage()
        let session = try burn(image, on: debugger)
        debugger.chip!.flash[0x10042] ^= 0x10
        #expect(throws: DebuggerError.verifyMismatch(in: 0x10042..<0x10043)) { try session.verifyRead(image) }
    }
}

/// The one flash programmer: its events in their documented order, every check before the chip
/// changes, and the last page as the options say.
struct FlashProgrammerTests {
    /// The events of a job with progress collapsed: each kind once per run of equal kinds.
    static func kinds(_ events: [FlashEvent]) -> [String] {
        var kinds: [String] = []
        for event in events {
            let kind: String
            switch event {
            case .started(_, _, let unlocked): kind = unlocked ? "started(unlocked)" : "started"
            case .erasing: kind = "erasing"
            case .erased: kind = "erased"
            case .programming: kind = "programming"
            case .identityReadBack: kind = "identityReadBack"
            case .verifying: kind = "verifying"
            case .verified(let mode): kind = "verified(\(mode.rawValue))"
            case .running: kind = "running"
            case .finished: kind = "finished"
            }
            if kinds.last != kind { kinds.append(kind) }
        }
        return kinds
    }

    static func connected(_ debugger: EmulatedDebugger) throws -> (FlashProgrammer, DebuggerState, ChipIdentity) {
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        return (FlashProgrammer(session: session), state, try session.connect(targetID: state.targetID))
    }

    @Test(arguments: [
        (
            VerifyMode.crc, true,
            [
                "started", "erasing", "erased", "programming", "identityReadBack", "verifying", "verified(crc)",
                "running",
                "finished",
            ]
        ),
        (
            VerifyMode.read, false,
            [
                "started", "erasing", "erased", "programming", "identityReadBack", "verifying", "verified(read)",
                "finished",
            ]
        ),
        (
            VerifyMode.none, true,
            ["started", "erasing", "erased", "programming", "identityReadBack", "running", "finished"]
        ),
    ])
    func eventsComeInTheDocumentedOrder(verify: VerifyMode, reset: Bool, expected: [String]) throws {
        let debugger = EmulatedDebugger()
        let (programmer, state, identity) = try Self.connected(debugger)
        var events: [FlashEvent] = []
        let result = try programmer.flash(
            try sampleImage(), targetID: state.targetID, identity: identity,
            options: FlashOptions(verify: verify, readBack: [0x7F00..<0x7F26], resetToRun: reset)
        ) { events.append($0) }
        #expect(Self.kinds(events) == expected)
        #expect(events.last == .finished(result))
        #expect(events.contains(.identityReadBack([0x7F00..<0x7F26])))
        let programmed = events.compactMap { if case .programming(let progress) = $0 { progress } else { nil } }
        #expect(programmed.count == result.report.blocksWritten)
        #expect(programmed.last.map { $0.done == $0.total } == true)
        #expect(debugger.chip!.halted == !reset)
    }

    /// A reset to run that fails at the end of the job is told as that, with what the job did:
    /// the chip holds the image, verified unless `VerifyMode.none` said not to, and is locked
    /// where it was asked to be — not "may be erased or partly written", which would have the
    /// user flash it again, and not "verified" where nothing was.
    @Test(arguments: [(false, VerifyMode.crc), (true, .crc), (false, .none), (true, .read)])
    func aResetToRunThatFailsAtTheEndKeepsTheImage(lockDebug: Bool, verify: VerifyMode) throws {
        let image = try sampleImage()
        let options = FlashOptions(verify: verify, lockDebug: lockDebug)
        // The transfers of a whole job: the last one is the reset to run.
        var total = 0
        for limit in 1... {
            let debugger = EmulatedDebugger()
            let (programmer, state, identity) = try Self.connected(debugger)
            debugger.faults.unplugAfterTransfers = limit
            if (try? programmer.flash(image, targetID: state.targetID, identity: identity, options: options)) != nil {
                total = limit
                break
            }
            try #require(limit < 10_000)
        }
        let debugger = EmulatedDebugger()
        let (programmer, state, identity) = try Self.connected(debugger)
        debugger.faults.timeoutAtTransfer = total
        var failure: FlashError?
        do {
            _ = try programmer.flash(image, targetID: state.targetID, identity: identity, options: options)
        } catch { failure = error }
        guard case .notStarted(.transport(.timeout, during: .resettingToRun), let result) = failure else {
            Issue.record("\(failure as Any)")
            return
        }
        #expect(result.report.verify == verify)
        #expect(result.debugLocked == lockDebug)
        let description = try #require(failure).description
        #expect(description.contains(verify == .none ? "written, not verified" : "written and verified"))
        #expect(description.contains("debug interface is locked") == lockDebug)
        #expect(!description.contains("may"), "\(description)")
        #expect(debugger.chip!.debugLocked == lockDebug)
        for segment in image.segments {
            #expect(Array(debugger.chip!.flash[segment.range]) == segment.bytes, "\(segment.start)")
        }
    }

    @Test func aLockedChipIsErasedFirstAndThenIdentified() throws {
        let debugger = EmulatedDebugger()
        debugger.chip!.setDebugLockBit()
        let (programmer, state, identity) = try Self.connected(debugger)
        #expect(identity.locked)
        var events: [FlashEvent] = []
        let result = try programmer.flash(
            try sampleImage(), targetID: state.targetID, identity: identity, options: FlashOptions()
        ) { events.append($0) }
        #expect(
            Self.kinds(events) == [
                "erasing", "erased", "started(unlocked)", "programming", "identityReadBack", "verifying",
                "verified(crc)",
                "running", "finished",
            ])
        #expect(result.unlockedByErase && result.chip.name == "CC2541F256")
        #expect(
            throws: FlashError.cannotPreserveOnLockedChip,
            performing: {
                let locked = EmulatedDebugger()
                locked.chip!.setDebugLockBit()
                let (programmer, state, identity) = try Self.connected(locked)
                _ = try programmer.flash(
                    try sampleImage(), targetID: state.targetID, identity: identity,
                    options: FlashOptions(secondaryAddress: .preserve))
            })
    }

    /// An image that does not fit is refused before the erase: the chip keeps what it had.
    @Test(arguments: [false, true])
    func aPlanThatCannotBeIsRefusedBeforeTheChipChanges(locked: Bool) throws {
        let debugger = EmulatedDebugger()
        debugger.chip!.flash[0x100] = 0x42
        if locked { debugger.chip!.setDebugLockBit() }
        let before = debugger.chip!.flash
        let (programmer, state, identity) = try Self.connected(debugger)
        var lastPage = MemoryImage()
        try lastPage.write([0], at: 0x3FFF0)
        var events: [FlashEvent] = []
        #expect(throws: FlashError.plan(.lastPage(address: 0x3FFF0))) {
            _ = try programmer.flash(lastPage, targetID: state.targetID, identity: identity, options: FlashOptions()) {
                events.append($0)
            }
        }
        #expect(events.isEmpty)
        #expect(debugger.chip!.flash == before)
    }

    @Test func theSecondaryAddressIsKeptWrittenAndReadBack() throws {
        let debugger = EmulatedDebugger()
        let address: [UInt8] = [0xC0, 0x01, 0x02, 0x03, 0x04, 0x05]
        var events: [FlashEvent] = []
        do {
            let (programmer, state, identity) = try Self.connected(debugger)
            let written = try programmer.flash(
                try sampleImage(), targetID: state.targetID, identity: identity,
                options: FlashOptions(secondaryAddress: .write(address), lockDebug: false)
            ) { events.append($0) }
            #expect(written.secondaryAddress == address)
            #expect(events.contains(.identityReadBack([cc2541.secondaryAddress!])))
        }
        let (programmer, state, identity) = try Self.connected(debugger)
        let kept = try programmer.flash(
            try sampleImage(), targetID: state.targetID, identity: identity,
            options: FlashOptions(secondaryAddress: .preserve))
        #expect(kept.secondaryAddress == address)
        #expect(Array(debugger.chip!.flash[cc2541.secondaryAddress!]) == address.reversed())
    }
}

/// Both USB framings against both debugger firmware models (issue 27): the proven framing — a
/// BURST_WRITE alone in its bulk OUT, as every known client sends it — writes the image on a
/// firmware that takes bursts only alone and on one that takes them packed; the packed framing
/// only on the latter, and on the former it fails as a stalled transfer, never a wrong image.
struct USBFramingTests {
    @Test(arguments: [
        (USBFraming.proven, false), (USBFraming.proven, true), (USBFraming.packed, false), (USBFraming.packed, true),
    ])
    func eachFramingAgainstEachFirmwareModel(framing: USBFraming, burstsOnlyAlone: Bool) throws {
        let image = try sampleImage()
        let debugger = EmulatedDebugger()
        debugger.takesBurstsOnlyAlone = burstsOnlyAlone
        debugger.logging = true
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        session.framing = framing
        let state = try session.open()
        let identity = try session.connect(targetID: state.targetID)
        let result = Result { () throws(FlashError) in
            try FlashProgrammer(session: session).flash(
                image, targetID: state.targetID, identity: identity, options: FlashOptions(resetToRun: false))
        }
        if framing == .packed, burstsOnlyAlone {
            guard case .failure(.flashChanged(.transport(.pipe, _), _)) = result else {
                Issue.record("a packed burst on a firmware that takes bursts only alone: \(result)")
                return
            }
            return
        }
        _ = try result.get()
        let chip = try #require(debugger.chip)
        for segment in image.segments {
            #expect(Array(chip.flash[segment.range]) == segment.bytes, "at \(segment.start)")
        }
        // Every burst's transfer: alone with the proven framing; packed with the other.
        let bursts = debugger.log.filter { $0.kind == "out" && $0.bytes.contains(0xEE) && $0.bytes.count >= 1027 }
        #expect(bursts.count == (try FlashPlan(image: image, chip: cc2541)).blocks.count, "one per KiB block written")
        let alone = bursts.allSatisfy { $0.bytes.count == 1027 && $0.bytes.prefix(2) == [0xEE, 0x84] }
        #expect(alone == (framing == .proven))
    }
}

/// CRC verify takes one 4 KiB chunk per round trip: the image verifies and a wrong byte is found
/// in its chunk, also when the CRC DMA is not done yet at the first read (then polled, one more
/// round trip per read that finds it running — never more).
struct CRCChunkTests {
    @Test(arguments: [0, 1, 3])
    func pairsVerifyAndFindAWrongByte(busyReads: Int) throws {
        // 4 segments' worth: 3 chunks in bank 0, 2 in bank 1 (an odd count and a bank switch).
        var image = try MemoryImage(bytes: (0..<0x3000).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 3) }, at: 0)
        try image.write((0..<0x1800).map { UInt8(truncatingIfNeeded: $0 &* 11) }, at: 0x8000)
        let debugger = EmulatedDebugger()
        let session = try burn(image, on: debugger)
        let chip = try #require(debugger.chip)
        chip.dmaBusyReads = busyReads
        let counting = CountingTransport(debugger)
        let counted = CC254xSession(transport: counting, chips: session.chips)
        _ = try counted.connect(targetID: try counted.open().targetID)
        counting.reset()
        try counted.verifyCRC(image)
        #expect(counting.statistics.transfers == 5 * 2 * (1 + busyReads), "5 chunks, each polled \(busyReads) times")
        chip.stuckAtZero[0x8123] = 0xFF
        chip.flash[0x8123] = 0
        #expect(throws: DebuggerError.verifyMismatch(in: 0x8000..<0x9000)) { try counted.verifyCRC(image) }
    }

    /// A verify covers the whole 1 KiB blocks programming wrote: an image of many small segments
    /// (a vector table, as TI's samples have) costs one CRC round trip per 4 KiB, not per segment,
    /// and a byte in a gap that is not 0xFF on the chip is found by either mode (programming
    /// leaves gaps erased).
    @Test func coversWholeBlocksNotSegments() throws {
        var image = MemoryImage()
        for vector in stride(from: 0x03, to: 0x83, by: 0x08) { try image.write([0x02, 0x12, 0x34], at: vector) }
        try image.write((0..<0x1F00).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }, at: 0x100)
        try image.write([0xA5], at: 0x2F00)
        #expect(image.segments.count == 18)
        #expect(CC254xSession.verifyChunks(image) == [0x0000..<0x1000, 0x1000..<0x2000, 0x2C00..<0x3000])
        let debugger = EmulatedDebugger()
        let session = try burn(image, on: debugger)
        let counting = CountingTransport(debugger)
        let counted = CC254xSession(transport: counting, chips: session.chips)
        _ = try counted.connect(targetID: try counted.open().targetID)
        counting.reset()
        try counted.verifyCRC(image)
        #expect(counting.statistics.transfers == 3 * 2)
        let chip = try #require(debugger.chip)
        chip.flash[0x0090] = 0x00  // between the vectors and the code: not in the image
        #expect(throws: DebuggerError.verifyMismatch(in: 0x0000..<0x1000)) { try counted.verifyCRC(image) }
        // The read verify compares the same bytes (one rule for both modes) and names the byte.
        #expect(throws: DebuggerError.verifyMismatch(in: 0x0090..<0x0091)) { try counted.verifyRead(image) }
    }
}

/// Programming's first block has no FCTL read: no flash write runs before the second burst.
struct FirstBlockTests {
    @Test(arguments: USBFraming.allCases)
    func firstBlockSendsNoRead(framing: USBFraming) throws {
        let image = try MemoryImage(bytes: (0..<0x800).map { UInt8(truncatingIfNeeded: $0 &* 3 &+ 1) }, at: 0)
        let debugger = EmulatedDebugger()
        let counting = CountingTransport(debugger)
        let session = CC254xSession(transport: counting, chips: try BundledData.boards().chips)
        session.framing = framing
        let state = try session.open()
        _ = try session.connect(targetID: state.targetID)
        _ = try session.chipErase(targetID: state.targetID)
        debugger.chip!.busyPolls = 0
        counting.reset()
        try session.program(try FlashPlan(image: image, chip: cc2541))
        // Set-up OUT; block 0: its OUT(s) without a read; block 1: its OUT(s) with the read, and
        // an IN; the last write: OUT + IN.
        let (first, second) = framing == .proven ? (2, 3 + 1) : (1, 1 + 1)
        #expect(counting.statistics.transfers == 1 + first + second + 2)
        #expect(Array(debugger.chip!.flash[0..<0x800]) == image.bytes(in: 0..<0x800, fill: 0xFF))
    }
}

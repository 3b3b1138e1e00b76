import Checksums
import HexText
public import IntelHex
public import TargetData

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the debugger reports about itself (GET_STATE).
public struct DebuggerState: Sendable, Equatable {
    /// Target ID the debugger detected (0x2541…), 0 when none.
    public var targetID: UInt16
    /// Debugger firmware ID (0x05CC on CC Debuggers).
    public var firmwareID: UInt16
    /// Debugger firmware revision.
    public var firmwareRevision: UInt16
}

/// What the chip reports once connected.
public struct ChipIdentity: Sendable, Equatable {
    /// CHIPID (0x41 CC2541, 0x8D CC2540).
    public var chipID: UInt8
    /// CHVER.
    public var revision: UInt8
    /// CHIPINFO0.FLASHSIZE as the chip reports it (0 when locked).
    public var flashSizeCode: UInt8
    /// The flash size that code means for the session's chip with this target ID, in bytes; 0
    /// when none of its chips has the code.
    public var flashSize: Int
    /// RAM size from CHIPINFO1, bytes.
    public var ramSize: Int
    /// True when the debug lock is set (only an erase helps).
    public var locked: Bool
}

extension ChipIdentity {
    /// The chip of `chips` this identity names on a debugger reporting `targetID`: by its
    /// FLASHSIZE code, or — on a chip that reports none — by the size the session was told
    /// (`CC254xSession.assumedFlashSize`, which `connect` put in `flashSize`). `nil` while locked.
    public func chip(targetID: UInt16, in chips: [Chip]) -> Chip? {
        guard !locked else { return nil }
        return Chip.reporting(targetID: targetID, flashSizeCode: flashSizeCode, flashSize: flashSize, in: chips)
    }
}

/// A flashing operation that failed, with what the user can do about it.
public enum DebuggerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A USB transfer failed.
    case transport(TransportError, during: DebuggerOperation)
    /// The debugger sees no target.
    case noTarget
    /// The target is not a CC2540/CC2541.
    case unsupportedTarget(UInt16, known: [String])
    /// The target does not answer in debug mode.
    case targetNotResponding(status: UInt8)
    /// The debug interface is locked.
    case targetLocked
    /// The chip erase did not finish in time.
    case eraseTimeout
    /// The chip is still locked after an erase.
    case stillLockedAfterErase
    /// The flash controller stayed busy.
    case flashBusy(address: Int)
    /// The flash controller aborted a write (locked page).
    case writeAborted(address: Int)
    /// The CRC DMA did not complete.
    case dmaTimeout(address: Int)
    /// Verification found different bytes in this range: a chunk whose CRC did not match (it
    /// starts where its segment or 1 KiB step starts, not at a KiB boundary), or the one byte a
    /// full read found different.
    case verifyMismatch(in: Range<Int>)
    /// The station's identity bytes read back differ from the image at this address.
    case identityMismatch(address: Int)
    /// The debug lock bits were written and read back, but after a reset the debug interface
    /// was not locked.
    case lockNotTaken
    /// A chip that does not report its size was told one (`CC254xSession.assumedFlashSize`) whose
    /// part has SRAM from `ramStart`, and the chip has none there: it is a smaller part.
    case flashSizeRefuted(chip: String, ramStart: Int)
    /// The chip does not report its flash size, and none was given (`CC254xSession.assumedFlashSize`).
    case flashSizeNotGiven(family: String)
    /// The flash size given (`CC254xSession.assumedFlashSize`) is none of the family's: it comes
    /// in `sizes` (bytes, smallest first).
    case flashSizeNotMade(given: Int, family: String, sizes: [Int])
    /// The flash size given disagrees with the one the chip reports.
    case flashSizeContradicted(given: Int, chip: String, reported: Int)
    /// A chip of a family the data knows whose size code (CHIPINFO0.FLASHSIZE) none of its parts
    /// has.
    case unknownPart(targetID: UInt16, flashSizeCode: UInt8)
    /// The last page of `chip` (whose size the user gave) holds data beside its secondary address:
    /// the chip may be larger, that page inside its firmware, and those bytes no address.
    case secondaryAddressDoubtful(chip: String)

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .transport(let error, let during): return "\(error) while \(during)"
        case .noTarget: return "the debugger sees no target chip"
        case .unsupportedTarget(let id, let known):
            return
                "the target is a CC\(HexText.digits(id)), not a \(known.isEmpty ? "chip of boards/chips.json" : known.joined(separator: "/"))"
        case .targetNotResponding(let status):
            return "the target does not answer in debug mode (status \(HexText.address(status)))"
        case .targetLocked: return "the target's debug interface is locked"
        case .lockNotTaken:
            return "the debug lock bits were written, but after a reset the debug interface was not locked"
        case .flashSizeNotGiven(let family):
            return "the \(family) does not report its flash size, and none was given"
        case .flashSizeNotMade(let given, let family, let sizes):
            return
                "a flash size of \(Chip.sizeText(given)) was given, but the \(family) comes in \(Chip.kibList(sizes)) KiB"
        case .flashSizeContradicted(let given, let chip, let reported):
            return
                "a flash size of \(Chip.sizeText(given)) was given, but the \(chip) reports \(Chip.sizeText(reported))"
        case .unknownPart(let targetID, let code):
            return
                "the target (ID \(HexText.address(targetID)), CHIPINFO0.FLASHSIZE \(code)) is none of the chips of boards/chips.json"
        case .secondaryAddressDoubtful(let chip):
            return
                "the last page of a \(chip) holds data beside its secondary address: the chip may be larger than the flash size given, and those bytes no address"
        case .flashSizeRefuted(let chip, let start):
            return
                "the target has no SRAM at \(HexText.address(start)), where a \(chip)'s starts: it is a smaller part than the flash size given"
        case .eraseTimeout: return "the chip erase did not finish within 8 s"
        case .stillLockedAfterErase: return "the target is still locked after a chip erase"
        case .flashBusy(let address): return "the flash controller stayed busy writing at \(hex(address))"
        case .writeAborted(let address):
            return "the flash controller aborted the write at \(hex(address)) (page locked?)"
        case .dmaTimeout(let address): return "the CRC DMA did not complete for \(hex(address))"
        case .verifyMismatch(let range) where range.count == 1:
            return "verification failed: flash differs from the image at \(hex(range.lowerBound))"
        case .verifyMismatch(let range):
            return
                "verification failed: flash differs from the image somewhere in \(hex(range.lowerBound))-\(hex(range.upperBound - 1)) (the chip's CRC over those \(range.count) bytes did not match)"
        case .identityMismatch(let address):
            return
                "verification failed: the identity bytes did not read back as written (flash differs from the image at \(hex(address)))"
        }
    }
}

/// Progress of a long operation, for bars and logs.
public struct FlashProgress: Sendable, Equatable {
    /// The phase.
    public enum Phase: String, Sendable {
        /// Erasing the flash.
        case erase
        /// Writing the image.
        case program
        /// Checking what was written (CRC or read-back).
        case verify
        /// Reading the flash out.
        case read
    }
    /// Which phase.
    public var phase: Phase
    /// Bytes done.
    public var done: Int
    /// Bytes in all.
    public var total: Int

    /// `done` of `total` bytes of `phase`.
    public init(phase: Phase, done: Int, total: Int) {
        self.phase = phase
        self.done = done
        self.total = total
    }
}

/// The flash blocks an image needs written: blocks of the chip's write size (`FlashWriting`) that
/// hold at least one byte other than 0xFF (an erased chip already reads 0xFF elsewhere).
public struct FlashPlan: Sendable, Equatable {
    /// The unit verification compares (`CC254xSession.verifiedSpans`): 1 KiB, a whole number of
    /// write blocks on every chip.
    public static let blockSize = 1024
    /// How the chip is written: the path and its block size.
    public var writing: FlashWriting
    /// (address, `writing.blockSize` bytes) in address order.
    public var blocks: [(address: Int, bytes: [UInt8])]
    /// The image the plan came from (for verification).
    public var image: MemoryImage

    /// Equal when the blocks are equal.
    public static func == (lhs: FlashPlan, rhs: FlashPlan) -> Bool {
        lhs.image == rhs.image && lhs.writing == rhs.writing && lhs.blocks.map(\.address) == rhs.blocks.map(\.address)
    }

    /// The image with the last page's secondary address (MSB first, as printed) and/or the debug
    /// lock bit set, ready for `FlashPlan(image:chip:allowLastPage: true)`: the address given
    /// replaces any the image holds there; the lock leaves the image's other lock bits as they are.
    public static func withLastPage(
        _ image: MemoryImage, chip: Chip, secondaryAddress: [UInt8]?, lockDebug: Bool
    ) throws(FlashPlanError) -> MemoryImage {
        var result = image
        if let secondaryAddress {
            guard let place = chip.secondaryAddress else { throw .noSecondaryAddress(chip: chip.name) }
            guard secondaryAddress.count == place.count else {
                throw .badAddressLength(secondaryAddress.count, expected: place.count)
            }
            try? result.write(secondaryAddress.reversed(), at: place.lowerBound)
        }
        // A chip whose lock byte is in the information page gets it written apart
        // (`CC254xSession.writeLockByte`).
        // The image's own lock bits (a dump's page write-protection) are kept: only DBGLOCK is
        // cleared.
        if lockDebug, let lockBits = chip.lockBits {
            var lock = result.bytes(in: lockBits, fill: 0xFF)
            lock[lock.count - 1] &= ~debugLockBit
            try? result.write(lock, at: lockBits.lowerBound)
        }
        return result
    }

    /// DBGLOCK in the last of a chip's lock bytes (`Chip.lockBits`, the CC253x/4x): 0 locks the
    /// debug interface from the next reset on.
    static let debugLockBit: UInt8 = 0x80

    /// Whether `image` clears DBGLOCK in `chip`'s lock bytes.
    static func clearsDebugLock(_ image: MemoryImage, chip: Chip) -> Bool {
        guard let lockBits = chip.lockBits, let last = image[lockBits.upperBound - 1] else { return false }
        return last & debugLockBit == 0
    }

    /// Plans `image` for `chip`; refuses data beyond the flash, and data in the last page unless
    /// `allowLastPage` where that page holds the lock bits or the secondary address (writing it by
    /// accident can lock the chip, or give it another chip's address).
    public init(image: MemoryImage, chip: Chip, allowLastPage: Bool = false) throws(FlashPlanError) {
        if let end = image.endAddress, end > chip.flashSize {
            throw .tooLarge(end: end, flashSize: chip.flashSize)
        }
        if !allowLastPage, chip.lockBits != nil || chip.secondaryAddress != nil,
            let inLastPage = image.segments.first(where: { $0.range.overlaps(chip.lastPageRange) })
        {
            throw .lastPage(
                address: max(inLastPage.start, chip.lastPageRange.lowerBound), holdsLockBits: chip.lockBits != nil,
                holdsAddress: chip.secondaryAddress != nil)
        }
        self.image = image
        writing = chip.flashWriting
        let blockSize = writing.blockSize
        var blocks: [(Int, [UInt8])] = []
        guard let end = image.endAddress else {
            self.blocks = []
            return
        }
        var address = 0
        while address < end {
            let bytes = image.bytes(in: address..<(address + blockSize), fill: 0xFF)
            if bytes.contains(where: { $0 != 0xFF }) { blocks.append((address, bytes)) }
            address += blockSize
        }
        self.blocks = blocks
    }
}

/// An image that cannot be flashed as it is.
public enum FlashPlanError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The image reaches beyond the flash.
    case tooLarge(end: Int, flashSize: Int)
    /// The image has data in the last page, which holds the chip's lock bits or its secondary
    /// address, or both.
    case lastPage(address: Int, holdsLockBits: Bool = true, holdsAddress: Bool = true)
    /// A secondary address of the wrong length.
    case badAddressLength(Int, expected: Int)
    /// A secondary address for a chip that has no place for one (no factory address either).
    case noSecondaryAddress(chip: String)

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .tooLarge(let end, let flashSize):
            return "the image reaches \(hex(end - 1)), beyond the chip's \(flashSize / 1024) KiB of flash"
        case .lastPage(let address, let lockBits, let secondary):
            let holds = [lockBits ? "the lock bits" : nil, secondary ? "the secondary address" : nil]
                .compactMap { $0 }.joined(separator: " and ")
            return
                "the image has data at \(hex(address)), in the last flash page, which holds \(holds); "
                + (lockBits ? "writing it can lock the chip" : "writing it changes the address the chip keeps there")
        case .badAddressLength(let count, let expected):
            return "the address has \(count) bytes; this chip's secondary address has \(expected)"
        case .noSecondaryAddress(let chip):
            return "the \(chip) has no IEEE address, and no place for a secondary one"
        }
    }
}

/// How debugger frames are laid out in bulk OUT transfers while programming.
public enum USBFraming: String, Sendable, CaseIterable {
    /// What every known client sends and real debuggers are known to take: a BURST_WRITE frame is
    /// the only frame of its transfer (../shared/docs/first-contact.md); other frames may share one.
    case proven
    /// Frames packed around the burst (start the previous block's write, arm the burst channel,
    /// BURST_WRITE the block, read FCTL — one transfer per block): fewer transfers, but no known
    /// client sends a frame after a burst's data, so it is unconfirmed on real hardware.
    case packed
}

/// How a burn checks the flash after programming, beyond the identity read-back every burn does.
public enum VerifyMode: String, Sendable, CaseIterable {
    /// The chip's CRC unit over every byte of the image.
    case crc
    /// Every byte read back.
    case read
    /// Nothing beyond the identity read-back.
    case none

    /// The mode that checks `chip`: `crc` is `read` on a chip whose flash the CRC DMA cannot see
    /// (`RegisterMap.verifiesByCRC`, the CC243x); reading back is the stronger check.
    public func effective(on chip: Chip?) -> VerifyMode {
        self == .crc && chip?.registerMap.verifiesByCRC == false ? .read : self
    }
}

/// What a finished burn did.
public struct BurnReport: Sendable, Equatable {
    /// Blocks written (of the chip's write block size, `FlashWriting.blockSize`).
    public var blocksWritten: Int
    /// Bytes written: the blocks times their size.
    public var bytesWritten: Int
    /// How the whole image was checked.
    public var verify: VerifyMode
    /// The ranges that were read back byte for byte and matched (merged, in address order).
    public var readBack: [Range<Int>]

    /// The read-back ranges as text, `0x7F00-0x7F2D,…` (END inclusive), or `none`.
    public var readBackText: String { BurnReport.describe(readBack) }

    /// `0x7F00-0x7F2D,0x7F30-0x7F33`: the ranges merged and ascending, each END inclusive, at
    /// least four upper-case hex digits — the form the ledger records (`Attempt.readBack`) — or
    /// `none`.
    public static func describe(_ ranges: [Range<Int>]) -> String {
        let merged = MemoryImage.merged(ranges)
        return merged.isEmpty
            ? "none"
            : merged.map {
                "\(HexText.address($0.lowerBound, width: 4))-\(HexText.address($0.upperBound - 1, width: 4))"
            }
            .joined(separator: ",")
    }
}

import HexText
public import IntelHex
public import TargetData

/// What a flash job does with the last page's secondary address.
public enum SecondaryAddressAction: Sendable, Equatable {
    /// Nothing: the chip erase clears it, unless the image itself holds bytes there.
    case leave
    /// Read it before the erase and write it back (nothing to keep on a chip whose address is
    /// erased; impossible on a debug-locked chip, which hides its flash).
    case preserve
    /// Write this address (MSB first, as printed).
    case write([UInt8])
}

/// How a flash job runs; every value has the default `ccbeacon flash` uses.
public struct FlashOptions: Sendable, Equatable {
    /// How the whole image is checked after programming.
    public var verify: VerifyMode = .crc
    /// Flash ranges read back byte for byte whatever `verify` says: the bytes that make a station
    /// what it is (payload, advertiser address, settings, OAD header). A CRC can be fooled (four
    /// stuck bits chosen well leave it unchanged); a byte comparison of these cannot.
    public var readBack: [Range<Int>] = []
    /// Whether the image may hold bytes in the last page (lock bits, secondary address).
    public var allowLastPage = false
    /// What happens to the secondary address.
    public var secondaryAddress: SecondaryAddressAction = .leave
    /// Whether the debug interface is locked at the end (only a chip erase undoes it).
    public var lockDebug = false
    /// Whether the target is reset to run at the end. Provisioning records the outcome first and
    /// resets afterwards.
    public var resetToRun = true
    /// The chips the image runs on (a station's: the chips of the templates it is a station of),
    /// when they are known (empty: any): any other target is refused — before it changes when its
    /// target ID already tells (`FlashError.notMadeFor`), or right after the erase that a
    /// debug-locked one needs to tell its part.
    public var madeFor: [Chip] = []

    /// The defaults.
    public init() {}

    /// Options with the given values, the rest defaults.
    public init(
        verify: VerifyMode = .crc, readBack: [Range<Int>] = [], allowLastPage: Bool = false,
        secondaryAddress: SecondaryAddressAction = .leave, lockDebug: Bool = false, resetToRun: Bool = true
    ) {
        self.verify = verify
        self.readBack = readBack
        self.allowLastPage = allowLastPage
        self.secondaryAddress = secondaryAddress
        self.lockDebug = lockDebug
        self.resetToRun = resetToRun
    }
}

/// What a flash job reports while it runs, in this order (as probe-rs's flashing events):
///
/// 1. `started` once, when the chip and the plan are settled and before the chip is changed;
/// 2. `erasing` progress, then `erased` (skipped when the caller erased the chip itself). On a
///    debug-locked chip these two come before `started`: the erase lifts the lock, and only then
///    can the chip tell which it is (`started` then says `unlockedByErase`);
/// 3. `programming` progress, once per 1 KiB block handed to the flash controller;
/// 4. `identityReadBack` with the ranges read back and found equal (maybe none);
/// 5. `verifying` progress, then `verified` (skipped with `VerifyMode.none`);
/// 6. `running` after the reset (only with `resetToRun`);
/// 7. `finished` with the report.
///
/// A failure ends the sequence where it happens (the error is thrown; no `finished`).
public enum FlashEvent: Sendable, Equatable {
    /// The job begins: the chip it was settled for, the blocks to write, and whether a chip erase
    /// was needed to lift a debug lock before the chip could be identified.
    case started(chip: String, blocks: Int, unlockedByErase: Bool)
    /// Chip-erase progress.
    case erasing(FlashProgress)
    /// The chip is erased.
    case erased
    /// Programming progress, after each block.
    case programming(FlashProgress)
    /// These ranges were read back and matched the image byte for byte.
    case identityReadBack([Range<Int>])
    /// Verification progress.
    case verifying(FlashProgress)
    /// The whole image verified this way.
    case verified(VerifyMode)
    /// The target was reset and runs.
    case running
    /// The job is done.
    case finished(FlashResult)
}

/// What a finished flash job did.
public struct FlashResult: Sendable, Equatable {
    /// The chip the image was written to.
    public var chip: Chip
    /// 1 KiB blocks written, identity bytes read back, verification.
    public var report: BurnReport
    /// The secondary address the chip now holds (written or kept), MSB first; nil when none was.
    public var secondaryAddress: [UInt8]?
    /// True when the chip was debug-locked and the chip erase unlocked it.
    public var unlockedByErase: Bool
    /// The debug interface was locked and read back locked after a reset: asked for
    /// (`FlashOptions.lockDebug`), or by the image's own lock bits (`--allow-last-page`).
    public var debugLocked = false
    /// The image's own bytes that the secondary address took the place of (kept, written, or —
    /// a chip with none to keep — left erased) where they differ from what the chip holds: the
    /// verification is of what was written, so these are the image's bytes it did not cover.
    public var imageBytesReplaced: [Range<Int>] = []
}

/// Why a flash job stopped.
public enum FlashError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The image does not fit the chip (checked before anything on the chip changes).
    case plan(FlashPlanError)
    /// The debugger or the chip failed before anything on the chip changed.
    case debugger(DebuggerError)
    /// The debugger or the chip failed once the chip erase had begun: the flash may be erased,
    /// partly written, or written and not verified. `locksAtReset`: lock bits that clear DBGLOCK
    /// may have been written (the image's own or `lockDebug`'s, once the last block's write has
    /// started; the lock byte of a part whose lock bits are not in flash, once it is written), so
    /// the chip may be debug-locked from its next reset.
    case flashChanged(DebuggerError, locksAtReset: Bool = false)
    /// The reset to run failed (`FlashOptions.resetToRun`) after everything else was done:
    /// `result` says what the job did (blocks written, bytes read back, the verification —
    /// `VerifyMode.none` verified nothing beyond them —, the lock read back). The chip holds
    /// the image as `result` says and runs it from its next reset.
    case notStarted(DebuggerError, result: FlashResult)
    /// The connected target is none of the session's chips (its ID, and the FLASHSIZE code it
    /// tells).
    case unknownChip(targetID: UInt16, flashSizeCode: UInt8)
    /// A debug-locked target, erased because only an erase lifts the lock that hides its size,
    /// then found to be none of the session's chips: its flash is blank now.
    case unknownChipAfterErase(targetID: UInt16, flashSizeCode: UInt8)
    /// `.preserve` on a debug-locked chip: the lock hides the address.
    case cannotPreserveOnLockedChip
    /// The image is made for `chips` (`FlashOptions.madeFor`) and the target is another part;
    /// `erased`: it was debug-locked and told its part only once erased (its flash is blank now);
    /// `sizeGiven`: the part is the one of the flash size the user gave, which the chip did not
    /// confirm (`CC254xSession.sizeIsAssumed`).
    case notMadeFor(chips: [String], target: String, erased: Bool, sizeGiven: Bool = false)

    /// What `flashChanged` with `locksAtReset` adds: the chip may be locked from its next reset.
    public static let mayLockAtReset =
        "the lock bits that lock the debug interface were written, or may have been: the chip may be debug-locked from its next reset (a chip erase unlocks it)"

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .plan(let error): return error.description
        case .debugger(let error), .flashChanged(let error, false): return error.description
        case .flashChanged(let error, true): return "\(error.description); \(Self.mayLockAtReset)"
        case .notStarted(let error, let result):
            let verified = result.report.verify == .none ? ", not verified" : " and verified"
            return
                "\(error.description); the image is written\(verified)\(result.debugLocked ? ", and the debug interface is locked" : ""), but the chip was not reset to run it"
        case .unknownChip(let targetID, 0):
            return
                "the target (ID \(HexText.address(targetID))) does not report its flash size, and none was given"
        case .unknownChip(let targetID, let code):
            return DebuggerError.unknownPart(targetID: targetID, flashSizeCode: code).description
        case .unknownChipAfterErase(let targetID, let code):
            return
                "the target was debug-locked, which hides its size, so it was erased (its flash is blank now); unlocked, it (ID \(HexText.address(targetID)), CHIPINFO0.FLASHSIZE \(code)) is none of the chips of boards/chips.json"
        case .cannotPreserveOnLockedChip:
            return "the target is locked, so its secondary address cannot be read to preserve it"
        case .notMadeFor(let chips, let target, let erased, let sizeGiven):
            return "the image is made for the \(chips.joined(separator: " or the ")); the target is a \(target)"
                + (sizeGiven ? " (as --flash-size says)" : "")
                + (erased ? " (it was debug-locked, so it was erased to tell its part: its flash is blank now)" : "")
        }
    }
}

/// The one erase → plan → program → read back → verify → reset sequence. `ccbeacon flash`,
/// provisioning, the transfer benchmark and the tests all run it; nothing else strings the
/// session's steps together.
public struct FlashProgrammer {
    /// The connected session.
    public let session: CC254xSession

    /// A programmer on `session` (opened and connected by the caller).
    public init(session: CC254xSession) { self.session = session }

    /// Flashes `image` into the target the session is connected to, as `identity` (what
    /// `connect` said) describes it. A debug-locked chip hides its flash size: the image must then
    /// fit one of the session's chips with `targetID`, the chip is erased (which lifts the lock)
    /// and identified again. Every check of the plan happens before the chip changes.
    public func flash(
        _ image: MemoryImage, targetID: UInt16, identity: ChipIdentity, options: FlashOptions,
        events: (FlashEvent) -> Void = { _ in }
    ) throws(FlashError) -> FlashResult {
        let family = ChipFamily(targetID: targetID, in: session.chips)
        var candidates = family?.members ?? []
        let madeFor = options.madeFor
        if !madeFor.isEmpty {
            let names = madeFor.map(\.name)
            // Another family says so by its target ID alone, locked or not: nothing is touched
            // (an unlocked one is named by its part).
            if !identity.locked,
                let chip = identity.chip(targetID: targetID, in: session.chips),
                !madeFor.contains(chip)
            {
                throw .notMadeFor(
                    chips: names, target: chip.name, erased: false,
                    sizeGiven: session.sizeIsAssumed(identity, targetID: targetID))
            }
            guard madeFor.contains(where: { $0.debuggerTargetID == targetID }) else {
                throw .notMadeFor(
                    chips: names, target: family?.name ?? "CC" + HexText.digits(targetID), erased: false)
            }
            candidates = candidates.filter { madeFor.contains($0) }
        }
        guard identity.locked else {
            guard let chip = identity.chip(targetID: targetID, in: session.chips) else {
                throw .unknownChip(targetID: targetID, flashSizeCode: identity.flashSizeCode)
            }
            return try flash(image, chip: chip, options: options, events: events)
        }
        if options.secondaryAddress == .preserve { throw .cannotPreserveOnLockedChip }
        // The chip is the one of the size the user gave; without one, any of a family that
        // reports its size, none of one that does not.
        let possible = session.possibleChips(targetID: targetID)
        candidates = candidates.filter(possible.contains)
        guard !candidates.isEmpty else {
            if !madeFor.isEmpty, let named = possible.first {
                throw .notMadeFor(
                    chips: madeFor.map(\.name), target: named.name, erased: false,
                    sizeGiven: session.sizeIsAssumed(identity, targetID: targetID))
            }
            throw .unknownChip(targetID: targetID, flashSizeCode: identity.flashSizeCode)
        }
        // The image must fit one of the chips it could be before the erase destroys anything;
        // when it fits none, the largest one's reason is the one to tell.
        // A secondary address to write is checked too (its length is the family's): a wrong one
        // must not cost the chip its contents.
        var written: [UInt8]?
        if case .write(let address) = options.secondaryAddress { written = address }
        var planError: FlashError?
        for candidate in candidates.sorted(by: { $0.flashSize > $1.flashSize }) {
            do {
                _ = try plan(image, chip: candidate, options: options, secondary: written)
                planError = nil
                break
            } catch { planError = planError ?? error }
        }
        if let planError { throw planError }
        let unlocked: ChipIdentity
        do {
            unlocked = try session.chipErase(targetID: targetID) { events(.erasing($0)) }
        } catch { throw .flashChanged(error) }
        events(.erased)
        guard let chip = unlocked.chip(targetID: targetID, in: session.chips) else {
            throw .unknownChipAfterErase(targetID: targetID, flashSizeCode: unlocked.flashSizeCode)
        }
        if !madeFor.isEmpty, !madeFor.contains(chip) {
            throw .notMadeFor(
                chips: madeFor.map(\.name), target: chip.name, erased: true,
                sizeGiven: session.sizeIsAssumed(unlocked, targetID: targetID))
        }
        return try flash(image, chip: chip, options: options, erased: true, unlockedByErase: true, events: events)
    }

    /// Flashes `image` into a connected, unlocked `chip` (provisioning knows its chip from the
    /// template). `erased`: the caller has just erased it.
    public func flash(
        _ image: MemoryImage, chip: Chip, options: FlashOptions, erased: Bool = false,
        events: (FlashEvent) -> Void = { _ in }
    ) throws(FlashError) -> FlashResult {
        try flash(image, chip: chip, options: options, erased: erased, unlockedByErase: false, events: events)
    }

    func flash(
        _ image: MemoryImage, chip: Chip, options: FlashOptions, erased: Bool, unlockedByErase: Bool,
        events: (FlashEvent) -> Void
    ) throws(FlashError) -> FlashResult {
        // Checked before anything is read or changed: the plan without the address that is
        // only known after reading it.
        _ = try plan(image, chip: chip, options: options, secondary: nil)
        let given = image
        var image = image
        let secondary: [UInt8]?
        switch options.secondaryAddress {
        case .leave: secondary = nil
        case .preserve:
            do { secondary = erased ? nil : try session.secondaryAddress(chip: chip) } catch { throw .debugger(error) }
            // Kept means kept: a chip with none keeps none, whatever the image holds there
            // (`--allow-last-page`); one with an address has it written over the image's.
            if secondary == nil, let place = chip.secondaryAddress { image = image.removing(place) }
        case .write(let address): secondary = address
        }
        let flashPlan = try plan(image, chip: chip, options: options, secondary: secondary)
        events(.started(chip: chip.name, blocks: flashPlan.blocks.count, unlockedByErase: unlockedByErase))
        // Whether a failure from here on may leave lock bits written that lock the chip at its
        // next reset: where the plan clears DBGLOCK, once the last block's write (the top of
        // flash, which holds them) may have started; where the lock bits are not in flash, from
        // the lock byte's own write.
        let planLocks = FlashPlan.clearsDebugLock(flashPlan.image, chip: chip)
        let lastBlock = flashPlan.blocks.last?.address
        var lockMayBeWritten = false
        let readBack: [Range<Int>]
        let locks = options.lockDebug || planLocks
        do throws(DebuggerError) {
            if !erased {
                _ = try session.chipErase(targetID: chip.debuggerTargetID) { events(.erasing($0)) }
                events(.erased)
            }
            try session.program(flashPlan) {
                events(.programming($0))
            } writeStarting: { address in
                if planLocks, address == lastBlock { lockMayBeWritten = true }
            }
            readBack = try check(
                flashPlan.image,
                readBack: options.readBack + (secondary == nil ? [] : [chip.secondaryAddress].compactMap { $0 }),
                verify: options.verify, events: events)
            // The lock bits take effect at the next reset: read the lock back there, as
            // provisioning does, so "locked" is never said of a chip that is not. An image that
            // clears DBGLOCK itself locks the chip as surely, and is read back and said alike.
            if locks {
                if options.lockDebug, chip.lockBits == nil {
                    lockMayBeWritten = true
                    try session.writeLockByte(Self.debugLockByte)
                }
                try confirmLocked(chip)
            }
        } catch {
            // A lock that did not take is no lock to come.
            throw .flashChanged(error, locksAtReset: lockMayBeWritten && error != .lockNotTaken)
        }
        let result = FlashResult(
            chip: chip,
            report: BurnReport(
                blocksWritten: flashPlan.blocks.count,
                bytesWritten: flashPlan.blocks.count * flashPlan.writing.blockSize,
                verify: options.verify.effective(on: chip),
                readBack: readBack),
            secondaryAddress: secondary, unlockedByErase: unlockedByErase, debugLocked: locks,
            imageBytesReplaced: options.secondaryAddress == .leave
                ? [] : Self.replaced(given, by: flashPlan.image, in: chip.secondaryAddress ?? 0..<0))
        if options.resetToRun {
            // The chip holds the image as `result` says: a start that fails is only that.
            do { try session.resetAndRun() } catch { throw .notStarted(error, result: result) }
            events(.running)
        }
        events(.finished(result))
        return result
    }

    /// The ranges of `place` where `given` holds a byte that `written` does not (erased, 0xFF,
    /// where it holds none).
    static func replaced(_ given: MemoryImage, by written: MemoryImage, in place: Range<Int>) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        for address in place {
            guard let byte = given[address], byte != written[address] ?? 0xFF else { continue }
            if let last = ranges.last, last.upperBound == address {
                ranges[ranges.count - 1] = last.lowerBound..<address + 1
            } else {
                ranges.append(address..<address + 1)
            }
        }
        return ranges
    }

    /// The proof that the chip holds `image`, as a flash job ends with it and as a burn that was
    /// interrupted is checked later: `readBack` read back byte for byte (merged; returned), then
    /// the whole image checked as `verify` says. Events: `identityReadBack`, then `verifying`
    /// progress and `verified` (none with `VerifyMode.none`).
    public func check(
        _ image: MemoryImage, readBack: [Range<Int>], verify: VerifyMode, events: (FlashEvent) -> Void = { _ in }
    ) throws(DebuggerError) -> [Range<Int>] {
        let merged = MemoryImage.merged(readBack)
        try session.verifyRanges(merged, of: image)
        events(.identityReadBack(merged))
        let verify = verify.effective(on: session.chip)
        switch verify {
        case .crc: try session.verifyCRC(image) { events(.verifying($0)) }
        case .read: try session.verifyRead(image) { events(.verifying($0)) }
        case .none: return merged
        }
        events(.verified(verify))
        return merged
    }

    /// Locks the debug interface of the chip on the debugger, whose flash was programmed and
    /// verified before: the lock bits are written (over the last page as it is: writing ones
    /// changes nothing), read back, and a reset into debug mode must then find the interface
    /// locked (`DebuggerError.lockNotTaken` otherwise). Nothing else of the flash changes.
    public func lockDebugInterface(chip: Chip) throws(DebuggerError) {
        guard let lockBits = chip.lockBits else {
            try session.writeLockByte(Self.debugLockByte)
            return try confirmLocked(chip)
        }
        guard
            let lock = try? FlashPlan.withLastPage(MemoryImage(), chip: chip, secondaryAddress: nil, lockDebug: true),
            let plan = try? FlashPlan(image: lock, chip: chip, allowLastPage: true)
        else { throw .lockNotTaken }
        try session.program(plan)
        try session.verifyRanges([lockBits], of: lock)
        try confirmLocked(chip)
    }

    /// The older map's lock byte with only the debug lock (bit 0) cleared: the boot page and
    /// flash-size locks stay as erased, unlocked (chip-family.md §6).
    static let debugLockByte: UInt8 = 0xFE

    /// The lock bits take effect at the next reset: the lock is read back there, so "locked" is
    /// never said of a chip that is not.
    func confirmLocked(_ chip: Chip) throws(DebuggerError) {
        guard try session.connect(targetID: chip.debuggerTargetID).locked else { throw .lockNotTaken }
    }

    /// The plan for `image` on `chip` with the last page as the options say.
    func plan(_ image: MemoryImage, chip: Chip, options: FlashOptions, secondary: [UInt8]?) throws(FlashError)
        -> FlashPlan
    {
        do {
            // The image alone must keep out of the last page unless allowed; what the options
            // themselves put there (address, lock) is always allowed.
            _ = try FlashPlan(image: image, chip: chip, allowLastPage: options.allowLastPage)
            guard secondary != nil || options.lockDebug else {
                return try FlashPlan(image: image, chip: chip, allowLastPage: options.allowLastPage)
            }
            let full = try FlashPlan.withLastPage(
                image, chip: chip, secondaryAddress: secondary, lockDebug: options.lockDebug)
            return try FlashPlan(image: full, chip: chip, allowLastPage: true)
        } catch { throw .plan(error) }
    }
}

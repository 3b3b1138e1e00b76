import CCDebuggerEmulator
import IntelHex
import TargetData
import TestSupport
import Testing

@testable import CCDebugger

/// Every part the emulator models, flashed by the one flash programmer with the catalog's facts:
/// the emulator's table of parts and `boards/chips.json` are two statements of the same silicon
/// facts, written apart, and must agree.
struct ChipFamilyTests {
    static let parts = EmulatedPart.all

    /// Code at 0, data in the middle of the flash, and data just below the last page: every bank a
    /// part has is written on the larger parts.
    static func image(for part: EmulatedPart) throws -> MemoryImage {
        var image = try MemoryImage(bytes: (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }, at: 0)
        try image.write((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }, at: part.flashSize / 2 + 123)
        let nearTop = part.flashSize - part.pageSize - 700
        try image.write((0..<600).map { UInt8(truncatingIfNeeded: $0 &* 3 &+ 0x40) }, at: nearTop)
        return image
    }

    /// A family is every part of the catalog with its target ID, the emulator's parts of that
    /// family by name, and what it says of itself (its name, map, whether it reports its size)
    /// holds for each of them; a target ID no part has is no family.
    @Test(arguments: parts) func aFamilyIsThePartsOfItsTargetID(part: EmulatedPart) throws {
        let chips = try BundledData.boards().chips
        let family = try #require(ChipFamily(targetID: part.targetID, in: chips))
        #expect(
            family.members.map(\.name).sorted()
                == Self.parts.filter { $0.targetID == part.targetID }.map(\.name).sorted())
        #expect(family.name == part.family)
        for member in family.members {
            #expect(member.registerMap == family.registerMap)
            #expect(member.reportsFlashSize == family.reportsFlashSize)
        }
        #expect(family.flashSizes.contains(part.flashSize))
        #expect(ChipFamily(targetID: 0x1234, in: chips) == nil)
    }

    @Test(arguments: parts) func theCatalogSaysWhatTheSiliconReports(part: EmulatedPart) throws {
        let chip = try BundledData.chip(part.name)
        #expect(chip.family == part.family)
        #expect(chip.debuggerTargetID == part.targetID)
        #expect(chip.chipID == part.chipID)
        #expect(chip.flashSize == part.flashSize)
        #expect(chip.flashSizeCode == part.flashSizeCode)
        #expect(chip.pageSize == part.pageSize)
        #expect(chip.ramSize == part.ramSize)
        #expect(chip.primaryAddress == part.ieeeOffset.map { (0x7800 + $0)..<(0x7800 + $0 + part.ieeeLength) })
        // The CC243x has no factory address; cc-tool keeps one in the last 8 bytes of flash.
        #expect(
            chip.secondaryAddress?.count == (part.hasBankedOlderMap ? 8 : part.ieeeOffset.map { _ in part.ieeeLength }))
        #expect(chip.flashWriting.path == (part.hasBurstWrite ? .burst : .xdata))
        #expect(chip.registerMap == (part.hasBankedOlderMap ? .sfrBanked : part.hasOlderRegisterMap ? .sfr : .xreg))
        #expect(chip.flashWordSize == part.flashWordSize)
        #expect(chip.ram == part.ram)
        #expect((chip.lockBits == nil) == part.hasOlderRegisterMap)
    }

    @Test func everyChipOfTheCatalogIsEmulated() throws {
        let catalog = try BundledData.boards().chips.map(\.name)
        #expect(Set(catalog) == Set(Self.parts.map(\.name)))
    }

    @Test(arguments: parts) func identifiesFlashesVerifiesAndReads(part: EmulatedPart) throws {
        let ieee: [UInt8] = [0x00, 0x12, 0x4B, 0x00, 0x01, 0x02, 0x03, 0x04].suffix(part.ieeeLength)
        let debugger = EmulatedDebugger(chip: EmulatedChip(part: part, ieee: Array(ieee)))
        let chips = try BundledData.boards().chips
        let session = CC254xSession(transport: debugger, chips: chips)
        // A part that reports no size is told it, as `--flash-size` does.
        if part.hasOlderRegisterMap { session.assumedFlashSize = part.flashSize }
        let state = try session.open()
        #expect(state.targetID == part.targetID)
        let identity = try session.connect(targetID: state.targetID)
        #expect(identity.chipID == part.chipID)
        #expect(identity.flashSize == part.flashSize)
        #expect(identity.ramSize == part.ramSize)
        let chip = try #require(identity.chip(targetID: state.targetID, in: chips))
        #expect(chip.name == part.name)
        // A part with no factory address (ieeeLength 0) has none, not an empty one.
        #expect(try session.primaryAddress(chip: chip) == (ieee.isEmpty ? nil : Array(ieee)))

        let image = try Self.image(for: part)
        // A secondary address where the part has a place for one (beside its factory address).
        let secondary = chip.secondaryAddress.map { place in place.map { UInt8(0xA0 + $0 - place.lowerBound) } }
        for verify in [VerifyMode.crc, .read] {
            let result = try FlashProgrammer(session: session).flash(
                image, targetID: state.targetID, identity: identity,
                options: FlashOptions(
                    verify: verify, secondaryAddress: secondary.map { .write($0) } ?? .leave, resetToRun: false))
            #expect(result.secondaryAddress == secondary)
            // The CC243x's flash is not where the CRC DMA could be shown to read it: read back.
            #expect(result.report.verify == (verify == .crc && part.hasBankedOlderMap ? .read : verify))
        }
        let flash = try session.readFlash(0..<part.flashSize)
        var expected = image.bytes(in: 0..<part.flashSize, fill: 0xFF)
        if let place = chip.secondaryAddress, let secondary {
            expected.replaceSubrange(place, with: secondary.reversed())
        }
        #expect(flash == expected)
        #expect(debugger.chip!.flash == expected)
        #expect(try session.secondaryAddress(chip: chip) == secondary)
        if chip.secondaryAddress == nil {
            // No place for one: refused before the chip is touched.
            #expect(throws: FlashError.plan(.noSecondaryAddress(chip: part.name))) {
                try FlashProgrammer(session: session).flash(
                    image, targetID: state.targetID, identity: identity,
                    options: FlashOptions(secondaryAddress: .write([1, 2, 3, 4, 5, 6])))
            }
            #expect(debugger.chip!.flash == expected)
        }

        // Locked, it shows as locked; a chip erase unlocks and clears it.
        _ = try FlashProgrammer(session: session).flash(
            image, targetID: state.targetID, identity: identity, options: FlashOptions(lockDebug: true))
        #expect(try session.connect(targetID: state.targetID).locked)
        if part.hasOlderRegisterMap {
            // The lock byte in the information page, only its debug bit cleared; nothing in flash.
            #expect(debugger.chip!.infoPage.prefix(4) == [0xFF, 0xFE, 0xFF, 0xFF])
            #expect(debugger.chip!.flash == image.bytes(in: 0..<part.flashSize, fill: 0xFF))
        }
        let erased = try session.chipErase(targetID: state.targetID)
        #expect(!erased.locked && erased.flashSize == part.flashSize)
        #expect(debugger.chip!.flash.allSatisfy { $0 == 0xFF })
    }

    /// The write path comes from the chip's data: told to burst to a part whose debug interface
    /// takes no BURST_WRITE, the programmer writes nothing, and the verify says so.
    @Test(arguments: parts.filter { !$0.hasBurstWrite })
    func theWrongPathIsCaughtByTheVerify(part: EmulatedPart) throws {
        let debugger = EmulatedDebugger(chip: EmulatedChip(part: part))
        var chips = try BundledData.boards().chips
        let index = try #require(chips.firstIndex { $0.name == part.name })
        chips[index].flashWriting = FlashWriting(path: .burst, blockSize: 1024, descriptorAddress: 0x0800)
        let session = CC254xSession(transport: debugger, chips: chips)
        session.assumedFlashSize = part.flashSize
        let state = try session.open()
        let identity = try session.connect(targetID: state.targetID)
        #expect(throws: (any Error).self) {
            try FlashProgrammer(session: session).flash(
                try Self.image(for: part), targetID: state.targetID, identity: identity,
                options: FlashOptions(resetToRun: false))
        }
        #expect(debugger.chip!.flash.allSatisfy { $0 == 0xFF }, "nothing reached the flash")
    }

    /// A way of writing fits the chip's SRAM: buffers below the descriptors, descriptors inside it,
    /// blocks of whole words that fill pages evenly.
    @Test(
        arguments: [
            (FlashWriting.burst, 8192, 2048, nil),
            (FlashWriting(path: .burst, blockSize: 1024, descriptorAddress: 0x07FF), 8192, 2048, "overlap"),
            (FlashWriting.burst, 2048, 1024, "beyond"),
            (FlashWriting(path: .xdata, blockSize: 512, descriptorAddress: 0x0200), 1024, 1024, nil),
            (FlashWriting(path: .xdata, blockSize: 512, descriptorAddress: 0x03F8), 1024, 1024, nil),
            (FlashWriting(path: .xdata, blockSize: 512, descriptorAddress: 0x01F8), 1024, 1024, "overlap"),
            (FlashWriting(path: .xdata, blockSize: 512, descriptorAddress: 0x03F9), 1024, 1024, "beyond"),
            (FlashWriting(path: .xdata, blockSize: 510, descriptorAddress: 0x0200), 1024, 1020, "whole words"),
            (FlashWriting(path: .xdata, blockSize: 768, descriptorAddress: 0x0300), 2048, 1024, "divide the page"),
            (FlashWriting(path: .burst, blockSize: 512, descriptorAddress: 0x0800), 8192, 2048, "1024-byte blocks"),
            (FlashWriting(path: .burst, blockSize: 2048, descriptorAddress: 0x1000), 8192, 2048, "1024-byte blocks"),
        ] as [(FlashWriting, Int, Int, String?)])
    func aWayOfWritingFitsTheChip(writing: FlashWriting, ramSize: Int, pageSize: Int, problem: String?) {
        let found = writing.problem(ram: 0..<ramSize, pageSize: pageSize)
        if let problem {
            #expect(found?.contains(problem) == true, "\(String(describing: found))")
        } else {
            #expect(found == nil)
        }
    }

    /// On the older map SRAM ends at 0xFFFF and words have 2 bytes: a buffer below SRAM (cc-tool's
    /// 0xF000 on a part with 1 KiB) is refused, a block of whole 2-byte words is not.
    @Test(
        arguments: [
            (FlashWriting(path: .xdata, blockSize: 512, descriptorAddress: 0xFE00, bufferAddress: 0xFC00), 1024, nil),
            (
                FlashWriting(path: .xdata, blockSize: 512, descriptorAddress: 0xFF00, bufferAddress: 0xF000), 1024,
                "outside"
            ),
            (FlashWriting(path: .xdata, blockSize: 512, descriptorAddress: 0xFF00, bufferAddress: 0xF000), 4096, nil),
            (
                FlashWriting(path: .xdata, blockSize: 512, descriptorAddress: 0xFFF9, bufferAddress: 0xFC00), 1024,
                "beyond"
            ),
            (
                FlashWriting(path: .xdata, blockSize: 258, descriptorAddress: 0xFE00, bufferAddress: 0xFC00), 1024,
                "divide"
            ),
        ] as [(FlashWriting, Int, String?)])
    func aWayOfWritingFitsAnOlderChip(writing: FlashWriting, ramSize: Int, problem: String?) {
        let found = writing.problem(ram: (0x10000 - ramSize)..<0x10000, pageSize: 1024, wordSize: 2)
        if let problem {
            #expect(found?.contains(problem) == true, "\(String(describing: found))")
        } else {
            #expect(found == nil)
        }
    }

    /// An image that is a station of templates for several parts runs on any of them: a locked
    /// chip that turns out, once erased, to be one of them is flashed; one that is none is refused.
    @Test(arguments: [("CC2541F256", true), ("CC2541F128", true), ("CC2540F256", false)])
    func anImageForSeveralPartsRunsOnAnyOfThem(part: String, runs: Bool) throws {
        let debugger = EmulatedDebugger(chip: EmulatedChip(part: .named(part)!))
        debugger.chip!.setDebugLockBit()
        let chips = try BundledData.boards().chips
        let session = CC254xSession(transport: debugger, chips: chips)
        let state = try session.open()
        let identity = try session.connect(targetID: state.targetID)
        #expect(identity.locked)
        var options = FlashOptions(resetToRun: false)
        options.madeFor = chips.filter { $0.family == "CC2541" }
        let image = try MemoryImage(bytes: [1, 2, 3, 4], at: 0x100)
        if runs {
            let result = try FlashProgrammer(session: session).flash(
                image, targetID: state.targetID, identity: identity, options: options)
            #expect(result.chip.name == part)
        } else {
            #expect(
                throws: FlashError.notMadeFor(chips: ["CC2541F256", "CC2541F128"], target: "CC2540", erased: false)
            ) {
                try FlashProgrammer(session: session).flash(
                    image, targetID: state.targetID, identity: identity, options: options)
            }
            #expect(debugger.chip!.debugLocked, "refused by its target ID, before the erase")
        }
    }

    /// A station refused as made for another part says whether the target's size was the user's
    /// (`--flash-size`, unconfirmed by the chip: its family reports none, or it is debug-locked),
    /// whatever the path: an unlocked chip, a locked one, one told only after the erase.
    @Test(
        arguments: [
            // part, locked, size given (KiB), made for, the size was the user's
            ("CC2510F32", false, 16, "CC2510F32", true), ("CC2510F32", true, 16, "CC2510F32", true),
            ("CC2430F128", false, 64, "CC2430F128", true), ("CC2541F256", true, 128, "CC2541F256", true),
            ("CC2541F128", false, nil, "CC2541F256", false), ("CC2541F128", true, nil, "CC2541F256", false),
            ("CC2510F16", true, 16, "CC2510F32", true), ("CC2541F128", false, 128, "CC2541F256", false),
        ] as [(String, Bool, Int?, String, Bool)])
    func aStationForAnotherPartSaysWhoseSizeItWas(
        part: String, locked: Bool, givenKiB: Int?, madeFor: String, sizeWasGiven: Bool
    ) throws {
        let debugger = EmulatedDebugger(chip: EmulatedChip(part: .named(part)!))
        if locked { debugger.chip!.setDebugLockBit() }
        let chips = try BundledData.boards().chips
        let session = CC254xSession(transport: debugger, chips: chips)
        session.assumedFlashSize = givenKiB.map { $0 * 1024 }
        let state = try session.open()
        let identity = try session.connect(targetID: state.targetID)
        var options = FlashOptions(resetToRun: false)
        options.madeFor = chips.filter { $0.name == madeFor }
        let image = try MemoryImage(bytes: [1, 2, 3, 4], at: 0x100)
        do {
            _ = try FlashProgrammer(session: session).flash(
                image, targetID: state.targetID, identity: identity, options: options)
            Issue.record("\(part) flashed a station for the \(madeFor)")
        } catch {
            guard case .notMadeFor(let names, _, _, let sizeGiven) = error else {
                Issue.record("\(part): \(error)")
                return
            }
            #expect(names == [madeFor])
            #expect(sizeGiven == sizeWasGiven, "\(part) locked: \(locked), --flash-size \(givenKiB as Any)")
        }
    }

    /// READ_STATUS bit 7 means busy on the CC253x/4x and done on the older parts: the erase is
    /// waited for either way, so the chip reports it finished when `chipErase` returns.
    @Test(arguments: ["CC2541F256", "CC2530F64", "CC2510F32", "CC1111F8"])
    func theEraseIsWaitedForWhateverItsStatusBitMeans(name: String) throws {
        let part = try #require(EmulatedPart.named(name))
        let chip = EmulatedChip(part: part)
        chip.busyPolls = 4
        let session = CC254xSession(transport: EmulatedDebugger(chip: chip), chips: try BundledData.boards().chips)
        session.assumedFlashSize = part.flashSize
        let state = try session.open()
        _ = try session.chipErase(targetID: state.targetID)
        let doneBit = try session.readStatus() & 0x80 != 0
        #expect(doneBit == part.hasOlderRegisterMap, "the erase had finished")
    }

    /// A part that reports no size is no chip until one is named: flashing it is refused before
    /// anything changes, locked or not; named, it is the part of that size.
    @Test(arguments: [false, true])
    func aChipThatReportsNoSizeWaitsForOne(locked: Bool) throws {
        let part = try #require(EmulatedPart.named("CC2510F16"))
        let debugger = EmulatedDebugger(chip: EmulatedChip(part: part))
        debugger.chip!.flash = [UInt8](repeating: 0x5A, count: part.flashSize)
        if locked { debugger.chip!.setDebugLockBit() }
        let chips = try BundledData.boards().chips
        let session = CC254xSession(transport: debugger, chips: chips)
        let state = try session.open()
        let identity = try session.connect(targetID: state.targetID)
        #expect(identity.chip(targetID: state.targetID, in: chips) == nil)
        #expect(throws: FlashError.unknownChip(targetID: 0x2510, flashSizeCode: 0)) {
            try FlashProgrammer(session: session).flash(
                try Self.image(for: part), targetID: state.targetID, identity: identity, options: FlashOptions())
        }
        #expect(debugger.chip!.flash.allSatisfy { $0 == 0x5A })
        #expect(debugger.chip!.debugLocked == locked)
        session.assumedFlashSize = 16 * 1024
        let named = try session.connect(targetID: state.targetID)
        #expect(named.chip(targetID: state.targetID, in: chips)?.name == (locked ? nil : "CC2510F16"))
        _ = try FlashProgrammer(session: session).flash(
            try Self.image(for: part), targetID: state.targetID, identity: named, options: FlashOptions())
        #expect(debugger.chip!.flash == (try Self.image(for: part)).bytes(in: 0..<part.flashSize, fill: 0xFF))
    }

    @Test func aFamilyNameMeansItsLargestPart() {
        #expect(EmulatedPart.named("cc2541")?.name == "CC2541F256")
        #expect(EmulatedPart.named("CC2533")?.name == "CC2533F96")
        #expect(EmulatedPart.named("cc2544")?.name == "CC2544F32")
        #expect(EmulatedPart.named("cc2530f64")?.name == "CC2530F64")
        #expect(EmulatedPart.named("cc1111")?.name == "CC1111F32")
        #expect(EmulatedPart.named("CC2650") == nil)
        #expect(EmulatedPart.named("CC2541F512") == nil)
    }
}

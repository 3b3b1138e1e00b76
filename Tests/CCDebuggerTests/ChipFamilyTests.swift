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
        #expect(chip.secondaryAddress?.count == part.ieeeOffset.map { _ in part.ieeeLength })
        #expect(chip.flashWriting.path == (part.hasBurstWrite ? .burst : .xdata))
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
        let state = try session.open()
        #expect(state.targetID == part.targetID)
        let identity = try session.connect(targetID: state.targetID)
        #expect(identity.chipID == part.chipID)
        #expect(identity.flashSize == part.flashSize)
        #expect(identity.ramSize == part.ramSize)
        let chip = try #require(
            Chip.reporting(targetID: state.targetID, flashSizeCode: identity.flashSizeCode, in: chips))
        #expect(chip.name == part.name)
        #expect(try session.primaryAddress(chip: chip) == Array(ieee))

        let image = try Self.image(for: part)
        // A secondary address where the part has a place for one (beside its factory address).
        let secondary = chip.secondaryAddress.map { place in place.map { UInt8(0xA0 + $0 - place.lowerBound) } }
        for verify in [VerifyMode.crc, .read] {
            let result = try FlashProgrammer(session: session).flash(
                image, targetID: state.targetID, identity: identity,
                options: FlashOptions(
                    verify: verify, secondaryAddress: secondary.map { .write($0) } ?? .leave, resetToRun: false))
            #expect(result.secondaryAddress == secondary)
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
        let found = writing.problem(ramSize: ramSize, pageSize: pageSize)
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

    @Test func aFamilyNameMeansItsLargestPart() {
        #expect(EmulatedPart.named("cc2541")?.name == "CC2541F256")
        #expect(EmulatedPart.named("CC2533")?.name == "CC2533F96")
        #expect(EmulatedPart.named("cc2544")?.name == "CC2544F32")
        #expect(EmulatedPart.named("cc2530f64")?.name == "CC2530F64")
        #expect(EmulatedPart.named("CC2650") == nil)
        #expect(EmulatedPart.named("CC2541F512") == nil)
    }
}

import CCDebuggerEmulator
import Checksums
import FirmwareTemplate
import Foundation
import IntelHex
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CCDebugger
@testable import CommandLineKit

/// "Verified" means the identity bytes were read back from the chip: a CRC alone can be fooled.
struct VerifiedMeansReadBackTests {
    /// One corruption of the table: stuck-at-zero bits, where they are, and whether the chip's
    /// CRC can see them.
    struct Corruption: CustomStringConvertible {
        var bits: [CRCCollisions.Bit]
        var inFields: Bool
        var fooledCRC: Bool
        var description: String {
            "\(bits)\(inFields ? " in the fields" : " outside")\(fooledCRC ? ", CRC unchanged" : "")"
        }
    }

    @Test func everyCorruptionIsCaughtOrProvenHarmlessByTheFullRead() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let template = try BundledData.template()
        let path = scratch.path("station.hex")
        let generate = ToolRun(
            ["generate", "--template", "cc2541-ibeacon", "-o", path] + InputIsNeverDroppedOrDamagedTests.identity)
        try #require(generate.status == 0)
        let memory = try IntelHexFile(text: try Files.read(path)).memory
        let fields = template.identityRanges
        let chunks = CC254xSession.verifyChunks(memory)
        let payloadChunk = try #require(chunks.first { $0.contains(template.beaconField.identityAddress) })
        let codeChunk = try #require(
            chunks.filter { chunk in !fields.contains { $0.overlaps(chunk) } }.max { $0.count < $1.count })
        let inside = CRCCollisions.stuckAtZero(
            in: memory, chunk: payloadChunk, window: template.beaconField.range, count: 4)
        let outside = CRCCollisions.stuckAtZero(in: memory, chunk: codeChunk, window: codeChunk, count: 3)
        #expect(
            inside.count == 4 && outside.count == 3,
            "CRC collisions found: \(inside.count) inside, \(outside.count) outside")
        func corruption(_ bits: [CRCCollisions.Bit]) -> Corruption {
            let chunk = chunks.first { $0.contains(bits[0].address) }!
            var bytes = memory.bytes(in: chunk, fill: 0xFF)
            for bit in bits { bytes[bit.address - chunk.lowerBound] &= ~bit.mask }
            let fooled = CC254xSession.crc(bytes) == CC254xSession.crc(memory.bytes(in: chunk, fill: 0xFF))
            #expect(fooled == (CRCCollisions.crc(bytes) == CRCCollisions.crc(memory.bytes(in: chunk, fill: 0xFF))))
            return Corruption(
                bits: bits, inFields: bits.contains { bit in fields.contains { $0.contains(bit.address) } },
                fooledCRC: fooled)
        }
        /// The bits of `mask` that are 1 at `address` (so stuck-at-zero clears them).
        func setBits(_ address: Int, _ mask: UInt8) -> [CRCCollisions.Bit] {
            let byte = memory[address] ?? 0xFF
            return (0..<8).map { UInt8(1) << UInt8($0) }.filter { bit in mask & bit != 0 && byte & bit != 0 }
                .map { bit in CRCCollisions.Bit(address: address, mask: bit) }
        }
        let issueExample = setBits(0x7F13, 0xA0) + setBits(0x7F11, 0x30)
        let onePayloadBit = Array(setBits(template.beaconField.identityAddress + 20, 0xFF).prefix(1))
        let oneCodeBit = Array(setBits(codeChunk.lowerBound + 5, 0xFF).prefix(1))
        var sets: [[CRCCollisions.Bit]] = inside + outside
        sets += [issueExample, onePayloadBit, oneCodeBit]
        let table = sets.map(corruption)
        #expect(table.filter { $0.fooledCRC }.count >= 7, "the table holds CRC-preserving corruptions: \(table)")
        for case_ in table {
            for mode in ["crc", "read", "none"] {
                let provider = EmulatorProvider()
                provider.debuggers[0].chip!.stuckAtZero = CRCCollisions.masks(case_.bits)
                let run = ToolRun(["flash", path, "--verify", mode], debuggers: provider)
                if case_.inFields {
                    #expect(run.status == 1, "\(case_), --verify \(mode): \(run.output)")
                    #expect(run.diagnostics.contains("the identity bytes did not read back"), "\(case_) \(mode)")
                    continue
                }
                let caught = mode == "read" || (mode == "crc" && !case_.fooledCRC)
                #expect(run.status == (caught ? 1 : 0), "\(case_), --verify \(mode): \(run.diagnostics)")
                if !caught {
                    // Passed: the full read shows the identity bytes are exactly the station's, and
                    // the only differences are the stuck bits, outside every field.
                    let dump = scratch.path("dump.bin")
                    let read = ToolRun(["read", "-o", dump, "--range", "0:0x8000"], debuggers: provider)
                    try #require(read.status == 0, "\(read.diagnostics)")
                    let flash = try Files.read(dump)
                    for range in fields { #expect(Array(flash[range]) == memory.bytes(in: range, fill: 0xFF)) }
                    // Over what a verify compares: the image's blocks, gaps as 0xFF.
                    let differing = CC254xSession.verifiedSpans(memory).flatMap { span in
                        let expected = memory.bytes(in: span, fill: 0xFF)
                        return span.filter { flash[$0] != expected[$0 - span.lowerBound] }
                    }
                    #expect(Set(differing) == Set(case_.bits.map(\.address)), "\(case_)")
                    let readBack = BurnReport.describe(MemoryImage.merged(fields))
                    #expect(readBack == "0x7F02-0x7F25,0x7F28-0x7F2C")
                    #expect(run.output.contains("identity bytes \(readBack) read back"), "\(run.output)")
                }
            }
        }
    }

    /// A chip whose debug lock hides its flash size is erased (which unlocks it) and programmed;
    /// `info` keeps saying it is locked.
    @Test func aLockedChipIsErasedAndProgrammed() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("station.hex")
        #expect(
            ToolRun(
                ["generate", "--template", "cc2541-ibeacon", "-o", path] + InputIsNeverDroppedOrDamagedTests.identity
            ).status == 0)
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.setDebugLockBit()
        let info = ToolRun(["info"], debuggers: provider)
        #expect(info.status == 0 && info.output.contains("LOCKED"), "\(info.output)")
        let run = ToolRun(["flash", path], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("the target was debug-locked; the chip erase unlocked it"))
        #expect(run.output.contains("to the CC2541F256"))
        let memory = try IntelHexFile(text: try Files.read(path)).memory
        let chip = try #require(provider.debuggers[0].chip)
        for segment in memory.segments { #expect(Array(chip.flash[segment.range]) == segment.bytes) }
        // An image too big for any chip with that target ID is refused before the erase.
        let locked = EmulatorProvider()
        locked.debuggers[0].chip!.setDebugLockBit()
        var big = MemoryImage()
        try big.write([0x00], at: 0x4_0000)
        let bin = scratch.path("big.bin")
        try Files.writeAtomically(big.bytes(in: 0..<0x4_0001, fill: 0xFF), to: bin)
        let refused = ToolRun(["flash", bin], debuggers: locked)
        #expect(refused.status == 65, "\(refused.diagnostics)")
        #expect(ToolRun(["info"], debuggers: locked).output.contains("LOCKED"), "nothing was erased")
    }
}

/// The one fault-injection mechanism: `CCBEACON_TEST_KILL=POINT:N`, read strictly (a typo arms
/// nothing rather than something else).
struct CrashPointTests {
    @Test(arguments: [
        ("in-ledger-write:3", CrashPoint.inLedgerWrite, 3), ("before-hook:1", .beforeHook, 1),
        ("batch-step:16", .batchStep, 16), ("after-ledger-link:1", .afterLedgerLink, 1),
    ])
    func aPointAndACountArmIt(text: String, point: CrashPoint, at: Int) {
        let armed = CrashPoint.parse(text)
        #expect(armed?.point == point && armed?.at == at)
        #expect(point.armed(at: at) == [CrashPoint.variable: text])
    }

    @Test(arguments: [
        nil, "", "in-ledger-write", "in-ledger-write:0", "in-ledger-write:-1", "ledger-write:2", "in-ledger-write:x",
        "before-hook:+1", "before-hook:007", "before-hook: 1",
    ])
    func anythingElseArmsNothing(text: String?) {
        #expect(CrashPoint.parse(text) == nil)
    }
}

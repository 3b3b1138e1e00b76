import Foundation
import TestSupport
import Testing

@testable import IntelHex

/// Every real CC254x/CC253x HEX image in `../shared/corpus/` (skipped when absent).
@Suite(.enabled(if: SharedFixtures.available, "needs ../shared/corpus"))
struct CorpusTests {
    static let hexFiles = SharedFixtures.files(in: "corpus", withExtension: "hex")

    @Test func corpusIsThere() {
        #expect(Self.hexFiles.count == 24)
    }

    @Test(arguments: hexFiles)
    func roundTripsAndPatchesInPlace(url: URL) throws {
        let name = url.lastPathComponent
        let text = try SharedFixtures.bytes(url)
        let file = try IntelHexFile(text: text, fileName: name)
        #expect(file.memory.byteCount > 0)

        // parse → write → parse gives the same memory and start address, at both record lengths.
        for length in [16, 32] {
            let rewritten = try IntelHexFile(
                text: HexWriter(recordLength: length).text(for: file.memory, startAddress: file.startAddress))
            #expect(rewritten.memory == file.memory, "\(name) at \(length)")
            #expect(rewritten.startAddress == file.startAddress)
        }

        // A patch of zero changes gives the identical bytes.
        #expect(try file.patchingRecords([]).file.text == text)

        // A 21-byte change that spans two records (across a 64 KiB page where the image has one)
        // rewrites exactly those two lines and keeps every other byte, line endings included.
        let (first, second) = try #require(Self.recordPairToStraddle(in: file), "\(name) has no adjacent records")
        let address = first.end - 11
        let original = try #require(file.memory.contiguousBytes(in: address..<(address + 21)))
        let patched = try file.patchingRecords([MemoryPatch(address: address, bytes: original.map { ~$0 })])
        let lines = (file.records[first.recordIndex].line, file.records[second.recordIndex].line)
        #expect(patched.rewrittenLines == [lines.0, lines.1], "\(name)")
        let changed = Self.changedLines(text, patched.file.text)
        #expect(changed == [lines.0, lines.1], "\(name)")
        #expect(patched.file.text.count == text.count)
        let reread = try IntelHexFile(text: patched.file.text)
        #expect(reread.memory == patched.file.memory)
        #expect(reread.memory.contiguousBytes(in: address..<(address + 21)) == original.map { ~$0 })
    }

    /// The iBeacon payload of the GhostYu images sits at 0x333–0x347, on lines 50 and 51; every
    /// field of the new identity differs from the image's, so both lines must change.
    @Test(arguments: [
        "01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex",
        "02_ghostyu-SimpleBLEPeripheral-ibeacon-CC2540-IAR.hex",
    ])
    func iBeaconPayloadPatchIsTwoLines(name: String) throws {
        let url = SharedFixtures.directory!.appendingPathComponent("corpus/\(name)")
        let text = try SharedFixtures.bytes(url)
        let file = try IntelHexFile(text: text, fileName: name)
        #expect(file.memory.addresses(of: [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) == [0x32A])
        let payload: [UInt8] = [
            0x76, 0x34, 0xA4, 0x85, 0x17, 0x32, 0x4B, 0x7D, 0xAB, 0x44, 0xD5, 0x05, 0xD8, 0xA2, 0x4C, 0x60, 0x01, 0x02,
            0x03, 0x04, 0xC5,
        ]
        let patched = try file.patchingRecords([MemoryPatch(address: 0x333, bytes: payload)])
        #expect(patched.rewrittenLines == [50, 51])
        #expect(Self.changedLines(text, patched.file.text) == [50, 51])
        #expect(patched.file.memory.contiguousBytes(in: 0x333..<0x348) == payload)
    }

    @Test func unsortedZStackImageReads() throws {
        let url = SharedFixtures.directory!.appendingPathComponent("corpus/39_koenkk-ZStack-CC2530ZNP-Prod.hex")
        let file = try IntelHexFile(text: try SharedFixtures.bytes(url))
        #expect(file.memory.segments.map(\.range) == [0x00000..<0x01FF0, 0x01FF6..<0x3C800, 0x3FFF0..<0x3FFF1])
        #expect(file.startAddress == .linear(0x2BFD))
    }

    /// Two adjacent data placements from different records with room for 11 + 10 bytes; one whose
    /// join is a 64 KiB boundary is preferred.
    static func recordPairToStraddle(in file: IntelHexFile) -> (Placement, Placement)? {
        var fallback: (Placement, Placement)?
        for (first, second) in zip(file.placements, file.placements.dropFirst())
        where first.end == second.address && first.recordIndex != second.recordIndex && first.length >= 11
            && second.length >= 10
        {
            if second.address % 0x10000 == 0 { return (first, second) }
            if fallback == nil { fallback = (first, second) }
        }
        return fallback
    }

    /// 1-based numbers of the lines (split at LF, so CR stays part of a line) that differ.
    static func changedLines(_ a: [UInt8], _ b: [UInt8]) -> [Int] {
        let linesA = a.split(separator: 0x0A, omittingEmptySubsequences: false)
        let linesB = b.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard linesA.count == linesB.count else { return [-1] }
        return zip(linesA, linesB).enumerated().compactMap {
            $0.element.0.elementsEqual($0.element.1) ? nil : $0.offset + 1
        }
    }
}

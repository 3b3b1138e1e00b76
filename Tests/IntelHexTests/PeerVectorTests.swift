import Foundation
import TestSupport
import Testing

@testable import IntelHex

/// Other projects' HEX test files from `../shared/hex-vectors/peer/` (skipped when absent).
@Suite(.enabled(if: SharedFixtures.available, "needs ../shared/hex-vectors"))
struct PeerVectorTests {
    static let peer = "hex-vectors/peer"

    static func load(_ path: String) throws -> IntelHexFile {
        let url = SharedFixtures.directory!.appendingPathComponent("\(peer)/\(path)")
        return try IntelHexFile(text: try SharedFixtures.bytes(url), fileName: path)
    }

    /// Every peer file except the two known-bad ones reads, and survives write → read unchanged.
    @Test func everyWellFormedPeerFileReadsAndRoundTrips() throws {
        let folders = ["bincopy", "intelhexes", "libcintelhex", "python-intelhex"]
        let urls = folders.flatMap { SharedFixtures.files(in: "\(Self.peer)/\($0)", withExtension: "hex") }
        #expect(urls.count >= 17)
        let knownBad: Set = ["partial_line.hex", "in_16bits_word_padding.hex"]
        for url in urls where !knownBad.contains(url.lastPathComponent) {
            let file = try IntelHexFile(text: try SharedFixtures.bytes(url), fileName: url.lastPathComponent)
            let rewritten = try IntelHexFile(text: HexWriter().text(for: file.memory, startAddress: file.startAddress))
            #expect(rewritten.memory == file.memory, "\(url.lastPathComponent)")
            #expect(rewritten.startAddress == file.startAddress, "\(url.lastPathComponent)")
            #expect(try file.patchingRecords([]).file.text == file.text)
        }
    }

    @Test func partialLineHasABadChecksumOnLine11() throws {
        #expect {
            _ = try Self.load("intelhexes/partial_line.hex")
        } throws: { error in
            guard let error = error as? HexReadError, case .badChecksum = error.problem else { return false }
            return error.location.line == 11
        }
    }

    /// Read as bytes, this word-addressed file puts different bytes at the same addresses.
    @Test func wordAddressedFileIsAConflict() throws {
        #expect {
            _ = try Self.load("bincopy/in_16bits_word_padding.hex")
        } throws: { error in
            guard let error = error as? HexReadError, case .conflictingData = error.problem else { return false }
            return error.location.line > 1
        }
    }

    @Test(arguments: ["addrspace-gap-start", "addrspace-gap-mid", "addrspace-gap-mid-partial"])
    func gapFilledBinaryMatchesThePeersTruth(name: String) throws {
        let file = try Self.load("intelhexes/\(name).hex")
        let truth = try SharedFixtures.bytes(
            SharedFixtures.directory!.appendingPathComponent("\(Self.peer)/intelhexes/\(name).expected.bin"))
        #expect(try file.memory.binary() == truth)
    }

    @Test func outOfOrderExtendedAddressesGiveTheSortedImage() throws {
        let unsorted = try Self.load("bincopy/issue_4_in.hex")
        let sorted = try Self.load("bincopy/issue_4_out.hex")
        #expect(unsorted.memory == sorted.memory)
        #expect(unsorted.memory.segments.map(\.start) == [0x1000E, 0x2000E])
    }

    @Test func blankLinesAreAccepted() throws {
        let file = try Self.load("bincopy/in_blank_lines.hex")
        #expect(file.memory.byteCount == 64)
        #expect(file.records.map(\.line) == [2, 4, 6])  // the file opens with a blank line
    }

    @Test func smallPeerFilesHaveTheirKnownContent() throws {
        #expect(
            try Self.load("python-intelhex/digits.hex").memory.contiguousBytes(in: 0..<10) == Array("0123456789".utf8))
        let nonlinear = try Self.load("python-intelhex/nonlinear_hexfile.hex").memory
        #expect(nonlinear.segments.map(\.start) == [0x00, 0x10, 0x110])
        let segmented = try Self.load("libcintelhex/hex1.hex")
        #expect(segmented.memory.lowestAddress == 0x10100)
        #expect(
            try Self.load("libcintelhex/big-a.hex").startAddress == .segment(codeSegment: 0, instructionPointer: 0x0400)
        )
        #expect(
            try Self.load("intelhexes/sniffer_nrf52840dk_nrf52840_7cc811f.hex").startAddress
                == .segment(codeSegment: 0, instructionPointer: 0x3605))
        #expect(try Self.load("bincopy/fill.hex").memory == Self.load("bincopy/fill_outfile_outfile.hex").memory)
    }
}

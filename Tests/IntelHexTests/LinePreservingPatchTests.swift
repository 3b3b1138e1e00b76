import Testing

@testable import IntelHex

struct LinePreservingPatchTests {
    // Two 16-byte records at 0x100 and 0x110 (CRLF, lower case), a blank line and a start record.
    static let sample =
        ":10010000000102030405060708090a0b0c0d0e0f77\r\n\r\n:10011000101112131415161718191a1b1c1d1e1f67\r\n"
        + ":040000050000011dd9\r\n:00000001ff\r\n"

    @Test func zeroChangesGiveIdenticalBytes() throws {
        let file = try IntelHexFile(string: Self.sample)
        let patched = try file.patchingRecords([])
        #expect(patched.file.text == file.text)
        #expect(patched.rewrittenLines == [])
    }

    @Test func sameBytesChangeNothing() throws {
        let file = try IntelHexFile(string: Self.sample)
        let patched = try file.patchingRecords([MemoryPatch(address: 0x10C, bytes: [0x0C, 0x0D, 0x0E, 0x0F, 0x10])])
        #expect(patched.file.text == file.text)
    }

    @Test func patchAcrossTwoRecordsRewritesExactlyThoseLines() throws {
        let file = try IntelHexFile(string: Self.sample)
        let patched = try file.patchingRecords([MemoryPatch(address: 0x10E, bytes: [0xAA, 0xBB, 0xCC, 0xDD])])
        #expect(patched.rewrittenLines == [1, 3])
        let expected =
            ":10010000000102030405060708090a0b0c0daabb2f\r\n\r\n:10011000ccdd12131415161718191a1b1c1d1e1fdf\r\n"
            + ":040000050000011dd9\r\n:00000001ff\r\n"
        #expect(String(decoding: patched.file.text, as: UTF8.self) == expected)
        // The patched text reads back to the patched memory.
        let reread = try IntelHexFile(text: patched.file.text)
        #expect(reread.memory == patched.file.memory)
        #expect(reread.memory.contiguousBytes(in: 0x10D..<0x113) == [0x0D, 0xAA, 0xBB, 0xCC, 0xDD, 0x12])
    }

    /// A DOS Ctrl-Z after the end-of-file record stays where it was.
    @Test func keepsATrailingCtrlZ() throws {
        let file = try IntelHexFile(string: ":0401000000010203F5\r\n:00000001FF\r\n\u{1A}")
        let patched = try file.patchingRecords([MemoryPatch(address: 0x100, bytes: [0xAA])])
        #expect(String(decoding: patched.file.text, as: UTF8.self) == ":04010000AA0102034B\r\n:00000001FF\r\n\u{1A}")
    }

    @Test func keepsUpperCaseAndLF() throws {
        let file = try IntelHexFile(string: ":0401000000010203F5\n:00000001FF\n")
        let patched = try file.patchingRecords([MemoryPatch(address: 0x101, bytes: [0xAB])])
        #expect(String(decoding: patched.file.text, as: UTF8.self) == ":0401000000AB02034B\n:00000001FF\n")
    }

    @Test func digitOnlyRecordFollowsTheFileCase() throws {
        // ":010100006599" has no letter digits, so its new digits follow the file's lower case.
        let file = try IntelHexFile(string: ":010100006599\n:04001000deadbeefb4\n:00000001FF\n")
        let patched = try file.patchingRecords([MemoryPatch(address: 0x100, bytes: [0xCD])])
        #expect(String(decoding: patched.file.text, as: UTF8.self).hasPrefix(":01010000cd31\n"))
    }

    @Test func identicalOverlapIsPatchedInBothRecords() throws {
        let file = try IntelHexFile(string: ":0401000000010203F5\n:020102000203F6\n:00000001FF\n")
        let patched = try file.patchingRecords([MemoryPatch(address: 0x103, bytes: [0x77])])
        #expect(patched.rewrittenLines == [1, 2])
        let reread = try IntelHexFile(text: patched.file.text)
        #expect(reread.memory.contiguousBytes(in: 0x100..<0x104) == [0, 1, 2, 0x77])
    }

    @Test func patchUnderWrappingSegmentRecord() throws {
        let file = try IntelHexFile(string: ":020000021000EC\n:08FFFC000102030405060708D9\n:00000001FF\n")
        let patched = try file.patchingRecords([MemoryPatch(address: 0x10000, bytes: [0x55])])
        let reread = try IntelHexFile(text: patched.file.text)
        #expect(reread.memory[0x10000] == 0x55)
        #expect(reread.memory[0x1FFFC] == 1)
        #expect(patched.rewrittenLines == [2])
    }

    @Test func refusesAddressesNoRecordHolds() throws {
        let file = try IntelHexFile(string: Self.sample)
        #expect(throws: HexPatchError.addressNotInFile(address: 0x120)) {
            try file.patchingRecords([MemoryPatch(address: 0x11E, bytes: [1, 2, 3])])
        }
        #expect(throws: HexPatchError.addressNotInFile(address: 0xFF)) {
            try file.patchingRecords([MemoryPatch(address: 0xFF, bytes: [1])])
        }
    }
}

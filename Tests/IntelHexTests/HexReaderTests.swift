import Testing

@testable import IntelHex

/// Known-answer vectors written from the Intel HEX specification. Checksums were computed
/// independently of this code; each case names what it exercises.
struct HexReaderValidTests {
    struct Valid: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        var segments: [(Int, [UInt8])]
        var start: StartAddress? = nil
        var testDescription: String { name }
    }

    static let validCases: [Valid] = [
        Valid(name: "one data record", text: ":0401000000010203F5\n:00000001FF\n", segments: [(0x100, [0, 1, 2, 3])]),
        Valid(
            name: "classic spec record", text: ":10010000214601360121470136007EFE09D2190140\n:00000001FF\n",
            segments: [
                (
                    0x100,
                    [0x21, 0x46, 0x01, 0x36, 0x01, 0x21, 0x47, 0x01, 0x36, 0x00, 0x7E, 0xFE, 0x09, 0xD2, 0x19, 0x01]
                )
            ]),
        Valid(
            name: "lower-case digits", text: ":04001000deadbeefb4\n:00000001ff\n",
            segments: [(0x10, [0xDE, 0xAD, 0xBE, 0xEF])]),
        Valid(name: "CRLF", text: ":0401000000010203F5\r\n:00000001FF\r\n", segments: [(0x100, [0, 1, 2, 3])]),
        Valid(name: "no final newline", text: ":0401000000010203F5\n:00000001FF", segments: [(0x100, [0, 1, 2, 3])]),
        Valid(
            name: "blank lines and trailing blanks are allowed",
            text: "\n:0401000000010203F5  \n\r\n\t\n:00000001FF\n\n",
            segments: [(0x100, [0, 1, 2, 3])]),
        Valid(name: "end-of-file only is an empty image", text: ":00000001FF\n", segments: []),
        Valid(
            name: "unsorted records",
            text: ":020102000203F6\n:0401000000010203F5\n:00000001FF\n",
            segments: [(0x100, [0, 1, 2, 3])]),
        Valid(
            name: "identical overlap is accepted", text: ":0401000000010203F5\n:020102000203F6\n:00000001FF\n",
            segments: [(0x100, [0, 1, 2, 3])]),
        Valid(
            name: "04 selects the upper address bits", text: ":020000040001F9\n:0401000000010203F5\n:00000001FF\n",
            segments: [(0x10100, [0, 1, 2, 3])]),
        Valid(
            name: "04 with a non-zero address field", text: ":021234040001B3\n:0401000000010203F5\n:00000001FF\n",
            segments: [(0x10100, [0, 1, 2, 3])]),
        Valid(
            name: "a record under 04 runs linearly across 64 KiB",
            text: ":08FFFC000102030405060708D9\n:00000001FF\n", segments: [(0xFFFC, [1, 2, 3, 4, 5, 6, 7, 8])]),
        Valid(
            name: "02 segment base", text: ":020000021000EC\n:0401000000010203F5\n:00000001FF\n",
            segments: [(0x10100, [0, 1, 2, 3])]),
        Valid(
            name: "02 offsets wrap inside the segment, as the spec says",
            text: ":020000021000EC\n:08FFFC000102030405060708D9\n:00000001FF\n",
            segments: [(0x10000, [5, 6, 7, 8]), (0x1FFFC, [1, 2, 3, 4])]),
        Valid(
            name: "04 after 02 switches back to linear",
            text: ":020000021000EC\n:020000040001F9\n:0401000000010203F5\n:00000001FF\n",
            segments: [(0x10100, [0, 1, 2, 3])]),
        Valid(
            name: "the last byte below 4 GiB", text: ":02000004FFFFFC\n:01FFFF000001\n:00000001FF\n",
            segments: [(0xFFFF_FFFF, [0])]),
        Valid(
            name: "start linear address", text: ":0401000000010203F5\n:040000050000011DD9\n:00000001FF\n",
            segments: [(0x100, [0, 1, 2, 3])], start: .linear(0x11D)),
        Valid(
            name: "start segment address", text: ":0400000312345678E5\n:00000001FF\n", segments: [],
            start: .segment(codeSegment: 0x1234, instructionPointer: 0x5678)),
        Valid(
            name: "a repeated identical start record is accepted",
            text: ":040000050000011DD9\n:040000050000011DD9\n:00000001FF\n", segments: [], start: .linear(0x11D)),
        Valid(
            name: "an empty data record holds nothing", text: ":00010000FF\n:00000001FF\n", segments: []),
        // DOS tools end a text file with a Ctrl-Z; srec_cat takes it, and so do we (it was "a record
        // after the end-of-file record").
        Valid(
            name: "a Ctrl-Z alone on the last line", text: ":0401000000010203F5\r\n:00000001FF\r\n\u{1A}",
            segments: [(0x100, [0, 1, 2, 3])]),
        Valid(
            name: "a Ctrl-Z, then a line end", text: ":0401000000010203F5\n:00000001FF\n\u{1A}\r\n",
            segments: [(0x100, [0, 1, 2, 3])]),
    ]

    @Test(arguments: validCases)
    func readsValidFile(_ vector: Valid) throws {
        let file = try IntelHexFile(string: vector.text)
        #expect(file.memory.segments.map(\.start) == vector.segments.map(\.0))
        #expect(file.memory.segments.map(\.bytes) == vector.segments.map(\.1))
        #expect(file.startAddress == vector.start)
    }

    @Test func recordsKeepTheirLinesAndFields() throws {
        let file = try IntelHexFile(string: "\n:020000040001F9\n:0401000000010203F5\n:00000001FF\n")
        #expect(file.records.map(\.line) == [2, 3, 4])
        #expect(file.records.map(\.type) == [.extendedLinearAddress, .data, .endOfFile])
        #expect(file.records[1].addressField == 0x0100)
        #expect(Array(file.payload(of: file.records[1])) == [0, 1, 2, 3])
        #expect(file.records[1].textOffset == 17)
    }

    @Test func beaconDocumentRecordDecodes() throws {
        // beacon-formats.md §8.4: this record's checksum is 0xE9.
        let file = try IntelHexFile(string: ":1001E3000201060303D8FE0A16D8FE00C5004142E9\n:00000001FF\n")
        #expect(file.memory.contiguousBytes(in: 0x1E3..<0x1E6) == [0x02, 0x01, 0x06])
    }
}

/// Malformed vectors: each must be rejected at the exact line and column with the right problem.
struct HexReaderMalformedTests {
    struct Malformed: CustomTestStringConvertible, Sendable {
        var name: String
        var text: [UInt8]
        var line: Int
        var column: Int
        var problem: HexReadProblem
        var testDescription: String { name }

        init(_ name: String, _ text: String, line: Int, column: Int, _ problem: HexReadProblem) {
            self.init(name, Array(text.utf8), line: line, column: column, problem)
        }

        init(_ name: String, _ text: [UInt8], line: Int, column: Int, _ problem: HexReadProblem) {
            self.name = name
            self.text = text
            self.line = line
            self.column = column
            self.problem = problem
        }

        /// Whether `error` is this vector's problem at its spot in `bad.hex`.
        func matches(_ error: any Error) -> Bool {
            guard let error = error as? HexReadError else { return false }
            return error.location == SourceLocation(file: "bad.hex", line: line, column: column)
                && error.problem == problem
        }
    }

    static let malformedCases: [Malformed] = [
        Malformed(
            "bad checksum", ":0401000000010203F4\n:00000001FF\n", line: 1, column: 18,
            .badChecksum(found: 0xF4, expected: 0xF5)),
        Malformed(
            "plus sign is not a digit", ":01000000+1FE\n:00000001FF\n", line: 1, column: 10, .badDigit(found: 0x2B)),
        Malformed(
            "minus sign is not a digit", ":01000000-1FE\n:00000001FF\n", line: 1, column: 10, .badDigit(found: 0x2D)),
        Malformed("letter G", ":0401000000010G03F5\n:00000001FF\n", line: 1, column: 15, .badDigit(found: 0x47)),
        Malformed("bad digit in the byte count", ":x401000000010203F5\n", line: 1, column: 2, .badDigit(found: 0x78)),
        Malformed("space inside a record", ":04010000 0010203F5\n", line: 1, column: 10, .badDigit(found: 0x20)),
        Malformed(
            "byte count larger than the line", ":0501000000010203F5\n:00000001FF\n", line: 1, column: 20,
            .truncated(declaredDataBytes: 5, expectedCharacters: 21, foundCharacters: 19)),
        Malformed(
            "byte count smaller than the line", ":0301000000010203F5\n:00000001FF\n", line: 1, column: 18,
            .byteCountMismatch(declaredDataBytes: 3, expectedCharacters: 17, foundCharacters: 19)),
        Malformed(
            "truncated line", ":0401000000\n", line: 1, column: 12,
            .truncated(declaredDataBytes: 4, expectedCharacters: 19, foundCharacters: 11)),
        Malformed(
            "line cut in the middle of the header", ":04010\n", line: 1, column: 7,
            .truncated(declaredDataBytes: nil, expectedCharacters: 11, foundCharacters: 6)),
        Malformed("unknown record type", ":00000006FA\n:00000001FF\n", line: 1, column: 8, .unknownRecordType(6)),
        Malformed(
            "end-of-file with a payload", ":0100000100FE\n", line: 1, column: 2,
            .wrongPayloadLength(recordType: 1, expected: 0, found: 1)),
        Malformed(
            "short 02", ":0100000210ED\n:00000001FF\n", line: 1, column: 2,
            .wrongPayloadLength(recordType: 2, expected: 2, found: 1)),
        Malformed(
            "short 05", ":03000005000001F7\n:00000001FF\n", line: 1, column: 2,
            .wrongPayloadLength(recordType: 5, expected: 4, found: 3)),
        Malformed(
            "data after end-of-file", ":00000001FF\n:0401000000010203F5\n", line: 2, column: 1,
            .dataAfterEndOfFile(endOfFileLine: 1)),
        Malformed(
            "a Ctrl-Z before more records", ":00000001FF\n\u{1A}\n:00000001FF\n", line: 2, column: 1,
            .dataAfterEndOfFile(endOfFileLine: 1)),
        Malformed(
            "a Ctrl-Z before the end-of-file record", ":0401000000010203F5\n\u{1A}\n:00000001FF\n", line: 2,
            column: 1, .missingColon(found: 0x1A)),
        Malformed("missing end-of-file", ":0401000000010203F5\n", line: 1, column: 1, .missingEndOfFile),
        Malformed("empty file", "", line: 1, column: 1, .missingEndOfFile),
        Malformed(
            "conflicting overlap", ":0401000000010203F5\n:02010200AA034E\n:00000001FF\n", line: 2, column: 10,
            .conflictingData(address: 0x102, byte: 0xAA, otherByte: 0x02, otherLine: 1)),
        Malformed(
            "conflicting overlap, later line sorts first", ":02010200AA034E\n:0401000000010203F5\n:00000001FF\n",
            line: 2, column: 14, .conflictingData(address: 0x102, byte: 0x02, otherByte: 0xAA, otherLine: 1)),
        Malformed(
            "conflicting start records", ":040000050000011DD9\n:040000050000011ED8\n:00000001FF\n", line: 2,
            column: 10, .conflictingStartAddress(start: .linear(0x11E), otherStart: .linear(0x11D), otherLine: 1)),
        Malformed(
            "03 and 05 together", ":040000050000011DD9\n:0400000312345678E5\n:00000001FF\n", line: 2, column: 10,
            .conflictingStartAddress(
                start: .segment(codeSegment: 0x1234, instructionPointer: 0x5678), otherStart: .linear(0x11D),
                otherLine: 1)),
        Malformed(
            "data past 4 GiB",
            ":02000004FFFFFC\n:20FFF000000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F01\n",
            line: 2, column: 42, .addressBeyond4GiB(address: 0x1_0000_0000)),
        Malformed("missing colon", "0401000000010203F5\n", line: 1, column: 1, .missingColon(found: 0x30)),
        Malformed("leading space", " :0401000000010203F5\n", line: 1, column: 1, .missingColon(found: 0x20)),
        Malformed(
            "byte-order mark", [0xEF, 0xBB, 0xBF] + Array(":00000001FF\n".utf8), line: 1, column: 1, .byteOrderMark),
        Malformed("NUL byte", [0x3A, 0x30, 0x00] + Array("000001FF\n".utf8), line: 1, column: 3, .badDigit(found: 0)),
        // Something after a whole record is named as such (it was "expected a hexadecimal digit").
        Malformed(
            "lone carriage returns are not line ends", ":00000001FF\r:00000001FF\r", line: 1, column: 12,
            .textAfterRecord(found: 0x0D)),
        Malformed(
            "a vertical tab after the checksum", ":0401000000010203F5\u{0B}\n:00000001FF\n", line: 1, column: 20,
            .textAfterRecord(found: 0x0B)),
        Malformed(
            "digits after a space after the checksum", ":0401000000010203F5 12\n:00000001FF\n", line: 1, column: 21,
            .textAfterRecord(found: 0x31)),
        Malformed(
            "text after spaces after the checksum", ":0401000000010203F5 \t;note\n:00000001FF\n", line: 1,
            column: 22, .textAfterRecord(found: 0x3B)),
    ]

    @Test(arguments: malformedCases)
    func rejectsMalformedFile(_ vector: Malformed) {
        #expect { _ = try IntelHexFile(text: vector.text, fileName: "bad.hex") } throws: { vector.matches($0) }
    }

    @Test func messagesNameFileLineColumnAndReason() {
        do {
            _ = try IntelHexFile(string: ":0401000000010203F4\n:00000001FF\n", fileName: "station.hex")
            Issue.record("accepted a bad checksum")
        } catch {
            #expect(
                error.description == "station.hex:1:18: bad checksum: the record ends in 0xF4 but its bytes need 0xF5")
        }
        // An address is written as every other: with its 0x.
        let beyond = HexReadError(
            location: SourceLocation(file: "big.hex", line: 2, column: 42),
            problem: .addressBeyond4GiB(address: 1 << 32))
        #expect(
            beyond.description == "big.hex:2:42: address 0x100000000 is beyond 4 GiB (0xFFFFFFFF is the last address)")
    }

    @Test func everyProblemHasAPlainWordsReason() {
        for vector in Self.malformedCases {
            let error = HexReadError(location: SourceLocation(file: nil, line: 1, column: 1), problem: vector.problem)
            #expect(error.reason.count > 20, "\(vector.name)")
            #expect(!error.reason.contains("Optional"), "\(vector.name)")
        }
    }
}

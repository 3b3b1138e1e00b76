import TestSupport
import Testing

@testable import IntelHex

/// `HexImage`, the reader of the commands that need only the memory (convert, inspect, verify,
/// flash): the image and the errors of `IntelHexFile`, without its copies of the data.
struct HexImageTests {
    @Test(arguments: HexReaderValidTests.validCases)
    func readsWhatTheFullReaderReads(_ vector: HexReaderValidTests.Valid) throws {
        let file = try IntelHexFile(string: vector.text)
        let image = try HexImage(text: Array(vector.text.utf8))
        #expect(image.memory == file.memory)
        #expect(image.startAddress == file.startAddress)
    }

    @Test(arguments: HexReaderMalformedTests.malformedCases)
    func rejectsWhatTheFullReaderRejectsWhereItDoes(_ vector: HexReaderMalformedTests.Malformed) {
        #expect { _ = try HexImage(text: vector.text, fileName: "bad.hex") } throws: { vector.matches($0) }
    }

    /// The structural guard for large files: records in address order, as toolchains write them
    /// (gaps, an 04 per 64 KiB page, a start record, any record length and line ending), are read
    /// without the record table, whose records, placements and payload store each held the file's
    /// data or more a second time. The data is decoded once, into the segments.
    @Test(arguments: [
        (16, HexWriter.LineEnding.lf, false), (32, .crlf, true), (255, .lf, false), (1, .crlf, false),
    ])
    func filesInAddressOrderAreReadWithoutTheRecordTable(
        recordLength: Int, lineEnding: HexWriter.LineEnding, lowercase: Bool
    ) throws {
        var memory = MemoryImage()
        for (start, count) in [(0x0, 0x3000), (0x3100, 0x10), (0xFFF0, 0x40), (0x2_0000, 0x1_2345), (0x9_0001, 7)] {
            try memory.write((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ start) }, at: start)
        }
        let text = HexWriter(recordLength: recordLength, lineEnding: lineEnding, lowercase: lowercase)
            .text(for: memory, startAddress: .linear(0x1234))
        let image = try HexImage(text: text)
        #expect(!image.neededRecordTable)
        #expect(image.memory == memory)
        #expect(image.memory.segments.count == 5)
        #expect(image.startAddress == .linear(0x1234))
    }

    /// What only the table can settle (records going back in address, overlaps, an 02 record that
    /// wraps) is handed to it, with the same result as `IntelHexFile`.
    @Test(arguments: [
        ("going back", ":020102000203F6\n:0401000000010203F5\n:00000001FF\n"),
        ("identical overlap", ":0401000000010203F5\n:020102000203F6\n:00000001FF\n"),
        ("02 wrap", ":020000021000EC\n:04FFFE00AABBCCDDF1\n:00000001FF\n"),
        ("04 going back", ":020000040001F9\n:0100000011EE\n:020000040000FA\n:0100000022DD\n:00000001FF\n"),
    ])
    func whatOnlyTheTableSettlesGoesToIt(name: String, text: String) throws {
        let image = try HexImage(text: Array(text.utf8))
        #expect(image.neededRecordTable, "\(name)")
        #expect(image.memory == (try IntelHexFile(string: text)).memory)
    }
}

/// The writer sizes its output once from a bound on the records; whatever the image, record
/// length, line ending and start address, the text fits it and reads back to the same image.
struct HexWriterBoundTests {
    @Test(arguments: [1, 2, 3, 16, 32, 255])
    func everyImageFitsAndReadsBack(recordLength: Int) throws {
        var generator = SeededGenerator(seed: UInt64(recordLength))  // seeded: the same images every run
        for round in 0..<40 {
            var image = MemoryImage()
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let start = Int.random(in: 0..<0x30000, using: &generator)
                let count = Int.random(in: 1...(round % 4 == 0 ? 0x11000 : 300), using: &generator)
                try image.write((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) }, at: start)
            }
            let start: StartAddress? =
                round % 3 == 0
                ? .linear(0x1234_5678) : round % 3 == 1 ? nil : .segment(codeSegment: 1, instructionPointer: 2)
            for ending in HexWriter.LineEnding.allCases {
                let text = HexWriter(recordLength: recordLength, lineEnding: ending).text(
                    for: image, startAddress: start)
                let read = try HexImage(text: text)
                #expect(read.memory == image)
                #expect(read.startAddress == start)
            }
        }
    }
}

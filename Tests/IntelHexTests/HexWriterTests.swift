import Testing

@testable import IntelHex

struct HexWriterTests {
    @Test func writesKnownAnswerText() throws {
        let image = try MemoryImage(bytes: [0, 1, 2, 3], at: 0x100)
        let text = String(decoding: HexWriter().text(for: image, startAddress: .linear(0x11D)), as: UTF8.self)
        #expect(text == ":0401000000010203F5\n:040000050000011DD9\n:00000001FF\n")
    }

    @Test func writesSegmentStartAndCRLFAndLowercase() throws {
        let image = try MemoryImage(bytes: [0xDE, 0xAD, 0xBE, 0xEF], at: 0x10)
        let writer = HexWriter(lineEnding: .crlf, lowercase: true)
        let text = String(
            decoding: writer.text(for: image, startAddress: .segment(codeSegment: 0x1234, instructionPointer: 0x5678)),
            as: UTF8.self)
        #expect(text == ":04001000deadbeefb4\r\n:0400000312345678e5\r\n:00000001ff\r\n")
    }

    @Test func emptyImageIsJustEndOfFile() {
        #expect(String(decoding: HexWriter().text(for: MemoryImage()), as: UTF8.self) == ":00000001FF\n")
    }

    @Test(arguments: [16, 32, 1, 255, 20])
    func recordsAlignAndNeverCross64KiB(recordLength: Int) throws {
        // Data from 0xFFF3 to 0x20009 crosses two page boundaries at unaligned offsets.
        let bytes = (0..<(0x20009 - 0xFFF3)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let image = try MemoryImage(bytes: bytes, at: 0xFFF3)
        let text = HexWriter(recordLength: recordLength).text(for: image)
        let reread = try IntelHexFile(text: text)
        #expect(reread.memory == image)
        var pages: [Int] = []
        var page = 0
        for record in reread.records {
            switch record.type {
            case .extendedLinearAddress:
                page = Int(reread.payload(of: record).first!) << 8 | Int(reread.payload(of: record).last!)
                pages.append(page)
            case .data:
                #expect(record.byteCount <= recordLength)
                #expect(Int(record.addressField) + record.byteCount <= 0x10000, "record crosses 64 KiB")
                // Records after the first of a run start on a multiple of the record length.
                let address = page << 16 | Int(record.addressField)
                #expect(address == 0xFFF3 || address % recordLength == 0 || address % 0x10000 == 0)
            default: break
            }
        }
        #expect(pages == [0, 1, 2])
    }

    @Test func noExtendedAddressBelow64KiB() throws {
        let image = try MemoryImage(bytes: [UInt8](repeating: 0xAB, count: 0x10000), at: 0)
        let reread = try IntelHexFile(text: HexWriter(recordLength: 32).text(for: image))
        #expect(!reread.records.contains { $0.type == .extendedLinearAddress })
        #expect(reread.records.count == 0x10000 / 32 + 1)
        #expect(reread.memory == image)
    }
}

import HexText
import Testing

/// The one hex formatter and `XX:XX:…` parser every module uses.
struct HexTextTests {
    @Test func formatsInUpperCaseWithPadding() {
        #expect(HexText.digits(0x7F, width: 4) == "007F")
        #expect(HexText.digits(0x12345, width: 4) == "12345")
        #expect(HexText.address(0x7F00) == "0x7F00")
        #expect(HexText.address(UInt32(0x4343_424C), width: 8) == "0x4343424C")
        #expect(HexText.byte(0x0A) == "0A")
        #expect(HexText.bytes([2, 1, 6], separator: " ") == "02 01 06")
        #expect(HexText.colonSeparated([0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56]) == "C0:FF:EE:12:34:56")
    }

    @Test(arguments: [
        ("C0:FF:EE:12:34:56", [UInt8]([0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56])),
        ("c0:ff:ee:12:34:56", [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56]),
        ("C0:FF:EE:12:34", nil), ("C0:FF:EE:12:34:56:78", nil), ("C0:FF:EE:12:34:5", nil),
        ("C0-FF-EE-12-34-56", nil), ("C0:FF:EE:12:34:5G", nil), ("C0:FF:EE:12:34:+5", nil),
        ("C0:FF:EE:12:34:\u{FF15}\u{FF16}", nil), (":FF:EE:12:34:56", nil), ("", nil),
    ])
    func parsesExactlySixPairs(text: String, bytes: [UInt8]?) {
        #expect(HexText.parseColonSeparated(text, count: 6) == bytes)
    }
}

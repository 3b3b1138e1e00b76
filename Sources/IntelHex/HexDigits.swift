/// Hex digit decoding and encoding on ASCII bytes.
///
/// Decoding is done from a table rather than `Int(_:radix:)`, which accepts a leading `+` or `-`
/// and so lets records such as `:01000000+1FE` through (or traps on `-1`).
enum HexDigits {
    /// 0x00–0x0F for a hex digit, 0xFF for anything else.
    static let nibbleValue: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (offset, character) in "0123456789".utf8.enumerated() { table[Int(character)] = UInt8(offset) }
        for (offset, character) in "ABCDEF".utf8.enumerated() { table[Int(character)] = UInt8(10 + offset) }
        for (offset, character) in "abcdef".utf8.enumerated() { table[Int(character)] = UInt8(10 + offset) }
        return table
    }()

    static let upper: [UInt8] = Array("0123456789ABCDEF".utf8)
    static let lower: [UInt8] = Array("0123456789abcdef".utf8)

    static func isDigit(_ character: UInt8) -> Bool { nibbleValue[Int(character)] != 0xFF }

    static func isLetterDigit(_ character: UInt8) -> (upper: Bool, lower: Bool) {
        ((0x41...0x46).contains(character), (0x61...0x66).contains(character))
    }

    /// Every byte's two digits as one little-endian `UInt16` (the first digit in the low byte),
    /// so the writer stores a byte's text with one unaligned 2-byte store.
    static let upperPairs: [UInt16] = pairs(upper)
    static let lowerPairs: [UInt16] = pairs(lower)

    static func pairs(_ alphabet: [UInt8]) -> [UInt16] {
        (0..<256).map { UInt16(alphabet[$0 >> 4]) | UInt16(alphabet[$0 & 0x0F]) << 8 }
    }
}

/// Where UTF-8 text goes wrong. The parsers decode text with `String(decoding:as:)`, which turns
/// every invalid sequence into U+FFFD without a word; they look here first and refuse the file at
/// the first bad byte instead, so that a name is never stored other than as written.
enum UTF8Validation {
    /// The offset of the first byte that does not begin (or continue) a valid UTF-8 sequence
    /// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or `nil` when all of
    /// `bytes` is valid. A sequence cut short is reported at its first byte.
    static func firstInvalidByte(in bytes: [UInt8], from start: Int = 0) -> Int? {
        var offset = start
        while offset < bytes.count {
            let lead = bytes[offset]
            if lead < 0x80 {
                offset += 1
                continue
            }
            // The length of the sequence, and the range its second byte must fall in (the first
            // byte alone cannot exclude overlong forms, surrogates and values above U+10FFFF).
            let length: Int
            var second: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: (length, second) = (3, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: (length, second) = (3, 0x80...0x9F)
            case 0xF0: (length, second) = (4, 0x90...0xBF)
            case 0xF1...0xF3: length = 4
            case 0xF4: (length, second) = (4, 0x80...0x8F)
            default: return offset
            }
            guard offset + length <= bytes.count, second.contains(bytes[offset + 1]),
                bytes[(offset + 2)..<(offset + length)].allSatisfy({ $0 & 0xC0 == 0x80 })
            else { return offset }
            offset += length
        }
        return nil
    }

    /// `invalid UTF-8 (byte 0xFF); save the file as UTF-8`.
    static func message(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "invalid UTF-8 (byte 0x\(digits.count == 1 ? "0" : "")\(digits)); save the file as UTF-8"
    }
}

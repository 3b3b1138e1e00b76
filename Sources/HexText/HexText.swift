/// The one place ccbeacon writes numbers and bytes in hexadecimal — upper case, as TI's tools and
/// the datasheets print them — and reads `XX:XX:…` addresses back. (Content digests are the
/// exception: SHA-256 is written in lower case, as `sha256sum` prints it.)
public enum HexText {
    /// `value` in upper-case hex digits, zero-padded to at least `width`: `digits(0x7F, width: 4)`
    /// is `007F`.
    public static func digits(_ value: some BinaryInteger, width: Int = 1) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// `0x7F00`: the digits with `0x`, at least `width` of them.
    public static func address(_ value: some BinaryInteger, width: Int = 1) -> String {
        "0x" + digits(value, width: width)
    }

    /// One byte as two digits, `0A`.
    public static func byte(_ byte: UInt8) -> String { digits(byte, width: 2) }

    /// Bytes as two digits each, joined by `separator`: `02 01 06`, `020106`.
    public static func bytes(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        bytes.map(byte).joined(separator: separator)
    }

    /// Bytes written `C0:FF:EE:12:34:56`, the form BLE and IEEE addresses are printed in.
    public static func colonSeparated(_ bytes: some Sequence<UInt8>) -> String { self.bytes(bytes, separator: ":") }

    /// The bytes of `XX:XX:…`: exactly `count` groups of two hex digits (either case) joined by
    /// colons; nil for anything else.
    public static func parseColonSeparated(_ text: String, count: Int) -> [UInt8]? {
        let groups = text.split(separator: ":", omittingEmptySubsequences: false)
        guard groups.count == count else { return nil }
        var result: [UInt8] = []
        for group in groups {
            guard group.count == 2, group.allSatisfy({ $0.isASCII && $0.isHexDigit }),
                let value = UInt8(group, radix: 16)
            else {
                return nil
            }
            result.append(value)
        }
        return result
    }

    /// The bytes of an even number of hex digits (either case) with nothing between them
    /// (`020106`); nil for anything else.
    public static func parseContiguous(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
        }
        return result
    }

    static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

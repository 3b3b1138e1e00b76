import BeaconPayload
import CommandLineKit
import HexText
import IntelHex
import Provisioning
import StructuredText

#if canImport(Glibc)
    import Glibc
#endif

/// Parsing of the numeric option values the commands share (addresses, ranges, bytes).
enum Values {
    /// Seconds written as a decimal number (`600`, `0.5`) within `range`: Double() alone would
    /// also take `0x10` (16) and `inf`.
    static func seconds(_ text: String, option: String, in range: ClosedRange<Double>) throws(CommandFailure)
        -> Double
    {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(text),
            range.contains(value)
        else {
            // Examples the range takes: 10 and 0.5 where it can.
            let examples = [10, 0.5, 1.5, range.upperBound].filter(range.contains).prefix(2)
                .map(ProvisioningRun.seconds).joined(separator: " or ")
            throw .usage(
                "\(option) '\(text)' must be a number of seconds, \(ProvisioningRun.seconds(range.lowerBound))…\(ProvisioningRun.seconds(range.upperBound)) (decimal, e.g. \(examples))"
            )
        }
        return value
    }

    /// A BLE device address written `XX:XX:XX:XX:XX:XX`, most significant byte first.
    static func deviceAddress(_ text: String, option: String) throws(CommandFailure) -> [UInt8] {
        guard let bytes = RandomStaticAddress.bytes(parsing: text) else {
            throw .usage("\(option) '\(text)' must be 6 bytes as XX:XX:XX:XX:XX:XX (most significant first)")
        }
        return bytes
    }

    /// An address: decimal or `0x` hex, 0…0xFFFFFFFF (or up to 4 GiB itself when `allowEnd`).
    static func address(_ text: String, option: String, allowEnd: Bool = false) throws(CommandFailure) -> Int {
        let limit = allowEnd ? MemoryImage.addressLimit : MemoryImage.addressLimit - 1
        guard let value = integer(text), value <= limit else {
            throw .usage(
                "\(option) '\(text)' is not an address; use decimal or 0x hex from 0 to \(HexText.address(limit))"
            )
        }
        return value
    }

    /// A half-open range `START:END` (END exclusive), each an address.
    static func range(_ text: String, option: String) throws(CommandFailure) -> Range<Int> {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw .usage(
                "\(option) '\(text)' is not a range; write START:END with END exclusive, e.g. 0:0x40000")
        }
        let start = try address(String(parts[0]), option: option)
        let end = try address(String(parts[1]), option: option, allowEnd: true)
        guard start < end else {
            throw .usage("\(option) '\(text)' is empty; END is exclusive and must be greater than START")
        }
        return start..<end
    }

    /// A byte: decimal 0…255 or `0x` hex.
    static func byte(_ text: String, option: String) throws(CommandFailure) -> UInt8 {
        guard let value = integer(text), value <= 0xFF else {
            throw .usage("\(option) '\(text)' is not a byte; use 0…255 or 0x00…0xFF")
        }
        return UInt8(value)
    }

    /// Hex bytes, optionally with spaces, `:` or `-` between them, optionally `0x`-prefixed.
    static func hexBytes(_ text: String, option: String) throws(CommandFailure) -> [UInt8] {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        let clean = digits.filter { $0 != " " && $0 != ":" && $0 != "-" }
        var result: [UInt8] = []
        var pending: UInt8?
        for character in clean {
            guard let nibble = character.hexDigitValue, character.isASCII else {
                throw .usage(
                    "\(option) '\(text)' contains '\(String(character))', which is not a hex digit")
            }
            if let high = pending {
                result.append(high << 4 | UInt8(nibble))
                pending = nil
            } else {
                pending = UInt8(nibble)
            }
        }
        guard pending == nil, !result.isEmpty else {
            throw .usage(
                "\(option) '\(text)' must be a whole number of bytes (an even count of hex digits, at least 2)"
            )
        }
        return result
    }

    /// An output folder as messages name it: "out/" and "out" are the same folder, and a message
    /// that appends "/NAME" must not double the slash.
    static func folder(_ given: String) -> String {
        given.count > 1 && given.hasSuffix("/") ? String(given.dropLast()) : given
    }

    /// Decimal or `0x` hex without sign; `nil` for anything else (a sign included).
    static func integer(_ text: String) -> Int? {
        guard !text.hasPrefix("-") else { return nil }
        return JSONObjectReader.parseInteger(text)
    }

    /// A bench name: 1–63 letters, digits, `.`, `_` or `-`, starting with a letter or digit (a
    /// host name is one; it also names the bench's journal file).
    static func benchName(_ text: String, option: String) throws(CommandFailure) -> String {
        let allowed = text.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
        }
        guard (1...63).contains(text.utf8.count), allowed, let first = text.unicodeScalars.first,
            first.properties.isAlphabetic || ("0"..."9").contains(first)
        else {
            throw .usage(
                "\(option) '\(text.excerpt())' is not a bench name: 1–63 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        }
        return text
    }

    /// This machine's host name as a bench name, or a usage error saying why it cannot be one.
    static func hostBenchName() throws(CommandFailure) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { throw .usage("the host name cannot be read") }
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return try benchName(host, option: "the host name")
    }
}

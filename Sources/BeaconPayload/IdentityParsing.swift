import StructuredText

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A beacon identity field that could not be accepted: which field, the input, what was wrong and
/// what is allowed.
public struct IdentityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The fields a user spells out on the command line or in a station list.
    public enum Field: String, Sendable, Equatable {
        /// The proximity UUID.
        case uuid
        /// The major number.
        case major
        /// The minor number.
        case minor
        /// A power in dBm (measured power, TX power).
        case power
        /// The Flags AD value.
        case flags
        /// AltBeacon's company ID.
        case company
        /// AltBeacon's manufacturer-reserved byte.
        case reserved
        /// Eddystone-UID's namespace.
        case namespace
        /// Eddystone-UID's instance.
        case instance
        /// Eddystone-URL's URL.
        case url
    }

    /// Which field.
    public var field: Field
    /// The text as given.
    public var input: String
    /// What was wrong with it.
    public var problem: String
    /// What the field accepts.
    public var allowed: String

    /// Creates an error.
    public init(field: Field, input: String, problem: String, allowed: String) {
        self.field = field
        self.input = input
        self.problem = problem
        self.allowed = allowed
    }

    /// `major: '70000' is out of range; allowed: 0…65535, or 0x0000…0xFFFF`.
    public var description: String {
        "\(field.rawValue): '\(input.excerpt())' \(problem); allowed: \(allowed)"
    }
}

/// Parsers for the identity spellings in design.md. Surrounding spaces and tabs are ignored, so
/// values cut from a CSV cell parse the same as from a command line.
public enum IdentityParser {
    static let uuidAllowed =
        "8-4-4-4-12 hex digits (7634A485-1732-4B7D-AB44-D505D8A24C60) or 32 hex digits, any case"

    /// Parses a UUID written as `8-4-4-4-12` or as 32 hex digits, in either case.
    public static func uuid(_ text: String) throws(IdentityError) -> UUID {
        let bytes = try hexBytes(
            text, field: .uuid, count: 16, allowed: uuidAllowed, hyphenGroups: [8, 4, 4, 4, 12])
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// Parses a 16-bit unsigned value: decimal 0…65535 or `0x` hex 0x0000…0xFFFF.
    public static func uint16(_ text: String, field: IdentityError.Field) throws(IdentityError) -> UInt16 {
        let allowed = "0…65535 (decimal) or 0x0000…0xFFFF (hex)"
        return UInt16(try integer(text, field: field, range: 0...0xFFFF, hexDigits: 4, allowed: allowed))
    }

    /// Parses an 8-bit unsigned value: decimal 0…255 or `0x` hex 0x00…0xFF.
    public static func uint8(_ text: String, field: IdentityError.Field) throws(IdentityError) -> UInt8 {
        UInt8(try integer(text, field: field, range: 0...0xFF, hexDigits: 2, allowed: "0…255 or 0x00…0xFF"))
    }

    /// Parses a signed dBm value (`-59`, `+4`) or a raw two's-complement byte in hex (`0xC5` = -59),
    /// within `range`.
    public static func dBm(
        _ text: String, field: IdentityError.Field = .power, range: ClosedRange<Int> = -128...127
    ) throws(IdentityError) -> Int8 {
        let trimmed = trim(text)
        let allowed = "signed dBm \(range.lowerBound)…\(range.upperBound), or a 0x byte (0xC5 = -59)"
        if isHexPrefixed(trimmed) {
            let byte = try integer(text, field: field, range: 0...0xFF, hexDigits: 2, allowed: allowed)
            let value = Int(Int8(bitPattern: UInt8(byte)))
            guard range.contains(value) else {
                throw IdentityError(
                    field: field, input: text, problem: "is \(value) dBm, out of range", allowed: allowed)
            }
            return Int8(value)
        }
        var digits = Substring(trimmed)
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw IdentityError(
                field: field, input: text, problem: trimmed.isEmpty ? "is empty" : "is not a number",
                allowed: allowed)
        }
        guard digits.count <= 4, let magnitude = Int(digits), range.contains(negative ? -magnitude : magnitude) else {
            throw IdentityError(field: field, input: text, problem: "is out of range", allowed: allowed)
        }
        return Int8(negative ? -magnitude : magnitude)
    }

    /// Parses exactly `count` bytes of hex digits (optionally `0x`-prefixed; spaces, `:` and `-`
    /// between bytes are ignored), for Eddystone namespaces and instances.
    public static func hexBytes(_ text: String, field: IdentityError.Field, count: Int) throws(IdentityError) -> [UInt8]
    {
        try hexBytes(text, field: field, count: count, allowed: "\(count * 2) hex digits", hyphenGroups: nil)
    }

    // MARK: - Shared machinery

    static func trim(_ text: String) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    static func isHexPrefixed(_ text: String) -> Bool { text.hasPrefix("0x") || text.hasPrefix("0X") }

    static func nibble(_ character: Character) -> UInt8? {
        guard let ascii = character.asciiValue else { return nil }
        switch ascii {
        case 0x30...0x39: return ascii - 0x30
        case 0x41...0x46: return ascii - 0x41 + 10
        case 0x61...0x66: return ascii - 0x61 + 10
        default: return nil
        }
    }

    static func integer(
        _ text: String, field: IdentityError.Field, range: ClosedRange<Int>, hexDigits: Int, allowed: String
    ) throws(IdentityError) -> Int {
        let trimmed = trim(text)
        guard !trimmed.isEmpty else {
            throw IdentityError(field: field, input: text, problem: "is empty", allowed: allowed)
        }
        if isHexPrefixed(trimmed) {
            let digits = trimmed.dropFirst(2)
            guard !digits.isEmpty else {
                throw IdentityError(field: field, input: text, problem: "has no digits after 0x", allowed: allowed)
            }
            var value = 0
            for character in digits {
                guard let nibble = nibble(character) else {
                    throw IdentityError(
                        field: field, input: text,
                        problem: "contains '\(String(character))', which is not a hex digit",
                        allowed: allowed)
                }
                value = value << 4 | Int(nibble)
                if value > range.upperBound {
                    throw IdentityError(field: field, input: text, problem: "is out of range", allowed: allowed)
                }
            }
            return value
        }
        if trimmed.hasPrefix("-") {
            throw IdentityError(field: field, input: text, problem: "is negative", allowed: allowed)
        }
        var value = 0
        for character in trimmed {
            guard character.isASCII, let digit = character.wholeNumberValue else {
                throw IdentityError(
                    field: field, input: text,
                    problem:
                        "is not a number ('\(String(character))' is not a decimal digit; hex needs a 0x prefix)",
                    allowed: allowed)
            }
            value = value * 10 + digit
            if value > range.upperBound {
                throw IdentityError(field: field, input: text, problem: "is out of range", allowed: allowed)
            }
        }
        return value
    }

    static func hexBytes(
        _ text: String, field: IdentityError.Field, count: Int, allowed: String, hyphenGroups: [Int]?
    ) throws(IdentityError) -> [UInt8] {
        var trimmed = Substring(trim(text))
        guard !trimmed.isEmpty else {
            throw IdentityError(field: field, input: text, problem: "is empty", allowed: allowed)
        }
        // Positions count characters of the input as written, so the user can find the culprit.
        var leading = text.prefix { $0 == " " || $0 == "\t" }.count
        if hyphenGroups == nil, isHexPrefixed(String(trimmed)) {
            trimmed = trimmed.dropFirst(2)
            leading += 2
        }
        let separators: Set<Character> = hyphenGroups == nil ? [" ", ":", "-"] : ["-"]
        var nibbles: [UInt8] = []
        for (offset, character) in trimmed.enumerated() where !separators.contains(character) {
            guard let value = nibble(character) else {
                throw IdentityError(
                    field: field, input: text,
                    problem:
                        "contains '\(String(character))' at position \(leading + offset + 1), which is not a hex digit",
                    allowed: allowed)
            }
            nibbles.append(value)
        }
        if let groups = hyphenGroups, trimmed.contains("-") {
            let parts = trimmed.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.map(\.count) == groups else {
                throw IdentityError(
                    field: field, input: text,
                    problem:
                        "has hyphens in the wrong places (groups of \(parts.map { String($0.count) }.joined(separator: "-")) digits)",
                    allowed: allowed)
            }
        }
        guard nibbles.count == count * 2 else {
            throw IdentityError(
                field: field, input: text, problem: "has \(nibbles.count) hex digits instead of \(count * 2)",
                allowed: allowed)
        }
        return stride(from: 0, to: nibbles.count, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] }
    }
}

extension UUID {
    /// The 16 bytes in string order.
    public var bytes: [UInt8] {
        let u = uuid
        return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }

    /// Builds a UUID from 16 bytes in string order; `nil` for any other count.
    public init?(bytes: some Collection<UInt8>) {
        let b = Array(bytes)
        guard b.count == 16 else { return nil }
        self.init(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }
}

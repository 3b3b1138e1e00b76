import HexText
import StructuredText

/// Why an advertiser address or advertising interval was refused.
public enum AdvertisingSettingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not six colon-separated hex bytes.
    case addressSyntax(String)
    /// The two most significant bits are not both 1.
    case notRandomStatic(String)
    /// The 46 random bits are all 0 or all 1, which the spec forbids.
    case reservedAddress(String)
    /// Not a number of milliseconds.
    case intervalSyntax(String)
    /// Outside 20 ms … 10.24 s.
    case intervalOutOfRange(String)
    /// Not a whole number of 0.625 ms units.
    case intervalNotAStep(String, below: String, above: String)

    /// What is wrong, in words for the command line.
    public var description: String {
        switch self {
        case .addressSyntax(let text):
            "'\(text.excerpt())' is not a device address; write 6 bytes as XX:XX:XX:XX:XX:XX (most significant first)"
        case .notRandomStatic(let text):
            "'\(text.excerpt())' is not a random static address: its two top bits must be 1 (first byte C0…FF)"
        case .reservedAddress(let text):
            "'\(text.excerpt())' is not a valid random static address: its 46 random bits must not be all 0 or all 1"
        case .intervalSyntax(let text):
            "'\(text.excerpt())' is not an interval in milliseconds (e.g. 100 or 152.5)"
        case .intervalOutOfRange(let text):
            "advertising interval \(text) ms is outside the BLE range of 20 ms to 10240 ms"
        case .intervalNotAStep(let text, let below, let above):
            "advertising interval \(text) ms is not a multiple of 0.625 ms; the nearest are \(below) and \(above)"
        }
    }
}

/// A BLE random static device address (Core spec Vol 6 Part B §1.3.2.1): the two most significant
/// bits are 1 and the other 46 bits are neither all 0 nor all 1. The advertising PDU carries it
/// with TxAdd = 1.
public struct RandomStaticAddress: Sendable, Hashable, CustomStringConvertible {
    /// The six bytes, most significant first (the order people write them).
    public let bytes: [UInt8]

    /// Checks six bytes, most significant first.
    public init(_ bytes: [UInt8]) throws(AdvertisingSettingError) {
        let text = Self.format(bytes)
        guard bytes.count == 6 else { throw .addressSyntax(text) }
        guard bytes[0] & 0xC0 == 0xC0 else { throw .notRandomStatic(text) }
        let random = [bytes[0] & 0x3F] + bytes[1...]
        guard random != [0, 0, 0, 0, 0, 0], random != [0x3F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] else {
            throw .reservedAddress(text)
        }
        self.bytes = bytes
    }

    /// Parses `C0:FF:EE:12:34:56`.
    public init(parsing text: String) throws(AdvertisingSettingError) {
        guard let bytes = Self.bytes(parsing: text) else { throw .addressSyntax(text) }
        try self.init(bytes)
    }

    /// The six bytes of any device address written `XX:XX:XX:XX:XX:XX` (most significant first,
    /// two hex digits each), or `nil`.
    public static func bytes(parsing text: String) -> [UInt8]? {
        HexText.parseColonSeparated(text, count: 6)
    }

    /// A valid random static address made from any six bytes (a digest, say): the top bits are
    /// forced to 1, and the two forbidden values are nudged.
    public init(deriving source: [UInt8]) {
        var bytes = Array(source.prefix(6)) + [UInt8](repeating: 0, count: max(0, 6 - source.count))
        bytes[0] |= 0xC0
        if (try? Self(bytes)) == nil { bytes[5] ^= 0x01 }
        self.bytes = bytes
    }

    /// The bytes least significant first, as the PDU carries them.
    public var airOrder: [UInt8] { bytes.reversed() }

    /// `C0:FF:EE:12:34:56`.
    public var description: String { Self.format(bytes) }

    /// Any bytes written `C0:FF:EE:12:34:56`.
    public static func format(_ bytes: [UInt8]) -> String {
        HexText.colonSeparated(bytes)
    }
}

/// A BLE advertising interval: 20 ms to 10.24 s in steps of 0.625 ms (Core spec Vol 6 Part B
/// §4.4.2.2; ADV_NONCONN_IND may use 20 ms from Bluetooth 5.0, 100 ms before it).
public struct AdvertisingInterval: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The spec's step.
    public static let stepMicroseconds = 625
    /// The shortest interval.
    public static let minimum = AdvertisingInterval(uncheckedMicroseconds: 20_000)
    /// The longest interval.
    public static let maximum = AdvertisingInterval(uncheckedMicroseconds: 10_240_000)

    /// The interval in microseconds.
    public let microseconds: Int

    private init(uncheckedMicroseconds: Int) { microseconds = uncheckedMicroseconds }

    /// Checks an interval given in microseconds.
    public init(microseconds: Int) throws(AdvertisingSettingError) {
        let text = Self.milliseconds(microseconds)
        guard (Self.minimum.microseconds...Self.maximum.microseconds).contains(microseconds) else {
            throw .intervalOutOfRange(text)
        }
        guard microseconds % Self.stepMicroseconds == 0 else {
            let below = microseconds / Self.stepMicroseconds * Self.stepMicroseconds
            throw .intervalNotAStep(
                text, below: Self.milliseconds(below), above: Self.milliseconds(below + Self.stepMicroseconds))
        }
        self.microseconds = microseconds
    }

    /// Parses milliseconds written in decimal: ASCII digits, optionally a `.` with at least one
    /// digit on each side (`100`, `152.5`). Any spelling of an allowed value is accepted: leading
    /// zeros (`0100.625`), trailing zeros (`100.6250`), any number of digits. No sign, exponent,
    /// spaces or comma. A value that is not a multiple of 0.625 ms is refused with the two
    /// multiples around it, however many digits it has.
    public init(parsingMilliseconds text: String) throws(AdvertisingSettingError) {
        let parts = Array(text.utf8).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isDigit) })
        else { throw .intervalSyntax(text) }
        // Exact decimal arithmetic on the digits: the whole milliseconds without leading zeros, the
        // fraction without trailing zeros; its first three digits are microseconds, any digit
        // after them is a part of a microsecond.
        let whole = parts[0].drop { $0 == UInt8(ascii: "0") }
        var fraction = parts.count == 2 ? parts[1] : []
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        // More than five whole digits is at least 100 000 ms, far out of range (and never overflows).
        guard whole.count <= 5 else { throw .intervalOutOfRange(text) }
        let micros = fraction.prefix(3) + Array(repeating: UInt8(ascii: "0"), count: 3 - min(3, fraction.count))
        let microseconds = Self.value(whole) * 1000 + Self.value(micros)
        let belowAMicrosecond = fraction.count > 3
        let range = Self.minimum.microseconds...Self.maximum.microseconds
        guard range.contains(microseconds), microseconds < range.upperBound || !belowAMicrosecond else {
            throw .intervalOutOfRange(text)
        }
        guard microseconds % Self.stepMicroseconds == 0, !belowAMicrosecond else {
            // The multiple at or below the whole microseconds is also the one below the exact value.
            let below = microseconds / Self.stepMicroseconds * Self.stepMicroseconds
            throw .intervalNotAStep(
                text, below: Self.milliseconds(below), above: Self.milliseconds(below + Self.stepMicroseconds))
        }
        self.microseconds = microseconds
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// The number the ASCII digits spell (at most eight of them here).
    private static func value(_ digits: ArraySlice<UInt8>) -> Int {
        digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// `100`, `152.5`: milliseconds without trailing zeros.
    public var description: String { Self.milliseconds(microseconds) }

    /// Orders by length.
    public static func < (lhs: AdvertisingInterval, rhs: AdvertisingInterval) -> Bool {
        lhs.microseconds < rhs.microseconds
    }

    static func milliseconds(_ microseconds: Int) -> String {
        let whole = "\(microseconds / 1000)"
        var fraction = "\(microseconds % 1000)"
        guard microseconds % 1000 != 0 else { return whole }
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return whole + "." + fraction
    }
}

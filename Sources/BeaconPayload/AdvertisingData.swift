import HexText
import StructuredText

/// One AD structure of BLE advertising data: length byte, type byte, data.
public struct ADStructure: Sendable, Equatable {
    /// AD type (0x01 Flags, 0x03 complete 16-bit UUIDs, 0x16 service data, 0xFF manufacturer data…).
    public var type: UInt8
    /// The bytes after the type.
    public var data: [UInt8]

    /// Creates an AD structure.
    public init(type: UInt8, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    /// Length byte, type byte, data.
    public var bytes: [UInt8] { [UInt8(data.count + 1), type] + data }

    /// AD type values used here (Bluetooth Assigned Numbers; TI `gap.h`).
    public enum Kind {
        /// Flags.
        public static let flags: UInt8 = 0x01
        /// Complete list of 16-bit service UUIDs.
        public static let completeServiceUUIDs16: UInt8 = 0x03
        /// Service data, 16-bit UUID.
        public static let serviceData16: UInt8 = 0x16
        /// Manufacturer specific data.
        public static let manufacturerSpecific: UInt8 = 0xFF
    }

    /// The data of the first manufacturer-specific AD in `advertisingData` (company ID onward),
    /// after checking the 31-byte limit and the AD framing.
    static func manufacturerData(in advertisingData: [UInt8], format: String) throws(AdvertisingDataError) -> [UInt8] {
        guard advertisingData.count <= maximumAdvertisingDataLength else {
            throw .tooLong(length: advertisingData.count)
        }
        guard let data = try parse(advertisingData).first(where: { $0.type == Kind.manufacturerSpecific })?.data else {
            throw .missingStructure(format: format, expected: "manufacturer-specific (0xFF)")
        }
        return data
    }

    /// Splits advertising data into AD structures. A zero length byte ends the data (the rest is
    /// padding, as the Core Specification allows).
    public static func parse(_ bytes: [UInt8]) throws(AdvertisingDataError) -> [ADStructure] {
        var structures: [ADStructure] = []
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }
            guard offset + 1 + length <= bytes.count else {
                throw .truncatedStructure(offset: offset, declaredLength: length, available: bytes.count - offset - 1)
            }
            structures.append(
                ADStructure(type: bytes[offset + 1], data: Array(bytes[(offset + 2)..<(offset + 1 + length)])))
            offset += 1 + length
        }
        return structures
    }
}

/// The legacy advertising data limit (31 bytes, `LL_MAX_ADV_DATA_LEN`).
public let maximumAdvertisingDataLength = 31

/// Advertising data that is not what the decoder expected, or a payload that cannot be encoded.
public enum AdvertisingDataError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An AD structure's length byte runs past the end of the data.
    case truncatedStructure(offset: Int, declaredLength: Int, available: Int)
    /// More than 31 bytes of advertising data.
    case tooLong(length: Int)
    /// No AD structure of the kind the format needs.
    case missingStructure(format: String, expected: String)
    /// The structure is there but its bytes are not this format's.
    case notThisFormat(format: String, reason: String)
    /// A field value outside what the format allows.
    case fieldOutOfRange(format: String, field: String, value: Int, allowed: String)
    /// An Eddystone-URL that does not encode into 17 bytes or uses characters it cannot carry.
    case urlNotEncodable(url: String, reason: String)

    /// Refuses `bytes` unless it holds exactly `length` bytes: `format`'s `field` is of fixed size.
    static func checkLength(_ bytes: [UInt8], _ length: Int, format: String, field: String) throws(Self) {
        guard bytes.count == length else {
            throw .fieldOutOfRange(
                format: format, field: "\(field) length", value: bytes.count, allowed: "\(length) bytes")
        }
    }

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .truncatedStructure(let offset, let declared, let available):
            return
                "AD structure at byte \(offset) declares \(declared) bytes but only \(available) follow; the data is cut short"
        case .tooLong(let length):
            return "advertising data is \(length) bytes; legacy advertising carries at most 31"
        case .missingStructure(let format, let expected):
            return "not \(format) advertising data: no \(expected) AD structure"
        case .notThisFormat(let format, let reason):
            return "not \(format) advertising data: \(reason)"
        case .fieldOutOfRange(let format, let field, let value, let allowed):
            return "\(format) \(field) \(value) is out of range; allowed: \(allowed)"
        case .urlNotEncodable(let url, let reason):
            return "cannot encode '\(url.excerpt())' as an Eddystone-URL: \(reason)"
        }
    }
}

/// Formats a byte sequence as `02 01 06 …` in upper case.
public func spacedHex(_ bytes: some Sequence<UInt8>) -> String {
    HexText.bytes(bytes, separator: " ")
}

/// Formats bytes as contiguous upper-case hex digits, `0201061A…`.
public func compactHex(_ bytes: some Sequence<UInt8>) -> String {
    HexText.bytes(bytes)
}

func hex2(_ byte: UInt8) -> String { HexText.byte(byte) }

func flagsStructure(_ flags: UInt8?) -> [UInt8] {
    flags.map { [0x02, ADStructure.Kind.flags, $0] } ?? []
}

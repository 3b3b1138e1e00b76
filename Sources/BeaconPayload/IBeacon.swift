#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// An iBeacon identity: proximity UUID, major, minor and measured power.
///
/// Encodes to the 30-byte advertising data of beacon-formats.md §1: Flags AD `02 01 06` (flags
/// selectable or omitted), then `1A FF 4C 00 02 15`, the UUID in string order, major and minor
/// big-endian, measured power as a signed byte.
public struct IBeacon: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Apple's company identifier, sent little-endian.
    public static let appleCompanyID: UInt16 = 0x004C
    /// iBeacon type and length bytes after the company ID.
    public static let typeAndLength: [UInt8] = [0x02, 0x15]
    /// Flags most iBeacon tables use: LE General Discoverable + BR/EDR not supported.
    public static let defaultFlags: UInt8 = 0x06
    /// Measured power used when none is given: -59 dBm (0xC5), the TI, HM-10 and Blue Charm default.
    public static let defaultMeasuredPower: Int8 = -59
    /// Length of the advertising data with the Flags AD.
    public static let advertisingDataLength = 30
    /// Length of the UUID + major + minor + power payload.
    public static let payloadLength = 21

    /// Proximity UUID.
    public var uuid: UUID
    /// Major (big-endian on air).
    public var major: UInt16
    /// Minor (big-endian on air).
    public var minor: UInt16
    /// Expected RSSI at 1 m, in dBm.
    public var measuredPower: Int8

    /// Creates an identity.
    public init(uuid: UUID, major: UInt16, minor: UInt16, measuredPower: Int8 = IBeacon.defaultMeasuredPower) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// Parses the spellings accepted on the command line and in station lists.
    public init(uuid: String, major: String, minor: String, power: String? = nil) throws(IdentityError) {
        self.init(
            uuid: try IdentityParser.uuid(uuid),
            major: try IdentityParser.uint16(major, field: .major),
            minor: try IdentityParser.uint16(minor, field: .minor),
            measuredPower: try power.map { text throws(IdentityError) in try IdentityParser.dBm(text) }
                ?? IBeacon.defaultMeasuredPower)
    }

    /// The 21 identity bytes: UUID, major, minor, power.
    public var payload: [UInt8] {
        uuid.bytes + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)]
            + [UInt8(bitPattern: measuredPower)]
    }

    /// The manufacturer-specific AD structure (27 bytes).
    public var manufacturerStructure: [UInt8] {
        [0x1A, ADStructure.Kind.manufacturerSpecific, 0x4C, 0x00] + Self.typeAndLength + payload
    }

    /// The advertising data: the Flags AD (unless `flags` is `nil`) and the manufacturer AD.
    public func advertisingData(flags: UInt8? = IBeacon.defaultFlags) -> [UInt8] {
        flagsStructure(flags) + manufacturerStructure
    }

    /// Decodes advertising data holding an iBeacon manufacturer AD (with or without other ADs).
    public init(advertisingData: [UInt8]) throws(AdvertisingDataError) {
        try self.init(manufacturerData: try ADStructure.manufacturerData(in: advertisingData, format: "iBeacon"))
    }

    /// Decodes the data of a manufacturer-specific AD (company ID onward, 25 bytes).
    public init(manufacturerData data: [UInt8]) throws(AdvertisingDataError) {
        guard data.count >= 2 else { throw .notThisFormat(format: "iBeacon", reason: "manufacturer data too short") }
        let company = UInt16(data[0]) | UInt16(data[1]) << 8
        guard company == Self.appleCompanyID else {
            throw .notThisFormat(
                format: "iBeacon",
                reason: "company ID is 0x\(hex2(UInt8(company >> 8)))\(hex2(UInt8(company & 0xFF))), not Apple's 0x004C"
            )
        }
        guard data.count >= 4, Array(data[2..<4]) == Self.typeAndLength else {
            throw .notThisFormat(format: "iBeacon", reason: "Apple data does not start with the iBeacon type 02 15")
        }
        guard data.count == 4 + Self.payloadLength, let decoded = IBeacon(payload: data[4...]) else {
            throw .notThisFormat(
                format: "iBeacon", reason: "iBeacon data is \(data.count - 4) bytes, expected \(Self.payloadLength)")
        }
        self = decoded
    }

    /// Builds an identity from the 21 payload bytes; `nil` for any other length.
    public init?(payload: some Collection<UInt8>) {
        let p = Array(payload)
        guard p.count == Self.payloadLength, let uuid = UUID(bytes: p[0..<16]) else { return nil }
        self.init(
            uuid: uuid, major: UInt16(p[16]) << 8 | UInt16(p[17]), minor: UInt16(p[18]) << 8 | UInt16(p[19]),
            measuredPower: Int8(bitPattern: p[20]))
    }

    /// `UUID major N minor N power N dBm`.
    public var description: String {
        "\(uuid.uuidString) major \(major) minor \(minor) power \(measuredPower) dBm"
    }
}

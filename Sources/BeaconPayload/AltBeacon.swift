/// An AltBeacon advertisement (github.com/AltBeacon/spec): a 20-byte beacon ID, reference RSSI and
/// a manufacturer-reserved byte, under the beacon maker's company ID. 31 bytes with Flags.
public struct AltBeacon: Sendable, Equatable, CustomStringConvertible {
    /// The beacon code that marks an AltBeacon, sent as `BE AC`.
    public static let beaconCode: [UInt8] = [0xBE, 0xAC]
    /// Radius Networks' company ID, used in the specification's example.
    public static let defaultCompanyID: UInt16 = 0x0118

    /// Company ID of the beacon maker (little-endian on air).
    public var companyID: UInt16
    /// 20-byte beacon ID; by convention a 16-byte organisation UUID and two 2-byte values.
    public var beaconID: [UInt8]
    /// Average RSSI at 1 m, dBm.
    public var referenceRSSI: Int8
    /// Manufacturer-reserved byte.
    public var reserved: UInt8

    /// Creates an AltBeacon; `beaconID` must be 20 bytes.
    public init(
        companyID: UInt16 = AltBeacon.defaultCompanyID, beaconID: [UInt8], referenceRSSI: Int8, reserved: UInt8 = 0
    ) throws(AdvertisingDataError) {
        try AdvertisingDataError.checkLength(beaconID, 20, format: "AltBeacon", field: "beacon ID")
        self.companyID = companyID
        self.beaconID = beaconID
        self.referenceRSSI = referenceRSSI
        self.reserved = reserved
    }

    /// The conventional mapping of an iBeacon identity: UUID, major, minor as the beacon ID.
    public init(
        identity: IBeacon, companyID: UInt16 = AltBeacon.defaultCompanyID, reserved: UInt8 = 0
    ) {
        self.companyID = companyID
        self.beaconID = Array(identity.payload.prefix(20))
        self.referenceRSSI = identity.measuredPower
        self.reserved = reserved
    }

    /// The manufacturer-specific AD structure (28 bytes).
    public var manufacturerStructure: [UInt8] {
        [0x1B, ADStructure.Kind.manufacturerSpecific, UInt8(companyID & 0xFF), UInt8(companyID >> 8)]
            + Self.beaconCode + beaconID + [UInt8(bitPattern: referenceRSSI), reserved]
    }

    /// Flags AD (unless `nil`) and the manufacturer AD.
    public func advertisingData(flags: UInt8? = IBeacon.defaultFlags) -> [UInt8] {
        flagsStructure(flags) + manufacturerStructure
    }

    /// Decodes advertising data holding an AltBeacon manufacturer AD.
    public init(advertisingData: [UInt8]) throws(AdvertisingDataError) {
        let data = try ADStructure.manufacturerData(in: advertisingData, format: "AltBeacon")
        guard data.count == 26 else {
            throw .notThisFormat(format: "AltBeacon", reason: "manufacturer data is \(data.count) bytes, expected 26")
        }
        guard Array(data[2..<4]) == Self.beaconCode else {
            throw .notThisFormat(format: "AltBeacon", reason: "beacon code is not BE AC")
        }
        try self.init(
            companyID: UInt16(data[0]) | UInt16(data[1]) << 8, beaconID: Array(data[4..<24]),
            referenceRSSI: Int8(bitPattern: data[24]), reserved: data[25])
    }

    /// `AltBeacon company 0x0118 id … rssi N dBm reserved 0xNN`.
    public var description: String {
        "AltBeacon company 0x\(hex2(UInt8(companyID >> 8)))\(hex2(UInt8(companyID & 0xFF))) id \(beaconID.map(hex2).joined()) rssi \(referenceRSSI) dBm reserved 0x\(hex2(reserved))"
    }
}

/// Framing shared by the Eddystone frames (google/eddystone protocol-specification.md):
/// Flags, the complete 16-bit service UUID list `03 03 AA FE`, and service data `LL 16 AA FE` + frame.
public enum Eddystone {
    /// The Eddystone service UUID 0xFEAA as sent (little-endian).
    public static let serviceUUID: [UInt8] = [0xAA, 0xFE]
    /// Frame type of UID frames.
    public static let uidFrameType: UInt8 = 0x00
    /// Frame type of URL frames.
    public static let urlFrameType: UInt8 = 0x10
    /// Range of the calibrated TX power at 0 m the specification allows.
    public static let txPowerRange: ClosedRange<Int> = -100...20
    /// dB to add to a 1 m measured power to get the 0 m value the frames carry.
    public static let oneMeterToZeroMeterOffset = 41

    static func advertisingData(frame: [UInt8], flags: UInt8?) -> [UInt8] {
        flagsStructure(flags) + [0x03, ADStructure.Kind.completeServiceUUIDs16] + serviceUUID
            + ADStructure(type: ADStructure.Kind.serviceData16, data: serviceUUID + frame).bytes
    }

    /// The frame (service data after the UUID) of Eddystone advertising data, refused unless its
    /// first byte is `type`.
    static func frame(in advertisingData: [UInt8], format: String, type: UInt8) throws(AdvertisingDataError) -> [UInt8]
    {
        guard advertisingData.count <= maximumAdvertisingDataLength else {
            throw .tooLong(length: advertisingData.count)
        }
        let structures = try ADStructure.parse(advertisingData)
        guard
            let serviceData = structures.first(where: {
                $0.type == ADStructure.Kind.serviceData16 && $0.data.starts(with: serviceUUID)
            })
        else {
            throw .missingStructure(format: format, expected: "Eddystone service data (16 AA FE)")
        }
        let frame = Array(serviceData.data.dropFirst(2))
        guard frame.first == type else {
            throw .notThisFormat(format: format, reason: "frame type is not 0x\(hex2(type))")
        }
        return frame
    }

    static func checkTxPower(_ value: Int8, format: String) throws(AdvertisingDataError) {
        guard txPowerRange.contains(Int(value)) else {
            throw .fieldOutOfRange(
                format: format, field: "TX power at 0 m", value: Int(value), allowed: "-100…20 dBm")
        }
    }
}

/// An Eddystone-UID frame: TX power at 0 m, a 10-byte namespace and a 6-byte instance.
public struct EddystoneUID: Sendable, Equatable, CustomStringConvertible {
    /// Calibrated TX power at 0 m, dBm (−100…20).
    public var txPower: Int8
    /// 10-byte namespace.
    public var namespace: [UInt8]
    /// 6-byte instance.
    public var instance: [UInt8]

    /// Creates a UID frame, checking lengths and the TX power range.
    public init(txPower: Int8, namespace: [UInt8], instance: [UInt8]) throws(AdvertisingDataError) {
        try Eddystone.checkTxPower(txPower, format: "Eddystone-UID")
        try AdvertisingDataError.checkLength(namespace, 10, format: "Eddystone-UID", field: "namespace")
        try AdvertisingDataError.checkLength(instance, 6, format: "Eddystone-UID", field: "instance")
        self.txPower = txPower
        self.namespace = namespace
        self.instance = instance
    }

    /// The mapping used by ccbeacon (beacon-formats.md §8.1, our convention, not a standard):
    /// namespace = the elided UUID (first 4 and last 6 bytes), instance = major ‖ minor right-aligned,
    /// TX power = measured power at 1 m + 41 dB.
    public init(identity: IBeacon) throws(AdvertisingDataError) {
        let uuid = identity.uuid.bytes
        try self.init(
            txPower: Int8(clamping: Int(identity.measuredPower) + Eddystone.oneMeterToZeroMeterOffset),
            namespace: Array(uuid[0..<4] + uuid[10..<16]),
            instance: [0, 0] + Array(identity.payload[16..<20]))
    }

    /// The frame: type, TX power, namespace, instance, two RFU zero bytes.
    public var frame: [UInt8] {
        [Eddystone.uidFrameType, UInt8(bitPattern: txPower)] + namespace + instance + [0, 0]
    }

    /// Flags AD (unless `nil`), service UUID list and service data: 31 bytes with Flags.
    public func advertisingData(flags: UInt8? = IBeacon.defaultFlags) -> [UInt8] {
        Eddystone.advertisingData(frame: frame, flags: flags)
    }

    /// Decodes Eddystone-UID advertising data (also the older form without the two RFU bytes).
    public init(advertisingData: [UInt8]) throws(AdvertisingDataError) {
        let frame = try Eddystone.frame(in: advertisingData, format: "Eddystone-UID", type: Eddystone.uidFrameType)
        guard frame.count == 20 || frame.count == 18 else {
            throw .notThisFormat(format: "Eddystone-UID", reason: "frame is \(frame.count) bytes, expected 20")
        }
        try self.init(
            txPower: Int8(bitPattern: frame[1]), namespace: Array(frame[2..<12]), instance: Array(frame[12..<18]))
    }

    /// `Eddystone-UID namespace … instance … tx N dBm`.
    public var description: String {
        "Eddystone-UID namespace \(namespace.map(hex2).joined()) instance \(instance.map(hex2).joined()) tx \(txPower) dBm at 0 m"
    }
}

/// An Eddystone-URL frame: TX power at 0 m and a compressed URL of at most 17 bytes.
public struct EddystoneURL: Sendable, Equatable, CustomStringConvertible {
    /// URL scheme prefixes by code.
    public static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    /// Expansion codes 0x00–0x0D.
    public static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]
    /// Longest encoded URL (after the scheme byte).
    public static let maximumEncodedLength = 17

    /// Calibrated TX power at 0 m, dBm (−100…20).
    public var txPower: Int8
    /// The full URL.
    public var url: String
    /// Scheme code and the encoded remainder.
    public let encodedURL: [UInt8]

    /// Encodes `url`, which must start with one of the four schemes and fit 17 bytes once compressed.
    public init(url: String, txPower: Int8) throws(AdvertisingDataError) {
        try Eddystone.checkTxPower(txPower, format: "Eddystone-URL")
        self.txPower = txPower
        self.url = url
        self.encodedURL = try Self.encode(url)
    }

    static func encode(_ url: String) throws(AdvertisingDataError) -> [UInt8] {
        // Longest prefix first, so "https://www." wins over "https://".
        let byLength = Self.schemes.enumerated().sorted { $0.element.count > $1.element.count }
        guard let scheme = byLength.first(where: { url.hasPrefix($0.element) }) else {
            throw .urlNotEncodable(
                url: url, reason: "it must start with http://, https://, http://www. or https://www.")
        }
        let rest = Array(url.utf8.dropFirst(scheme.element.utf8.count))
        let expansions = Self.expansions.enumerated().map { (code: UInt8($0.offset), text: Array($0.element.utf8)) }
            .sorted { $0.text.count > $1.text.count }
        var encoded: [UInt8] = [UInt8(scheme.offset)]
        var index = 0
        while index < rest.count {
            if let match = expansions.first(where: { rest[index...].starts(with: $0.text) }) {
                encoded.append(match.code)
                index += match.text.count
                continue
            }
            let character = rest[index]
            guard (0x21...0x7E).contains(character) else {
                throw .urlNotEncodable(
                    url: url,
                    reason:
                        "it contains \(character == 0x20 ? "a space" : "a character outside printable ASCII"); percent-encode it"
                )
            }
            encoded.append(character)
            index += 1
        }
        guard encoded.count - 1 <= maximumEncodedLength else {
            throw .urlNotEncodable(
                url: url,
                reason:
                    "it needs \(encoded.count - 1) bytes after compression, at most \(maximumEncodedLength) fit; use a URL shortener"
            )
        }
        return encoded
    }

    /// The frame: type, TX power, scheme, encoded URL.
    public var frame: [UInt8] { [Eddystone.urlFrameType, UInt8(bitPattern: txPower)] + encodedURL }

    /// Flags AD (unless `nil`), service UUID list and service data.
    public func advertisingData(flags: UInt8? = IBeacon.defaultFlags) -> [UInt8] {
        Eddystone.advertisingData(frame: frame, flags: flags)
    }

    /// Decodes Eddystone-URL advertising data back into the full URL.
    public init(advertisingData: [UInt8]) throws(AdvertisingDataError) {
        let frame = try Eddystone.frame(in: advertisingData, format: "Eddystone-URL", type: Eddystone.urlFrameType)
        guard frame.count >= 3, frame.count - 3 <= Self.maximumEncodedLength else {
            throw .notThisFormat(format: "Eddystone-URL", reason: "frame is \(frame.count) bytes, expected 3…20")
        }
        guard Int(frame[2]) < Self.schemes.count else {
            throw .notThisFormat(format: "Eddystone-URL", reason: "scheme code 0x\(hex2(frame[2])) is reserved")
        }
        var url = Self.schemes[Int(frame[2])]
        for byte in frame[3...] {
            if Int(byte) < Self.expansions.count {
                url += Self.expansions[Int(byte)]
            } else if (0x21...0x7E).contains(byte) {
                url.append(Character(Unicode.Scalar(byte)))
            } else {
                throw .notThisFormat(format: "Eddystone-URL", reason: "byte 0x\(hex2(byte)) is a reserved code")
            }
        }
        txPower = Int8(bitPattern: frame[1])
        self.url = url
        encodedURL = Array(frame[2...])
        try Eddystone.checkTxPower(txPower, format: "Eddystone-URL")
    }

    /// `Eddystone-URL https://… tx N dBm`.
    public var description: String { "Eddystone-URL \(url) tx \(txPower) dBm at 0 m" }
}

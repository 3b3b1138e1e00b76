import Foundation
import Testing

@testable import BeaconPayload

/// Turns `"02 01 06 …"` into bytes; the vectors below are copied from beacon-formats.md §8.
func bytes(_ spaced: String) -> [UInt8] {
    spaced.split(separator: " ").map { UInt8($0, radix: 16)! }
}

struct IBeaconKnownAnswerTests {
    static let seed = try! IBeacon(uuid: "7634A485-1732-4B7D-AB44-D505D8A24C60", major: "1", minor: "2", power: "0xCD")

    @Test func seedExample() {
        #expect(
            Self.seed.advertisingData()
                == bytes("02 01 06 1A FF 4C 00 02 15 76 34 A4 85 17 32 4B 7D AB 44 D5 05 D8 A2 4C 60 00 01 00 02 CD"))
        #expect(Self.seed.measuredPower == -51)
        #expect(Self.seed.advertisingData().count == IBeacon.advertisingDataLength)
    }

    @Test func seedExampleWithTISampleFlags() {
        #expect(
            Self.seed.advertisingData(flags: 0x04)
                == bytes("02 01 04 1A FF 4C 00 02 15 76 34 A4 85 17 32 4B 7D AB 44 D5 05 D8 A2 4C 60 00 01 00 02 CD"))
        #expect(Self.seed.advertisingData(flags: nil).count == 27)
    }

    @Test func estimoteDefault() throws {
        let estimote = try IBeacon(uuid: "B9407F30-F5F8-466E-AFF9-25556B57FE6D", major: "1", minor: "2", power: "0xC5")
        #expect(
            estimote.advertisingData()
                == bytes("02 01 06 1A FF 4C 00 02 15 B9 40 7F 30 F5 F8 46 6E AF F9 25 55 6B 57 FE 6D 00 01 00 02 C5"))
    }

    @Test func hm10Default() throws {
        // HM-10: UUID 74278BDA-…, major 0x0001, minor 0x0102 (corpus README), power 0xC5.
        let hm10 = try IBeacon(uuid: "74278bdab64445208f0c720eaf059935", major: "0x0001", minor: "0x0102", power: "-59")
        #expect(
            hm10.advertisingData()
                == bytes("02 01 06 1A FF 4C 00 02 15 74 27 8B DA B6 44 45 20 8F 0C 72 0E AF 05 99 35 00 01 01 02 C5"))
        #expect(hm10.uuid.uuidString == "74278BDA-B644-4520-8F0C-720EAF059935")
    }

    @Test func decodesWhatItEncodes() throws {
        for flags: UInt8? in [0x06, 0x04, nil] {
            #expect(try IBeacon(advertisingData: Self.seed.advertisingData(flags: flags)) == Self.seed)
        }
        // With padding after the structures, as some stacks send.
        #expect(try IBeacon(advertisingData: Self.seed.advertisingData() + [0]) == Self.seed)
    }

    @Test func majorMinorAreBigEndianAndPowerSigned() throws {
        let identity = try IBeacon(
            uuid: String(repeating: "0", count: 32), major: "0x1234", minor: "65535", power: "-128")
        #expect(Array(identity.payload.suffix(5)) == [0x12, 0x34, 0xFF, 0xFF, 0x80])
        #expect(
            try IBeacon(uuid: String(repeating: "0", count: 32), major: "0", minor: "0", power: "+4").measuredPower == 4
        )
        #expect(try IBeacon(uuid: String(repeating: "0", count: 32), major: "0", minor: "0").measuredPower == -59)
    }
}

struct IBeaconDecodingErrorTests {
    @Test(arguments: [
        (
            "02 01 06",
            AdvertisingDataError.missingStructure(format: "iBeacon", expected: "manufacturer-specific (0xFF)")
        ),
        (
            "02 01 06 1A FF 4C 00 02", .truncatedStructure(offset: 3, declaredLength: 26, available: 4)
        ),
        (
            "05 FF 0D 00 02 15", .notThisFormat(format: "iBeacon", reason: "company ID is 0x000D, not Apple's 0x004C")
        ),
        (
            "05 FF 4C 00 12 19",
            .notThisFormat(format: "iBeacon", reason: "Apple data does not start with the iBeacon type 02 15")
        ),
        (
            "06 FF 4C 00 02 15 01", .notThisFormat(format: "iBeacon", reason: "iBeacon data is 1 bytes, expected 21")
        ),
    ])
    func rejectsNonIBeaconData(hex: String, expected: AdvertisingDataError) {
        #expect(throws: expected) { try IBeacon(advertisingData: bytes(hex)) }
    }

    @Test func rejectsMoreThan31Bytes() {
        #expect(throws: AdvertisingDataError.tooLong(length: 32)) {
            try IBeacon(advertisingData: [UInt8](repeating: 0, count: 32))
        }
    }
}

struct IdentityParsingTests {
    @Test(arguments: [
        "7634A485-1732-4B7D-AB44-D505D8A24C60", "7634a485-1732-4b7d-ab44-d505d8a24c60",
        "7634A4851732 4B7DAB44D505D8A24C60".replacingOccurrences(of: " ", with: ""),
        "  7634A485-1732-4B7D-AB44-D505D8A24C60\t",
    ])
    func acceptsUUIDSpellings(text: String) throws {
        #expect(try IdentityParser.uuid(text).uuidString == "7634A485-1732-4B7D-AB44-D505D8A24C60")
    }

    @Test(arguments: [
        ("", "uuid: '' is empty"),
        (
            "7634A485-1732-4B7D-AB44-D505D8A24C6",
            "uuid: '7634A485-1732-4B7D-AB44-D505D8A24C6' has hyphens in the wrong places (groups of 8-4-4-4-11 digits)"
        ),
        (
            "7634A4851732-4B7D-AB44-D505D8A24C60",
            "uuid: '7634A4851732-4B7D-AB44-D505D8A24C60' has hyphens in the wrong places (groups of 12-4-4-12 digits)"
        ),
        (
            "7634A485-1732-4B7D-AB44-D505D8A24C6G",
            "uuid: '7634A485-1732-4B7D-AB44-D505D8A24C6G' contains 'G' at position 36, which is not a hex digit"
        ),
        ("7634A48517324B7DAB44D505D8A24C", "uuid: '7634A48517324B7DAB44D505D8A24C' has 30 hex digits instead of 32"),
        (
            "{7634A485-1732-4B7D-AB44-D505D8A24C60}",
            "uuid: '{7634A485-1732-4B7D-AB44-D505D8A24C60}' contains '{' at position 1, which is not a hex digit"
        ),
        (
            " 7634A485-1732-4B7D-AB44-D505D8A24C6Z",
            "uuid: ' 7634A485-1732-4B7D-AB44-D505D8A24C6Z' contains 'Z' at position 37, which is not a hex digit"
        ),
    ])
    func rejectsBadUUIDs(text: String, message: String) {
        do {
            _ = try IdentityParser.uuid(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description == message + "; allowed: " + IdentityParser.uuidAllowed)
            #expect(error.field == .uuid)
        }
    }

    @Test(arguments: [
        ("0", 0), ("65535", 65535), ("0xFFFF", 65535), ("0X00a0", 0xA0), ("0x1", 1), (" 42 ", 42), ("007", 7),
    ])
    func acceptsMajorMinorSpellings(text: String, value: Int) throws {
        #expect(try IdentityParser.uint16(text, field: .major) == UInt16(value))
    }

    @Test(arguments: [
        ("65536", "is out of range"), ("-1", "is negative"), ("", "is empty"), ("0x", "has no digits after 0x"),
        ("0x10000", "is out of range"), ("12a", "is not a number ('a' is not a decimal digit; hex needs a 0x prefix)"),
        ("0xG1", "contains 'G', which is not a hex digit"),
        ("+1", "is not a number ('+' is not a decimal digit; hex needs a 0x prefix)"),
        ("99999999999999999999999", "is out of range"),
        ("１", "is not a number ('１' is not a decimal digit; hex needs a 0x prefix)"),
    ])
    func rejectsBadMinor(text: String, problem: String) {
        #expect(
            throws: IdentityError(
                field: .minor, input: text, problem: problem, allowed: "0…65535 (decimal) or 0x0000…0xFFFF (hex)")
        ) {
            try IdentityParser.uint16(text, field: .minor)
        }
    }

    @Test(arguments: [
        ("-59", -59), ("0xC5", -59), ("0xcd", -51), ("127", 127), ("-128", -128), ("+4", 4), ("0x7F", 127),
        ("0x80", -128), ("0", 0),
    ])
    func acceptsPowerSpellings(text: String, value: Int) throws {
        #expect(try IdentityParser.dBm(text) == Int8(value))
    }

    @Test(arguments: [
        ("-129", "is out of range"), ("128", "is out of range"), ("0x100", "is out of range"),
        ("dBm", "is not a number"),
        ("--5", "is not a number"), ("", "is empty"), ("-", "is not a number"), ("-59dBm", "is not a number"),
    ])
    func rejectsBadPower(text: String, problem: String) {
        #expect(
            throws: IdentityError(
                field: .power, input: text, problem: problem, allowed: "signed dBm -128…127, or a 0x byte (0xC5 = -59)")
        ) {
            try IdentityParser.dBm(text)
        }
    }

    @Test func identityInitNamesTheFieldThatFailed() {
        #expect(throws: IdentityError.self) { try IBeacon(uuid: "x", major: "1", minor: "1") }
        do {
            _ = try IBeacon(uuid: "7634A485-1732-4B7D-AB44-D505D8A24C60", major: "1", minor: "70000")
        } catch {
            #expect(error.field == .minor)
            #expect(error.description.hasPrefix("minor: '70000' is out of range; allowed: 0…65535"))
        }
    }
}

struct SiblingFormatTests {
    @Test func altBeaconSeedExample() throws {
        let alt = AltBeacon(identity: IBeaconKnownAnswerTests.seed)
        let expected = bytes(
            "02 01 06 1B FF 18 01 BE AC 76 34 A4 85 17 32 4B 7D AB 44 D5 05 D8 A2 4C 60 00 01 00 02 CD 00")
        #expect(alt.advertisingData() == expected)
        #expect(expected.count == 31)
        #expect(try AltBeacon(advertisingData: expected) == alt)
        #expect(throws: AdvertisingDataError.self) {
            try AltBeacon(advertisingData: IBeaconKnownAnswerTests.seed.advertisingData())
        }
        #expect(throws: AdvertisingDataError.self) { try AltBeacon(beaconID: [1, 2], referenceRSSI: -59) }
    }

    @Test func eddystoneUIDSeedExample() throws {
        let uid = try EddystoneUID(identity: IBeaconKnownAnswerTests.seed)
        let expected = bytes(
            "02 01 06 03 03 AA FE 17 16 AA FE 00 F6 76 34 A4 85 D5 05 D8 A2 4C 60 00 00 00 01 00 02 00 00")
        #expect(uid.advertisingData() == expected)
        #expect(uid.txPower == -10)
        #expect(try EddystoneUID(advertisingData: expected) == uid)
        // The older form without RFU bytes (service data length 0x15) also decodes.
        var legacy = Array(expected.dropLast(2))
        legacy[7] = 0x15
        #expect(try EddystoneUID(advertisingData: legacy) == uid)
    }

    @Test func eddystoneUIDRejectsBadFields() {
        #expect(
            throws: AdvertisingDataError.fieldOutOfRange(
                format: "Eddystone-UID", field: "TX power at 0 m", value: 21, allowed: "-100…20 dBm")
        ) {
            try EddystoneUID(
                txPower: 21, namespace: [UInt8](repeating: 0, count: 10), instance: [UInt8](repeating: 0, count: 6))
        }
        // Each fixed-size field is refused at any other length, saying which and how long.
        #expect(
            throws: AdvertisingDataError.fieldOutOfRange(
                format: "Eddystone-UID", field: "namespace length", value: 9, allowed: "10 bytes")
        ) {
            try EddystoneUID(
                txPower: 0, namespace: [UInt8](repeating: 0, count: 9), instance: [UInt8](repeating: 0, count: 6))
        }
        #expect(
            throws: AdvertisingDataError.fieldOutOfRange(
                format: "Eddystone-UID", field: "instance length", value: 7, allowed: "6 bytes")
        ) {
            try EddystoneUID(
                txPower: 0, namespace: [UInt8](repeating: 0, count: 10), instance: [UInt8](repeating: 0, count: 7))
        }
        #expect(
            throws: AdvertisingDataError.fieldOutOfRange(
                format: "AltBeacon", field: "beacon ID length", value: 0, allowed: "20 bytes")
        ) { try AltBeacon(beaconID: [], referenceRSSI: -59) }
        #expect(
            throws: AdvertisingDataError.missingStructure(
                format: "Eddystone-UID", expected: "Eddystone service data (16 AA FE)")
        ) {
            try EddystoneUID(advertisingData: IBeaconKnownAnswerTests.seed.advertisingData())
        }
    }

    @Test(arguments: [
        ("https://www.example.com/", "01 65 78 61 6D 70 6C 65 00"),
        ("http://goo.gl/S6zT6P", "02 67 6F 6F 2E 67 6C 2F 53 36 7A 54 36 50"),
        ("https://ti.com", "03 74 69 07"),
        ("http://www.a.org/b.info", "00 61 01 62 0B"),
        ("https://x.info/", "03 78 04"),
    ])
    func eddystoneURLEncodesWithExpansions(url: String, encoded: String) throws {
        let frame = try EddystoneURL(url: url, txPower: -18)
        #expect(frame.encodedURL == bytes(encoded))
        let data = frame.advertisingData()
        #expect(data.count == 14 + frame.encodedURL.count - 1)
        #expect(
            Array(data.prefix(11)) == bytes("02 01 06 03 03 AA FE") + [
                UInt8(6 + frame.encodedURL.count - 1), 0x16, 0xAA, 0xFE,
            ])
        let decoded = try EddystoneURL(advertisingData: data)
        #expect(decoded.url == url)
        #expect(decoded.txPower == -18)
    }

    @Test(arguments: [
        ("ftp://example.com", "it must start with http://, https://, http://www. or https://www."),
        ("https://example.com/a b", "it contains a space; percent-encode it"),
        (
            "https://exampleexample.com/abcdef",
            "it needs 21 bytes after compression, at most 17 fit; use a URL shortener"
        ),
        ("https://é.com", "it contains a character outside printable ASCII; percent-encode it"),
    ])
    func eddystoneURLRejectsWhatDoesNotFit(url: String, reason: String) {
        #expect(throws: AdvertisingDataError.urlNotEncodable(url: url, reason: reason)) {
            try EddystoneURL(url: url, txPower: 0)
        }
    }

    @Test func eddystoneURLAtTheLimit() throws {
        let url = "https://" + String(repeating: "a", count: 17)
        #expect(try EddystoneURL(url: url, txPower: 0).advertisingData().count == 31)
        #expect(throws: AdvertisingDataError.self) { try EddystoneURL(url: url + "a", txPower: 0) }
    }

    @Test func eddystoneURLDecodeRejectsReservedCodes() {
        let data = bytes("02 01 06 03 03 AA FE 08 16 AA FE 10 00 03 61 0E")
        #expect(
            throws: AdvertisingDataError.notThisFormat(format: "Eddystone-URL", reason: "byte 0x0E is a reserved code")
        ) {
            try EddystoneURL(advertisingData: data)
        }
    }
}

/// The on-air model against the known answers of stackfree-ble.md §4.4.
struct AdvertisingAirPacketTests {
    static let packet = try! AdvertisingAirPacket(
        address: [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56], addressIsRandom: true,
        advertisingData: try! IBeacon(
            uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: "1", minor: "2", power: "-59"
        )
        .advertisingData())

    static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map {
            let start = text.index(text.startIndex, offsetBy: $0)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    @Test func pduAndCRC() {
        #expect(
            Self.packet.pdu
                == bytes(
                    "42 24 56 34 12 EE FF C0 02 01 06 1A FF 4C 00 02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0 00 01 00 02 C5"
                ))
        #expect(Self.packet.crc == [0x32, 0x0F, 0x25])
    }

    @Test(arguments: [
        (37, "cff601952f49997077301752693bf8e1530b6ebd2b8cc890682868f43e9cece743f45468cd6c2b6378"),
        (38, "94e112144b301e4f19a4a9588402cd62fe80e7fd99300b8f5f623771c80076269531104894b2caec63"),
        (39, "5d131c6b9718635ac3d7c35edf15dee39af960c2f7a4b585b25b02f2658bff66278dd357a3f8956995"),
    ])
    func whitenedPerChannel(channel: Int, expected: String) throws {
        #expect(try Self.packet.whitened(channel: channel) == Self.hex(expected))
        // Whitening is its own inverse.
        #expect(AdvertisingAirPacket.whiten(Self.hex(expected), channel: channel) == Self.packet.pdu + Self.packet.crc)
    }

    @Test func publicAddressAndRefusals() throws {
        let publicPacket = try AdvertisingAirPacket(
            address: [0, 0x12, 0x4B, 1, 2, 3], addressIsRandom: false, advertisingData: [2, 1, 6])
        #expect(publicPacket.pdu == [0x02, 0x09, 3, 2, 1, 0x4B, 0x12, 0, 2, 1, 6])
        #expect(throws: AirPacketError.notAnAdvertisingChannel(36)) { try publicPacket.whitened(channel: 36) }
        #expect(throws: AirPacketError.advertisingDataTooLong(32)) {
            try AdvertisingAirPacket(
                address: [0, 0, 0, 0, 0, 0], addressIsRandom: false, advertisingData: Array(repeating: 0, count: 32))
        }
    }
}

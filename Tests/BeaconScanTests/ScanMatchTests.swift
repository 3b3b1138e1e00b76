import BeaconPayload
import Testing

@testable import BeaconScan

/// Matching what was heard against what should be on air.
struct ScanMatchTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
    static func station(_ minor: UInt16, power: Int8 = -59) -> ExpectedStation {
        ExpectedStation(
            name: "s\(minor)",
            identity: IBeacon(uuid: try! IdentityParser.uuid(uuid), major: 1, minor: minor, measuredPower: power))
    }
    static func report(_ data: [UInt8], _ address: [UInt8], rssi: Int8) -> AdvertisingReport {
        AdvertisingReport(
            eventType: 3, extended: false, addressType: 1, address: address, data: data, rssi: rssi, record: 1)
    }
    static let a: [UInt8] = [0xC0, 0, 0, 0, 0, 1]
    static let b: [UInt8] = [0xC0, 0, 0, 0, 0, 2]

    @Test func eachStationIsHeardOrNotWithItsBytesAddressesAndRSSI() {
        let expected = [Self.station(1), Self.station(2), Self.station(3)]
        let otherPower = Self.station(2, power: -70).advertisingData
        let stranger = Self.station(99).advertisingData
        let foreign = ExpectedStation(
            name: "x",
            identity: IBeacon(
                uuid: try! IdentityParser.uuid("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), major: 1, minor: 1)
        ).advertisingData
        let reports = [
            Self.report(expected[0].advertisingData, Self.a, rssi: -60),
            Self.report(expected[0].advertisingData, Self.a, rssi: -64),
            Self.report(expected[0].advertisingData, Self.a, rssi: 127),  // no RSSI: not a sample
            Self.report(otherPower, Self.b, rssi: -70),
            Self.report(stranger, Self.b, rssi: -50), Self.report(stranger, Self.b, rssi: -51),
            Self.report(foreign, Self.a, rssi: -40), Self.report([0x02, 0x01, 0x06], Self.a, rssi: -40),
        ]
        let match = ScanMatch(reports: reports, expected: expected)
        #expect(match.stations[0].isGood && match.stations[0].reports == 3)
        #expect(match.stations[0].rssi == [-64, -60] && match.stations[0].medianRSSI == -64)
        #expect(match.stations[0].addresses == ["C0:00:00:00:00:01"])
        #expect(!match.stations[1].isGood && !match.stations[1].exactBytes && match.stations[1].reports == 1)
        #expect(match.stations[2].reports == 0 && !match.stations[2].isGood)
        #expect(match.strangers.count == 1 && match.strangers[0].identity.minor == 99)
        #expect(match.strangers[0].address == "C0:00:00:00:00:02")
        #expect(!match.allGood)
    }

    @Test func oneIdentityFromTwoAddressesIsNotGood() {
        let station = Self.station(1)
        let match = ScanMatch(
            reports: [
                Self.report(station.advertisingData, Self.a, rssi: -60),
                Self.report(station.advertisingData, Self.b, rssi: -61),
            ],
            expected: [station])
        #expect(match.stations[0].addresses.count == 2 && match.stations[0].exactBytes && !match.allGood)
        let alone = ScanMatch(reports: [Self.report(station.advertisingData, Self.a, rssi: -60)], expected: [station])
        #expect(alone.allGood)
    }
}

/// PDU types by the Core specification's names, from legacy event types and extended properties.
struct EventNameTests {
    @Test(arguments: [
        (UInt16(0x00), false, "ADV_IND"), (0x01, false, "ADV_DIRECT_IND"), (0x02, false, "ADV_SCAN_IND"),
        (0x03, false, "ADV_NONCONN_IND"), (0x04, false, "SCAN_RSP"), (0x07, false, "event type 0x07"),
        (0x0013, true, "ADV_IND"), (0x0015, true, "ADV_DIRECT_IND"), (0x0012, true, "ADV_SCAN_IND"),
        (0x0010, true, "ADV_NONCONN_IND"), (0x001B, true, "SCAN_RSP"), (0x001A, true, "SCAN_RSP"),
        (0x0000, true, "extended (0x0000)"), (0x0001, true, "extended (0x0001)"), (0x0017, true, "legacy (0x0017)"),
    ])
    func eventTypesAreNamed(_ type: UInt16, _ extended: Bool, _ name: String) {
        let report = AdvertisingReport(
            eventType: type, extended: extended, addressType: 1, address: [0xC0, 0, 0, 0, 0, 1], data: [], rssi: -60,
            record: 1)
        #expect(report.eventName == name)
    }

    /// A station heard as connectable is reported with its type; the type does not fail it.
    @Test func theTypesAStationIsHeardWithAreListed() {
        let station = ScanMatchTests.station(1)
        var connectable = ScanMatchTests.report(station.advertisingData, ScanMatchTests.a, rssi: -60)
        connectable.eventType = 0
        let match = ScanMatch(
            reports: [ScanMatchTests.report(station.advertisingData, ScanMatchTests.a, rssi: -61), connectable],
            expected: [station])
        #expect(match.stations[0].eventTypes == ["ADV_NONCONN_IND", "ADV_IND"])
        #expect(match.stations[0].isGood)
    }

    /// An extended report whose Data Status says more data follows (01) or the rest was cut off
    /// (10) carries only part of the advertisement: its matching first bytes vouch for nothing.
    /// (Such a station was "ok", and the status bits showed in its type: `extended (0x0020)`.)
    @Test(arguments: [
        (UInt16(0x00), true, "extended (0x0000)"), (0x20, false, "extended (0x0000, data incomplete)"),
        (0x40, false, "extended (0x0000, data truncated)"), (0x30, false, "ADV_NONCONN_IND"),
    ])
    func aPartOfTheDataIsNotTheStationsBytes(eventType: UInt16, good: Bool, name: String) {
        let station = ScanMatchTests.station(1)
        var report = ScanMatchTests.report(station.advertisingData, ScanMatchTests.a, rssi: -60)
        (report.extended, report.eventType) = (true, eventType)
        let match = ScanMatch(reports: [report], expected: [station])
        #expect(match.stations[0].isGood == good)
        #expect(match.stations[0].eventTypes == [name])
        // Not said to be other bytes: said to be a part, not confirmed.
        #expect(match.stations[0].exactBytes && match.stations[0].partial == (good ? 0 : 1))
    }
}

/// Other beacons heard are decoded by the payload decoders and counted per address and content.
struct OtherBeaconTests {
    @Test func otherFormatsAndForeignIBeaconsAreDecodedAndCounted() throws {
        let station = ScanMatchTests.station(1)
        let alt = try AltBeacon(beaconID: [UInt8](repeating: 0x11, count: 20), referenceRSSI: -60).advertisingData()
        let uid = try EddystoneUID(
            txPower: -10, namespace: [UInt8](repeating: 0x22, count: 10), instance: [0, 0, 0, 0, 0, 1]
        ).advertisingData()
        let url = try EddystoneURL(url: "https://ti.com", txPower: 0).advertisingData()
        let foreign = IBeacon(
            uuid: try IdentityParser.uuid("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), major: 1, minor: 2
        ).advertisingData()
        let b = ScanMatchTests.b
        let match = ScanMatch(
            reports: [
                ScanMatchTests.report(station.advertisingData, ScanMatchTests.a, rssi: -60),
                ScanMatchTests.report(alt, b, rssi: -70), ScanMatchTests.report(alt, b, rssi: -71),
                ScanMatchTests.report(uid, b, rssi: -70), ScanMatchTests.report(url, b, rssi: -70),
                ScanMatchTests.report(foreign, b, rssi: -70), ScanMatchTests.report([0x02, 0x01, 0x06], b, rssi: -70),
            ], expected: [station])
        #expect(match.others.map(\.format) == ["AltBeacon", "Eddystone-UID", "Eddystone-URL", "iBeacon"])
        #expect(match.others.map(\.reports) == [2, 1, 1, 1])
        #expect(match.others[2].beacon == "Eddystone-URL https://ti.com tx 0 dBm at 0 m")
        #expect(match.others.allSatisfy { $0.address == "C0:00:00:00:00:02" })
        #expect(match.strangers.isEmpty && match.allGood)
    }
}

import BeaconPayload
import Foundation
import IntelHex
import Storage
import StructuredText
import TestSupport
import Testing

@testable import FirmwareTemplate

/// Advertiser address, interval and TX power: chip steps, manifest fields, patching and checking.
struct StationSettingsTests {
    static let catalog = try! BoardCatalogTests.loadBundled()
    static let directory = SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon").path
    static let template = try! BundledData.template()
    static let identity = try! IBeacon(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: "1", minor: "2")

    @Test func cc2541HasTheDatasheetsPowerStepsAndCC2540None() throws {
        let f256 = try #require(Self.catalog.chip(named: "CC2541F256"))
        #expect(f256.txPowerSteps.map(\.dBm) == [0, -2, -4, -6, -8, -10, -12, -14, -16, -18, -20, -23])
        #expect(f256.txPowerRegister(dBm: 0) == 0xE1)
        #expect(f256.txPowerRegister(dBm: -6) == 0xB1)
        #expect(f256.txPowerRegister(dBm: -20) == 0x41)
        #expect(f256.txPowerRegister(dBm: -23) == 0x31)
        #expect(f256.txPowerRegister(dBm: -5) == nil)
        #expect(f256.txPower(register: 0xF5) == nil)
        #expect(try #require(Self.catalog.chip(named: "CC2540F256")).txPowerSteps.isEmpty)
    }

    @Test func duplicatePowerStepsAreRefused() {
        let chips = BoardCatalogTests.goodChips.replacingOccurrences(
            of: "\"nvPages\"",
            with:
                "\"txPower\": [{\"dBm\": 0, \"register\": \"0xE1\"}, {\"dBm\": -2, \"register\": \"0xE1\"}], \"nvPages\""
        )
        #expect { try BoardCatalogTests.load(chips: chips, boards: [:]) } throws: { error in
            (error as? DataFileError)?.message == "0 dBm or register 0xE1 is listed twice"
                || (error as? DataFileError)?.message == "-2 dBm or register 0xE1 is listed twice"
        }
    }

    @Test func theBundledTemplateExposesAllThreeSettings() throws {
        let fields = Self.template.manifest.fields
        #expect(
            fields.map(\.kind) == [.advertiserAddress, .iBeaconAdvertisingData, .advertisingInterval, .txPowerRegister])
        #expect(fields.map(\.address) == [0x7F02, 0x7F08, 0x7F28, 0x7F2C])
        #expect(Self.template.manifest.field(.advertisingInterval)?.tickHz == 32753)
        let found = Self.template.foundSettings(in: Self.template.image.memory)
        #expect(found.address == [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56])
        #expect(found.intervalTicks?.ticks == 3276, "100 ms rounded up: 3275 ticks would be 99.99 ms")
        #expect(found.txPowerRegister == 0xE1)
    }

    @Test func settingsLandAtTheirAddresses() throws {
        let settings = StationSettings(
            address: try RandomStaticAddress(parsing: "C0:FF:EE:12:34:56"),
            interval: try AdvertisingInterval(parsingMilliseconds: "250"), txPower: -6)
        let station = Self.template.stationImage(for: Self.identity, settings: try Self.template.check(settings))
        let memory = station.file.memory
        // The whole PDU block is stackfree-ble.md §4.4's reference PDU.
        #expect(
            memory.contiguousBytes(in: 0x7F00..<0x7F26)
                == (try AdvertisingAirPacket(
                    address: [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56], addressIsRandom: true,
                    advertisingData: Self.identity.advertisingData()
                ).pdu))
        #expect(memory.contiguousBytes(in: 0x7F28..<0x7F2D) == [0xFD, 0x1F, 0x00, 0x00, 0xB1])  // 8189 ticks, -6 dBm
        #expect(station.rewrittenLines.count <= 4)
        #expect(Self.template.verify(memory, expected: Self.identity, checkPower: true, settings: settings).passed)
    }

    /// An interval becomes the fewest ticks that last at least as long: rounded up, never to
    /// nearest, so that the interval on air is never below the one asked for (100 ms to nearest
    /// would be 3275 ticks, 99.99 ms: under the Bluetooth 4.x minimum for ADV_NONCONN_IND).
    @Test(arguments: [
        ("20", 32753, 656),  // 655.06 ticks: 655 would be 19.998 ms, under the spec's minimum
        ("100", 32753, 3276),  // 3275.3
        ("152.5", 32753, 4995),  // 4994.83
        ("250", 32753, 8189),  // 8188.25
        ("500", 32753, 16377),  // 16376.5
        ("1000", 32753, 32753),  // exactly on a tick
        ("125", 32768, 4096),  // exactly on a tick of a 32.768 kHz crystal
        ("10240", 32753, 335391),  // 335390.72
    ])
    func intervalsBecomeTicksRoundedUp(milliseconds: String, tickHz: Int, ticks: Int) throws {
        let interval = try AdvertisingInterval(parsingMilliseconds: milliseconds)
        #expect(StationTemplate.ticks(for: interval, tickHz: tickHz) == UInt32(ticks))
    }

    /// Every interval the spec allows, at the RC oscillator's rate: the ticks last at least the
    /// interval, and one tick fewer would not.
    @Test func noIntervalBecomesShorterThanAsked() throws {
        let tickHz = 32753
        for microseconds in stride(
            from: AdvertisingInterval.minimum.microseconds, through: AdvertisingInterval.maximum.microseconds,
            by: AdvertisingInterval.stepMicroseconds)
        {
            let ticks = Int(
                StationTemplate.ticks(for: try AdvertisingInterval(microseconds: microseconds), tickHz: tickHz))
            // Compared in whole units (ticks × 10^6 against µs × Hz), free of rounding.
            let lasts = ticks * 1_000_000
            guard lasts >= microseconds * tickHz, lasts - 1_000_000 < microseconds * tickHz else {
                Issue.record("\(microseconds) µs became \(ticks) ticks")
                return
            }
        }
    }

    @Test func withoutAnAddressEveryStationGetsItsOwnDerivedOne() throws {
        var addresses: Set<RandomStaticAddress> = []
        for minor in 0..<500 {
            let identity = IBeacon(uuid: Self.identity.uuid, major: 1, minor: UInt16(minor))
            let station = Self.template.stationImage(for: identity)
            let address = try RandomStaticAddress(try #require(station.settings.address))
            #expect(address == StationTemplate.derivedAddress(for: identity))
            addresses.insert(address)
            #expect(station.settings.intervalTicks?.ticks == 3276, "the template's interval is kept")
            #expect(station.settings.txPowerRegister == 0xE1, "the template's power is kept")
        }
        #expect(addresses.count == 500)
        // Stable across runs: a re-generated batch gives byte-identical files.
        #expect(
            StationTemplate.derivedAddress(for: Self.identity) == StationTemplate.derivedAddress(for: Self.identity))
    }

    @Test func verifyNamesEachWrongSettingAndNotesTheOthers() throws {
        let station = Self.template.stationImage(for: Self.identity)
        let wanted = StationSettings(
            address: try RandomStaticAddress(parsing: "C0:FF:EE:12:34:57"),
            interval: try AdvertisingInterval(parsingMilliseconds: "100"), txPower: -6)
        let report = Self.template.verify(
            station.file.memory, expected: Self.identity, checkPower: false, settings: wanted)
        let derived = StationTemplate.derivedAddress(for: Self.identity)
        #expect(
            report.problems == [
                "advertiser address: expected C0:FF:EE:12:34:57, found \(derived)",
                "TX power: expected -6 dBm, found register 0xE1 (0 dBm)",
            ])
        let loose = Self.template.verify(station.file.memory, expected: Self.identity, checkPower: false)
        #expect(loose.passed)
        #expect(loose.notes.contains("advertiser address \(derived) (random static)"))
        #expect(loose.notes.contains("TX power 0 dBm (TXPOWER 0xE1)"))
    }

    @Test func verifyRefusesAnInvalidAddressOrPowerEvenWhenNotAskedFor() throws {
        var memory = Self.template.stationImage(for: Self.identity).file.memory
        try memory.write([0x56, 0x34, 0x12, 0xEE, 0xFF, 0x00], at: 0x7F02)  // 00:FF:EE:…: public-looking
        try memory.write([0xF5], at: 0x7F2C)
        let report = Self.template.verify(memory, expected: Self.identity, checkPower: false)
        #expect(
            report.problems == [
                "advertiser address 00:FF:EE:12:34:56 is not a valid random static address",
                "TX power register 0xF5 is not one of the CC2541F256's steps",
            ])
    }

    @Test func settingsAreRefusedWhereTheTemplateHasNoField() throws {
        var manifest = Self.template.manifest
        manifest.fields = manifest.fields.filter(\.kind.isBeaconField)
        let bytes = try Files.read(Self.directory + "/image.hex")
        let bare = try StationTemplate(
            manifest: manifest, imageBytes: bytes, imagePath: "image.hex", directory: ".", catalog: Self.catalog)
        #expect(
            throws: TemplateError.settingNotSupported(setting: .txPower, template: "cc2541-ibeacon")
        ) {
            try bare.check(StationSettings(txPower: 0))
        }
        #expect(
            throws: TemplateError.settingNotSupported(
                setting: .interval, template: "cc2541-ibeacon")
        ) { try bare.check(StationSettings(interval: AdvertisingInterval.minimum)) }
        #expect(
            throws: TemplateError.settingNotSupported(
                setting: .address, template: "cc2541-ibeacon")
        ) { try bare.check(StationSettings(address: try RandomStaticAddress(parsing: "C0:00:00:00:00:01"))) }
        // Without the field, a station keeps the template's address: nothing outside the payload changes.
        let station = bare.stationImage(for: Self.identity)
        #expect(station.file.memory.contiguousBytes(in: 0x7F02..<0x7F08) == [0x56, 0x34, 0x12, 0xEE, 0xFF, 0xC0])
        #expect(
            throws: TemplateError.txPowerNotAStep(
                dBm: -5, chip: "CC2541F256", steps: [0, -2, -4, -6, -8, -10, -12, -14, -16, -18, -20, -23])
        ) { try Self.template.check(StationSettings(txPower: -5)) }
    }

    static let fieldsText = #"""
        {"format": 1, "name": "t", "description": "d", "chip": "CC2541F256", "image": "image.hex",
        "imageSha256": "0000000000000000000000000000000000000000000000000000000000000000", "payloadFormat": "ibeacon",
        "fields": [{"name": "ad", "kind": "ibeacon-advertising-data", "address": "0x7F08", "length": 30,
        "placeholder": "02 01 06 1A FF 4C 00 02 15 F8 22 CB E8 33 60 42 F6 8F BB 28 D0 E5 67 91 3F 00 00 00 00 C5"}EXTRA]}
        """#

    @Test(arguments: [
        (
            #", {"name": "i", "kind": "advertising-interval", "address": "0x7F28", "length": 4, "placeholder": "CC 0C 00 00"}"#,
            "tickHz: is missing; an advertising-interval field counts ticks of a clock"
        ),
        (
            #", {"name": "p", "kind": "tx-power-register", "address": "0x7F2C", "length": 1, "placeholder": "E1", "tickHz": 5}"#,
            "tickHz: belongs to advertising-interval fields only"
        ),
        (
            #", {"name": "a", "kind": "advertiser-address", "address": "0x7F02", "length": 4, "placeholder": "56 34 12 EE"}"#,
            "placeholder: holds 4 bytes and length says 4; a field of kind advertiser-address takes 6"
        ),
        (
            #", {"name": "p", "kind": "tx-power-register", "address": "0x7F2C", "length": 1, "placeholder": "E1"}, {"name": "q", "kind": "tx-power-register", "address": "0x7F2D", "length": 1, "placeholder": "E1"}"#,
            "kind: the template already has a tx-power-register field"
        ),
        (
            #", {"name": "a", "kind": "advertiser-address", "address": "0x7F04", "length": 6, "placeholder": "56 34 12 EE FF C0"}"#,
            "fields: fields 'ad' and 'a' overlap"
        ),
    ])
    func badSettingsFieldsAreRefused(extra: String, message: String) {
        let text = Self.fieldsText.replacingOccurrences(of: "EXTRA", with: extra)
        #expect { try TemplateManifest.read(Array(text.utf8), file: "template.json") } throws: { error in
            let description = (error as? DataFileError)?.description ?? "\(error)"
            return description.hasSuffix(message) || description.contains(message)
        }
    }

    @Test func settingsFieldsSurviveTheJSONRoundTrip() throws {
        let text = Array(Self.template.manifest.json().rendered().utf8)
        #expect(try TemplateManifest.read(text, file: "template.json") == Self.template.manifest)
    }
}

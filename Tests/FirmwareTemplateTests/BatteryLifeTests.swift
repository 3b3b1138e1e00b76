import BeaconPayload
import Foundation
import IntelHex
import Storage
import StructuredText
import TestSupport
import Testing

@testable import FirmwareTemplate

/// The battery model of docs/battery-life.md: its known answer, its shape over every interval, TX
/// power and battery, the batteries it takes, and the images it refuses to estimate.
struct BatteryLifeTests {
    static let template = try! BundledData.template()
    static let identity = try! IBeacon(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: "1", minor: "2")
    static let cr2032 = try! Battery(parsing: "cr2032")

    static func settings(milliseconds: Double, dBm: Int) throws -> FoundSettings {
        let interval = try AdvertisingInterval(
            parsingMilliseconds: milliseconds == milliseconds.rounded()
                ? String(Int(milliseconds)) : String(milliseconds))
        let checked = try template.check(StationSettings(interval: interval, txPower: dBm))
        return template.stationImage(for: identity, settings: checked).settings
    }

    static func estimate(milliseconds: Double, dBm: Int = 0, battery: Battery = cr2032) throws -> BatteryEstimate {
        try template.batteryEstimate(settings: settings(milliseconds: milliseconds, dBm: dBm), battery: battery).get()
    }

    /// The documented model worked by hand for the default station (100 ms, 0 dBm, CR2032): per
    /// event (3700 cycles at 32 MHz + 250 µs crystal start) at 6.7 mA and 3 × (200 + 368) µs at
    /// 18.2 mA, every 3276 ticks at 32753 Hz plus the 4992 µs mean delay, over 1 µA of sleep;
    /// 90% of 225 mAh less 1.5% a year.
    @Test func theDefaultStationMatchesTheModelWorkedByHand() throws {
        let charge = (3700 / 32e6 + 250e-6) * 6.7 + 3 * (200e-6 + 368e-6) * 18.2  // mC per event
        let period = 3276 / 32753.0 + 4992e-6
        let average = charge / period + 0.001  // mA
        let days = 225 * 0.9 / (average + 225 * 0.015 / (365.25 * 24)) / 24
        let estimate = try Self.estimate(milliseconds: 100)
        #expect(abs(estimate.averageMicroamps - average * 1000) < 1e-6)
        #expect(abs(estimate.days - days) < 1e-6)
        #expect(Int(estimate.days.rounded()) == 26)
        #expect(abs(estimate.periodMilliseconds - period * 1000) < 1e-9)
        #expect(
            estimate.summary
                == "battery: about 26 days on CR2032, average 319.6 µA (an event every 105.0 ms at 0 dBm; a model, never measured on a board)"
        )
    }

    /// Longer intervals never shorten the life, lower TX powers never shorten it, every
    /// estimate stays below what the sleep current alone would allow, and a bigger battery lasts
    /// longer — over intervals from 20 ms to 10.24 s, every CC2541 power step and every battery.
    @Test(arguments: Battery.known.map(\.battery))
    func theEstimateGrowsWithTheIntervalAndNeverWithThePower(battery: Battery) throws {
        let intervals = [20, 50, 100, 152.5, 200, 300, 500, 1000, 2000, 5000, 10240]
        let powers = Self.template.chip.txPowerSteps.map(\.dBm)
        for dBm in powers {
            var previous = 0.0
            for milliseconds in intervals {
                let estimate = try Self.estimate(milliseconds: milliseconds, dBm: dBm, battery: battery)
                #expect(estimate.days > previous, "\(milliseconds) ms at \(dBm) dBm")
                #expect(estimate.averageMicroamps > ChipCurrents.cc2541.sleepMicroamps)
                let sleepOnly =
                    battery.milliampHours * battery.usableFraction / (ChipCurrents.cc2541.sleepMicroamps / 1000) / 24
                #expect(estimate.days < sleepOnly)
                previous = estimate.days
            }
        }
        for milliseconds in intervals {
            let days = try powers.map { try Self.estimate(milliseconds: milliseconds, dBm: $0, battery: battery).days }
            #expect(
                zip(days, days.dropFirst()).allSatisfy { $0 <= $1 }, "powers from high to low at \(milliseconds) ms")
        }
        let bigger = Battery(
            name: "more", milliampHours: battery.milliampHours * 2, usableFraction: battery.usableFraction,
            selfDischargePerYear: battery.selfDischargePerYear)
        #expect(
            try Self.estimate(milliseconds: 100, battery: bigger).days
                > Self.estimate(milliseconds: 100, battery: battery).days)
    }

    /// An interval field outside the firmware's range is costed as the firmware runs it: as the
    /// range's nearer end (656 or 335391 ticks).
    @Test(arguments: [(UInt32(0), 656), (1, 656), (655, 656), (656, 656), (335_392, 335_391), (.max, 335_391)])
    func anIntervalOutsideTheFirmwaresRangeIsCostedAsItsEnd(ticks: UInt32, runs: Int) throws {
        var settings = try Self.settings(milliseconds: 100, dBm: 0)
        settings.intervalTicks = IntervalTicks(ticks: ticks, tickHz: 32753)
        let estimate = try Self.template.batteryEstimate(settings: settings, battery: Self.cr2032).get()
        settings.intervalTicks = IntervalTicks(ticks: UInt32(runs), tickHz: 32753)
        #expect(try Self.template.batteryEstimate(settings: settings, battery: Self.cr2032).get() == estimate)
        #expect(estimate.days.isFinite && estimate.days > 0)
        #expect(abs(estimate.periodMilliseconds - (Double(runs) / 32.753 + 4.992)) < 1e-9)
    }

    /// The TX current is the data sheet's at 0 dBm and never more below it.
    @Test func theTransmitCurrentIsTheDataSheetsAndAnUpperBoundBelowIt() {
        let currents = ChipCurrents.cc2541
        #expect(currents.transmit(dBm: 0) == 18.2)
        #expect(currents.transmit(dBm: -23) <= 18.2)
        let interpolated = ChipCurrents(
            cpuMilliamps: 1, transmitMilliamps: [.init(dBm: 0, milliamps: 18), .init(dBm: -20, milliamps: 16)],
            sleepMicroamps: 1, crystalStartMicroseconds: 0,
            radioStartMicroseconds: 0, cpuHz: 1)
        #expect(interpolated.transmit(dBm: 4) == 18)
        #expect(interpolated.transmit(dBm: -10) == 17)
        #expect(interpolated.transmit(dBm: -20) == 16)
        #expect(interpolated.transmit(dBm: -23) == 16)
    }

    @Test(arguments: [
        ("cr2032", "CR2032"), ("CR2032", "CR2032"), ("cr2450", "CR2450"), ("2xAA", "2×AA"), ("2XAA", "2×AA"),
        ("1000", "1000 mAh"), ("1500.5", "1500.5 mAh"), ("1", "1 mAh"), ("1000000", "1000000 mAh"),
        ("1.04", "1.04 mAh"), ("999999.99", "999999.99 mAh"), ("0100", "100 mAh"), ("2032mah", "2032 mAh"),
        ("2032.5", "2032.5 mAh"), ("2033", "2033 mAh"),
        ("1000 mAh", "1000 mAh"), ("2450MAH", "2450 mAh"),
    ])
    func batteriesAreReadByNameOrCapacity(text: String, name: String) throws {
        #expect(try Battery(parsing: text).name == name)
    }

    @Test(arguments: [
        "", "cr2025", "0", "0.5", "-5", "1e3", "inf", "nan", "1000001", "1,000", " 1000", "١٠٠٠", "2xaa ", "0x10", ".",
        "mah", " mah", "1000  mah", "1000mahs",
    ])
    func anythingElseIsNoBattery(text: String) {
        #expect(throws: BatteryError.unknown(text)) { try Battery(parsing: text) }
    }

    /// A bare number that names a cell is neither guessed: the message says how to write each.
    @Test func aNumberThatNamesACellIsAmbiguous() {
        #expect(throws: BatteryError.ambiguous("2032", cell: "CR2032")) { try Battery(parsing: "2032") }
        #expect(throws: BatteryError.ambiguous("2450", cell: "CR2450")) { try Battery(parsing: "2450") }
        for spelling in ["2032.0", "2032.", "02032", "0002032", "2031.9999999999999999"] {
            #expect(throws: BatteryError.ambiguous(spelling, cell: "CR2032")) { try Battery(parsing: spelling) }
        }
        #expect(
            BatteryError.ambiguous("02032", cell: "CR2032").description
                == "'02032' could be a CR2032 or 2032 mAh: write cr2032 for the cell or 2032mah for a capacity")
        let long = String(repeating: "x", count: 100_000)
        #expect(BatteryError.unknown(long).description.count < 200)
        #expect(
            BatteryError.ambiguous("2032", cell: "CR2032").description
                == "'2032' could be a CR2032 or 2032 mAh: write cr2032 for the cell or 2032mah for a capacity")
    }

    @Test func aCapacityIsAllUsableAndNeverDischargesItself() throws {
        let battery = try Battery(parsing: "1000")
        #expect(battery.milliampHours == 1000)
        #expect(battery.usableFraction == 1)
        #expect(battery.selfDischargePerYear == 0)
    }

    /// Only a template that states its advertising's cost, on a CC2541, with both settings fields
    /// and a power step in them, gets an estimate; the others get the reason.
    @Test func imagesTheModelDoesNotDescribeGetTheReason() throws {
        let imported = try TemplateValidationTests.template()
        #expect(imported.manifest.advertisingEvent == nil)
        #expect(
            imported.batteryEstimate(settings: FoundSettings(), battery: Self.cr2032)
                == .failure(.unknownFirmware(template: "t")))
        let profile = try #require(Self.template.manifest.advertisingEvent)
        let cc2540 = try TemplateValidationTests.template {
            $0.chip = "CC2540F256"
            $0.advertisingEvent = profile
        }
        #expect(
            cc2540.batteryEstimate(settings: FoundSettings(), battery: Self.cr2032) == .failure(.unknownChip("CC2540")))
        let noFields = try TemplateValidationTests.template { $0.advertisingEvent = profile }
        #expect(
            noFields.batteryEstimate(settings: FoundSettings(), battery: Self.cr2032)
                == .failure(.noSettingsField(template: "t")))
        var settings = try Self.settings(milliseconds: 100, dBm: 0)
        settings.txPowerRegister = 0x12
        #expect(
            Self.template.batteryEstimate(settings: settings, battery: Self.cr2032)
                == .failure(.unknownTXPower(0x12, chip: "CC2541")))
        #expect(
            NoBatteryEstimate.unknownTXPower(0x12, chip: "CC2541").description
                == "no battery estimate: TX power register 0x12 is not a power step of the CC2541")
    }

    /// Short lives read as words, never "1 days" or "0 days": under half a day, one day, days.
    @Test(arguments: [("1", "battery: under a day on 1 mAh"), ("7.7", "battery: about 1 day on 7.7 mAh")])
    func shortLivesReadAsWords(capacity: String, start: String) throws {
        let estimate = try Self.estimate(milliseconds: 100, battery: try Battery(parsing: capacity))
        #expect(estimate.summary.hasPrefix(start + ", average"), "\(estimate.summary)")
    }

    /// A profile whose event cannot fit between two events, and an image without the settings'
    /// bytes, get their reasons; no figure is ever infinite or a trap.
    @Test func anImpossibleProfileAndMissingBytesGetTheirReasons() throws {
        let profile = try #require(Self.template.manifest.advertisingEvent)
        var slow = profile
        slow.cpuCycles = 100_000_000
        slow.meanDelayMicroseconds = 0
        let settings = try Self.settings(milliseconds: 100, dBm: 0)
        let template = try Self.bundled { $0.advertisingEvent = slow }
        guard case .failure(let reason) = template.batteryEstimate(settings: settings, battery: Self.cr2032) else {
            Issue.record("an event of 3.1 s every 100 ms got an estimate")
            return
        }
        #expect(
            reason.description
                == "no battery estimate: template 'cc2541-ibeacon' says an event takes 3127.0 ms, longer than the 100.0 ms from one event to the next"
        )
        #expect(
            Self.template.batteryEstimate(settings: FoundSettings(), battery: Self.cr2032)
                == .failure(.settingsMissing(template: "cc2541-ibeacon")))
        #expect(Double.infinity.oneDecimal == "inf")
        #expect((1e300).oneDecimal == "1e+300")
        #expect((-0.04).oneDecimal == "0.0")
    }

    /// The bundled template with its manifest edited (the image as it is).
    static func bundled(_ edit: (inout TemplateManifest) -> Void) throws -> StationTemplate {
        var manifest = template.manifest
        edit(&manifest)
        let directory = SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon").path
        let image = try Files.read(directory + "/image.hex")
        return try StationTemplate(
            manifest: manifest, imageBytes: image, imagePath: directory + "/image.hex", directory: directory,
            catalog: try BundledData.boards())
    }

    /// `advertisingEvent` reads back as written, and a damaged one is refused with its key.
    @Test func theManifestCarriesTheProfile() throws {
        let manifest = Self.template.manifest
        #expect(
            manifest.advertisingEvent
                == AdvertisingEventProfile(
                    cpuCycles: 3700, packets: 3, airMicroseconds: 368, meanDelayMicroseconds: 4992,
                    intervalTicks: 656...335391))
        let text = Array(manifest.json().rendered().utf8)
        #expect(try TemplateManifest.read(text, file: "template.json") == manifest)
        for (damage, message) in [
            ("\"packets\": 3", "\"packets\": 0"), ("\"packets\": 3", "\"packets\": 3, \"extra\": 1"),
            ("\"cpuCycles\": 3700", "\"cpuCycles\": \"many\""),
            ("\"maxIntervalTicks\": 335391", "\"maxIntervalTicks\": 655"),
            ("\"minIntervalTicks\": 656", "\"minIntervalTicks\": 0"),
        ] {
            let damaged = manifest.json().rendered().replacingOccurrences(of: damage, with: message)
            #expect(throws: DataFileError.self) {
                try TemplateManifest.read(Array(damaged.utf8), file: "template.json")
            }
        }
    }
}

/// The README's battery table is the model's: every cell recomputed.
struct BatteryTableTests {
    static let intervals = [100, 250, 500, 1000, 2000, 5000]

    /// The table's rows, as the README holds them.
    static func rows() throws -> [String] {
        var rows = [
            "| interval | " + Battery.known.map(\.battery.name).joined(separator: " | ") + " |",
            "|---|" + Battery.known.map { _ in "---|" }.joined(),
        ]
        for milliseconds in intervals {
            let cells = try Battery.known.map { entry in
                let estimate = try BatteryLifeTests.estimate(milliseconds: Double(milliseconds), battery: entry.battery)
                return "\(Int(estimate.days.rounded())) days"
            }
            rows.append("| \(milliseconds) ms | " + cells.joined(separator: " | ") + " |")
        }
        return rows
    }

    @Test func theREADMEShowsTheModelsTable() throws {
        let readme = try String(
            contentsOf: SharedFixtures.checkout.appendingPathComponent("README.md"), encoding: .utf8)
        let expected = try Self.rows().joined(separator: "\n")
        #expect(readme.contains(expected), "the README's battery table should read:\n\(expected)")
    }
}

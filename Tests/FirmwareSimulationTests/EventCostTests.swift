import BeaconPayload
import FirmwareTemplate
import Foundation
import TestSupport
import Testing

/// The figures each reference template's `advertisingEvent` states for the battery model
/// (docs/battery-life.md) are what the firmware does: its CPU cycles per event measured again in
/// s51, its time on air from the PDU it sends, its mean random delay from its source.
@Suite(
    .enabled(if: FirmwareBuild.canSimulate, "needs SDCC and s51 (Debian sdcc, sdcc-ucsim; scripts/test installs them)"))
struct EventCostTests {
    /// The rule the manifests follow: the most cycles any measured event took, rounded up to the
    /// next hundred (the random delay's arithmetic makes events differ by a few dozen).
    static func stated(_ measured: [Int]) -> Int { (measured.max()! + 99) / 100 * 100 }

    @Test(arguments: [("cc2541-ibeacon", false), ("cc2541-ibeacon-prewhitened", true)])
    func theTemplateStatesTheCyclesItsEventsTakeInTheSimulation(name: String, prewhitened: Bool) throws {
        let build = try FirmwareBuild.require()
        let measured = try S51.eventCycles(
            image: prewhitened ? build.prewhitenedSimulationImage : build.simulationImage)
        #expect(measured.count >= 2)
        #expect(measured.allSatisfy { $0 > 1000 }, "\(measured)")
        let profile = try #require(try BundledData.template(name).manifest.advertisingEvent)
        #expect(profile.cpuCycles == Self.stated(measured), "measured \(measured)")
    }

    @Test(arguments: ["cc2541-ibeacon", "cc2541-ibeacon-prewhitened"])
    func theTemplateStatesItsTimeOnAirMeanDelayAndIntervalRange(name: String) throws {
        let template = try BundledData.template(name)
        let profile = try #require(template.manifest.advertisingEvent)
        let pdu = try AdvertisingAirPacket(
            address: [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56], addressIsRandom: true,
            advertisingData: IBeacon(uuid: "F822CBE8-3360-42F6-8FBB-28D0E567913F", major: "0", minor: "0")
                .advertisingData()
        ).pdu
        // Preamble, access address, PDU, CRC-24, at 1 µs a bit; one packet per channel 37, 38, 39.
        #expect(profile.airMicroseconds == (1 + 4 + pdu.count + 3) * 8)
        #expect(profile.packets == 3)
        let source = try String(
            contentsOf: FirmwareBuild.source.appendingPathComponent("src/beacon.c"), encoding: .utf8)
        func defined(_ name: String) throws -> Int {
            let line = try #require(source.split(separator: "\n").first { $0.hasPrefix("#define \(name) ") })
            return try #require(Int(line.split(separator: " ").last!.filter(\.isNumber)))
        }
        let span = try defined("ADV_DELAY_SPAN")
        // The firmware runs an interval field outside its range as the range's end (the
        // simulation checks that in FirmwareSimulationTests.anIntervalOutsideTheRangeRunsAsItsEnd).
        #expect(
            profile.intervalTicks == (try defined("INTERVAL_MIN_TICKS"))...(try defined("INTERVAL_MAX_TICKS")))
        let tickHz = try #require(template.manifest.field(.advertisingInterval)?.tickHz)
        // advDelay is `x % span` ticks: 0 … span - 1, evenly.
        let mean = Double(span - 1) / 2 / Double(tickHz) * 1e6
        #expect(profile.meanDelayMicroseconds == Int(mean.rounded()))
    }

    /// The measurement sees a change of the code: the bench build, which routes the radio's bits
    /// to pins in every event, takes more cycles than the standard build in every event (both draw
    /// the same random delays, whose arithmetic makes events differ among themselves).
    @Test func aChangedFirmwareMeasuresDifferently() throws {
        let build = try FirmwareBuild.require()
        let standard = try S51.eventCycles(image: build.simulationImage)
        let sniff = try S51.eventCycles(image: build.sniffSimulationImage)
        #expect(sniff.count == standard.count)
        #expect(zip(sniff, standard).allSatisfy { $0 > $1 }, "sniff \(sniff), standard \(standard)")
    }
}

import BeaconPayload
import CCBeaconCLI
import Checksums
import FirmwareTemplate
import Foundation
import IntelHex
import Synchronization
import TestSupport
import Testing

@testable import CommandLineKit

/// The reference firmware (firmware-templates/cc2541-ibeacon) built with SDCC and run in s51:
/// what it writes to the radio, per channel and per event, against the on-air model and the
/// register table of stackfree-ble.md — for the template itself and for images `ccbeacon generate`
/// patched. Nothing here has been on air; see the template's README for the hardware steps.
@Suite(
    .enabled(if: FirmwareBuild.canSimulate, "needs SDCC and s51 (Debian sdcc, sdcc-ucsim; scripts/test installs them)"))
struct FirmwareSimulationTests {
    /// The template's placeholder identity and address (its README).
    static let placeholderPDU = try! AdvertisingAirPacket(
        address: [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56], addressIsRandom: true,
        advertisingData: IBeacon(uuid: "F822CBE8-3360-42F6-8FBB-28D0E567913F", major: "0", minor: "0").advertisingData()
    ).pdu

    /// stackfree-ble.md §4.4: C0:FF:EE:12:34:56, the AirLocate UUID, major 1, minor 2, -59 dBm.
    static let referenceIdentity = ["--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "1", "--minor", "2"]
    static let referencePDU = bytes(
        "42 24 56 34 12 ee ff c0 02 01 06 1a ff 4c 00 02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 01 00 02 c5"
    )
    /// §4.4's whitened PDU + CRC per channel, the fallback's FIFO payload.
    static let referenceWhitened: [Int: [UInt8]] = [
        37: bytes("cff601952f49997077301752693bf8e1530b6ebd2b8cc890682868f43e9cece743f45468cd6c2b6378"),
        38: bytes("94e112144b301e4f19a4a9588402cd62fe80e7fd99300b8f5f623771c80076269531104894b2caec63"),
        39: bytes("5d131c6b9718635ac3d7c35edf15dee39af960c2f7a4b585b25b02f2658bff66278dd357a3f8956995"),
    ]

    /// The trace of the unpatched `-DSIM` build, made once.
    static let templateTrace: Result<SimulationTrace, SimulationError> = {
        do { return .success(try S51.trace(image: try FirmwareBuild.require().simulationImage)) } catch {
            return .failure(SimulationError(message: "\(error)"))
        }
    }()

    @Test func templateSendsItsPDUOnChannels37To39InEveryEvent() throws {
        let trace = try Self.templateTrace.get()
        let expectation = RadioExpectation(pdu: Self.placeholderPDU)
        #expect(expectation.sequenceProblems(trace) == [], "\(RadioExpectation.sequence(of: trace))")
        #expect(trace.stoppedItself)
        #expect(trace.writes.filter { $0.register == "RFD" }.count == 4 * 3 * 39, "3 × 39 FIFO bytes per event")
    }

    @Test func finalRadioRegistersMatchTheDocumentedTable() throws {
        let trace = try Self.templateTrace.get()
        #expect(RadioExpectation(pdu: Self.placeholderPDU).registerProblems(trace) == [])
    }

    @Test func sleepsInPM2AfterEachEventWithTheIntervalPlusARandomDelay() throws {
        let trace = try Self.templateTrace.get()
        let expectation = RadioExpectation(pdu: Self.placeholderPDU)
        #expect(expectation.sleepTimerProblems(trace) == [])
        #expect(expectation.powerModeProblems(trace) == [])
        #expect(trace.writes.filter { $0.register == "PCON" }.count == 3)
    }

    /// The checks can fail: a trace altered in each of the ways they guard against is caught.
    @Test(arguments: TraceDamage.allCases)
    func theChecksCatchAWrongTrace(damage: TraceDamage) throws {
        var trace = try Self.templateTrace.get()
        try #require(damage.apply(to: &trace), "the trace has nothing for \(damage) to spoil")
        #expect(RadioExpectation(pdu: Self.placeholderPDU).problems(in: trace) != [], "\(damage) went unnoticed")
    }

    struct PatchCase: Sendable, CustomStringConvertible {
        var options: [String]
        var address: [UInt8]?
        var intervalTicks: Int
        var txPowerRegister: UInt8
        var description: String { options.joined(separator: " ") }
    }

    static let patchCases = [
        PatchCase(
            options: referenceIdentity + [
                "--power", "-59", "--address", "C0:FF:EE:12:34:56", "--interval", "250", "--tx-power", "-6",
            ],
            address: [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56], intervalTicks: 8189, txPowerRegister: 0xB1),
        PatchCase(
            options: [
                "--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "0xBEEF", "--minor", "65535", "--power",
                "-70",
                "--tx-power", "-23",
            ],
            address: nil, intervalTicks: RadioExpectation.templateIntervalTicks, txPowerRegister: 0x31),
        PatchCase(
            options: [
                "--uuid", "00000000-0000-0000-0000-000000000001", "--major", "7", "--minor", "9", "--interval", "20",
                "--address", "FF:00:00:00:00:01",
            ],
            address: [0xFF, 0x00, 0x00, 0x00, 0x00, 0x01], intervalTicks: 656, txPowerRegister: 0xE1),
    ]

    /// `ccbeacon generate` output run in the simulator: the new identity, address, interval and TX
    /// power reach the radio unchanged.
    @Test(arguments: patchCases)
    func aGeneratedStationReachesTheRadioUnchanged(patch: PatchCase) throws {
        let build = try FirmwareBuild.require()
        let scratch = try SimulationScratch()
        defer { scratch.remove() }
        let template = try scratch.template(from: build.simulationImage, manifestOf: FirmwareBuild.source)
        let station = try scratch.generate(template: template, options: patch.options)
        let identity = try IBeacon(
            uuid: value(patch.options, "--uuid"), major: value(patch.options, "--major"),
            minor: value(patch.options, "--minor"),
            power: patch.options.firstIndex(of: "--power").map { patch.options[$0 + 1] })
        let address = patch.address ?? Self.derivedAddress(identity)
        let pdu = try AdvertisingAirPacket(
            address: address, addressIsRandom: true, advertisingData: identity.advertisingData()
        ).pdu
        let trace = try S51.trace(image: station)
        let expectation = RadioExpectation(
            pdu: pdu, txPowerRegister: patch.txPowerRegister, intervalTicks: patch.intervalTicks)
        #expect(expectation.problems(in: trace) == [])
        if patch.options.contains("C0:FF:EE:12:34:56") {
            #expect(expectation.fifo(channel: 37) == [0x26] + Self.referencePDU, "§4.4's PDU, literally")
        }
    }

    /// The fallback build sends §4.4's whitened bytes on each channel, with the radio's CRC and
    /// whitening off.
    @Test func prewhitenedFallbackSendsTheModelsWhitenedBytes() throws {
        let build = try FirmwareBuild.require()
        let scratch = try SimulationScratch()
        defer { scratch.remove() }
        let template = try scratch.template(
            from: build.prewhitenedSimulationImage, manifestOf: FirmwareBuild.prewhitenedSource)
        let station = try scratch.generate(
            template: template, options: Self.referenceIdentity + ["--address", "C0:FF:EE:12:34:56"])
        let trace = try S51.trace(image: station)
        let expectation = RadioExpectation(pdu: Self.referencePDU, prewhitened: true)
        #expect(expectation.problems(in: trace) == [])
        for channel in AdvertisingAirPacket.channels {
            #expect(expectation.fifo(channel: channel) == [0x29] + Self.referenceWhitened[channel]!)
        }
        #expect(trace.writes.filter { $0.register == "RFD" }.count == 4 * 3 * 42)
    }

    /// The bench build sends the same packets and also routes the radio's bit stream to P1.0 (data)
    /// and P1.1 (clock), in every event: OBSSEL0/1 are not retained in PM2 (SWRU191F p. 69), so a
    /// tap set once at boot would be gone after the first sleep. Its template works with
    /// `ccbeacon generate` like the shipped one.
    @Test func sniffBuildAddsOnlyTheBitStreamTap() throws {
        let build = try FirmwareBuild.require()
        let trace = try S51.trace(image: build.sniffSimulationImage)
        #expect(RadioExpectation(pdu: Self.placeholderPDU, sniff: true).problems(in: trace) == [])
        for register in ["OBSSEL0", "OBSSEL1"] {
            #expect(trace.writes.filter { $0.register == register }.count == 4, "\(register) once per event")
        }
        let scratch = try SimulationScratch()
        defer { scratch.remove() }
        _ = try scratch.generate(template: build.sniffTemplate, options: Self.referenceIdentity)
    }

    /// The production image (not the -DSIM build) in s51, where the radio never answers: RFST
    /// keeps the last command and TASKDONE never comes. Every wait gives up, and the beacon still
    /// goes from event to sleep to event instead of hanging.
    @Test func aDeadRadioNeverHangsTheProductionImage() throws {
        let build = try FirmwareBuild.require()
        let map = try build.map("standard")
        let status = try #require(map.symbols["_status"])
        let run = try S51.runUntil(
            image: build.image, address: RadioExpectation.powerModeEntry, times: 3, dump: status..<(status + 7))
        #expect(run.stops == 3, "reached the power-mode entry 3 times\n\(run.log.suffix(2000))")
        let events = Int(run.memory[0]) | Int(run.memory[1]) << 8
        #expect(events == 3)
        #expect(run.memory[6] >= 3, "at least one wait per event ran out (\(run.memory[6]))")
    }

    /// A patched interval outside 20 ms … 10.24 s (an erased field, say, or one set by hand) runs
    /// as the range's nearest end: 656 or 335391 ticks, both rounded up as `ccbeacon` rounds (655
    /// ticks would be 19.998 ms). With the chip's IEEE address fixed, advDelay repeats from run to
    /// run, so the sleep-timer compares of the two images must be equal to the tick; an interval
    /// one tick inside the range (the controls) must show.
    @Test(arguments: [
        (655, 656, true), (0, 656, true), (657, 656, false),
        (335_392, 335_391, true), (0xFFFF_FFFF, 335_391, true), (335_390, 335_391, false),
    ])
    func anIntervalOutsideTheRangeRunsAsItsEnd(patched: Int, end: Int, clamped: Bool) throws {
        let scratch = try SimulationScratch()
        defer { scratch.remove() }
        // The IEEE address in the information page seeds advDelay; s51's XDATA starts random.
        let setup = ["fill xram 0x780e 0x7813 0x5a"]
        func compares(_ ticks: Int) throws -> [UInt8] {
            let build = try FirmwareBuild.require()
            let file = try IntelHexFile(text: [UInt8](try Data(contentsOf: build.simulationImage)))
            let interval = (0..<4).map { UInt8(truncatingIfNeeded: ticks >> ($0 * 8)) }
            let patched = try file.patchingRecords([MemoryPatch(address: 0x7F28, bytes: interval)])
            let image = scratch.url.appendingPathComponent("interval-\(ticks).ihx")
            try Data(patched.file.text).write(to: image)
            let trace = try S51.trace(image: image, setup: setup)
            try #require(trace.stoppedItself)
            return trace.writes.filter { ["ST2", "ST1", "ST0"].contains($0.register) }.map(\.value)
        }
        let atEnd = try compares(end)
        #expect(atEnd.count == 12)
        #expect((try compares(patched) == atEnd) == clamped)
    }

    /// The production images in s51 with a radio that never takes the TX FIFO reset (RFST keeps
    /// 0x91), or takes it but whose TX FIFO never reads empty (RFTXFLEN 0x27): not one byte may go
    /// into the FIFO. The load must wait — bounded — until RFST reads 0 and RFTXFLEN reads 0 after
    /// `CMD_TXFIFO_RESET`; here that wait runs out and ends the event, and no packet is sent.
    @Test(arguments: ["standard", "prewhitened"], FIFOResetRadio.allCases)
    func theFIFOIsNotLoadedBeforeTheResetHasTakenEffect(variant: String, radio: FIFOResetRadio) throws {
        let build = try FirmwareBuild.require()
        let trace = try S51.trace(
            productionImage: build.url("build/\(variant)/beacon.ihx"), radio: try radio.model(build, variant), sleeps: 3
        )
        #expect(trace.writes.contains { $0.register == "RFST" && $0.value == 0x91 }, "the reset was asked for")
        #expect(!trace.writes.contains { $0.register == "RFD" }, "\(RadioExpectation.sequence(of: trace).prefix(12))")
        #expect(!trace.writes.contains { $0.register == "RFST" && $0.value == 0x09 }, "no CMD_TX")
        if radio == .fifoNeverEmpty {
            #expect(trace.writes.contains { $0.isRead && $0.register == "RFTXFLEN" }, "the FIFO length was read")
        }
    }

    /// The same images with a radio that takes each command at once and reads an empty TX FIFO
    /// after the reset: in every event, per channel, `RFST 91`, then a read of RFTXFLEN, then the
    /// FIFO entry, then `CMD_TX` on the channel's frequency and whitening seed.
    @Test(arguments: ["standard", "prewhitened"])
    func theFIFOIsLoadedOnceTheResetHasTakenEffect(variant: String) throws {
        let build = try FirmwareBuild.require()
        let radio = try SimulatedRadio.answering(
            listing: String(decoding: try Data(contentsOf: build.url("build/\(variant)/beacon.rst")), as: UTF8.self),
            txFIFOLength: 0)
        let trace = try S51.trace(
            productionImage: build.url("build/\(variant)/beacon.ihx"), radio: radio, sleeps: 3)
        let expectation = RadioExpectation(pdu: Self.placeholderPDU, prewhitened: variant == "prewhitened")
        let perEvent = AdvertisingAirPacket.channels.flatMap { channel in
            [
                "RFST 91", "read RFTXFLEN",
                "FIFO \(expectation.fifo(channel: channel).map(hex).joined(separator: " "))",
                "RFST 09 on PRF_CHAN \(hex(RadioExpectation.frequencies[channel]!)) PRF_W_INIT \(hex(UInt8(0x40 | channel)))",
            ]
        }
        let lines = RadioExpectation.sequence(of: trace)
        let packets = lines.indices.filter { lines[$0] == "RFST 91" }.flatMap { lines[$0..<min($0 + 4, lines.count)] }
        #expect(packets == Array(Array(repeating: perEvent, count: 3).joined()))
    }

    /// The radios of `theFIFOIsNotLoadedBeforeTheResetHasTakenEffect`.
    enum FIFOResetRadio: String, CaseIterable, Sendable {
        /// RFST keeps every command: the reset is never taken.
        case dead
        /// Commands are taken at once, but the TX FIFO length stays at a whole entry.
        case fifoNeverEmpty

        func model(_ build: FirmwareBuild, _ variant: String) throws -> SimulatedRadio {
            switch self {
            case .dead: return .dead
            case .fifoNeverEmpty:
                let listing = try Data(contentsOf: build.url("build/\(variant)/beacon.rst"))
                return try .answering(listing: String(decoding: listing, as: UTF8.self), txFIFOLength: 0x27)
            }
        }
    }

    static func derivedAddress(_ identity: IBeacon) -> [UInt8] {
        StationTemplate.derivedAddress(for: identity).bytes
    }

    static func bytes(_ text: String) -> [UInt8] {
        let digits = Array(text.filter(\.isHexDigit))
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    func value(_ options: [String], _ name: String) throws -> String {
        let index = try #require(options.firstIndex(of: name))
        return options[index + 1]
    }
}

/// Ways to spoil a good trace, each of which the checks must notice.
enum TraceDamage: String, CaseIterable, Sendable {
    case wrongWhiteningSeedOnChannel37, droppedFIFOByte, timerLoadedInWrongOrder, sleepEntryAligned,
        wrongTXPowerRegister, pageZeroNotCleared, sameDelayEveryEvent, noStop, sleepTimerInterruptOff

    /// Spoils `trace`; false when the trace lacks what this damage needs (then the firmware is
    /// already wrong, and the other tests say how) — never a crash that would stop the suite.
    func apply(to trace: inout SimulationTrace) -> Bool {
        func first(_ register: String, _ value: UInt8? = nil) -> Int? {
            trace.writes.firstIndex { $0.register == register && (value == nil || $0.value == value) }
        }
        switch self {
        case .wrongWhiteningSeedOnChannel37:
            guard let index = first("PRF_W_INIT", 0x65) else { return false }
            trace.writes[index].value = 0x25
        case .droppedFIFOByte:
            guard let index = first("RFD", 0x4C) else { return false }
            trace.writes.remove(at: index)
        case .timerLoadedInWrongOrder:
            guard let st2 = first("ST2"), st2 + 2 < trace.writes.count else { return false }
            trace.writes.swapAt(st2, st2 + 2)
        case .sleepEntryAligned:
            guard let pcon = first("PCON") else { return false }
            trace.writes[pcon].resumeAddress = 0x7EF4
        case .wrongTXPowerRegister:
            trace.finalXDATA[0x6186] = 0xF5
        case .pageZeroNotCleared:
            trace.finalXDATA[0x6040] = S51.unwrittenFill
        case .sameDelayEveryEvent:
            // Every compare exactly one interval apart: advDelay would be constant (0).
            var compare = S51.initialSleepTimer
            var changed = false
            for index in trace.writes.indices
            where trace.writes[index].register == "ST2" && index + 2 < trace.writes.count
                && trace.writes[index + 1].register == "ST1" && trace.writes[index + 2].register == "ST0"
            {
                compare = (compare + RadioExpectation.templateIntervalTicks) & 0xFF_FFFF
                trace.writes[index].value = UInt8(compare >> 16)
                trace.writes[index + 1].value = UInt8((compare >> 8) & 0xFF)
                trace.writes[index + 2].value = UInt8(compare & 0xFF)
                changed = true
            }
            return changed
        case .noStop:
            trace.stoppedItself = false
        case .sleepTimerInterruptOff:
            trace.finalSFR[0xA8] = 0x80
        }
        return true
    }
}

/// A scratch folder for simulation templates and generated stations.
typealias SimulationScratch = TemporaryFolder

/// Simulation templates and generated stations in a scratch folder.
extension TemporaryFolder {
    /// A template folder holding a `-DSIM` image under the shipped template's manifest (same
    /// fields and placeholders; only the image digest differs), so `ccbeacon generate` patches the
    /// simulation build exactly as it patches the shipped image.
    func template(from image: URL, manifestOf shipped: URL) throws -> URL {
        let folder = url.appendingPathComponent("template")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let imageBytes = try Data(contentsOf: image)
        try imageBytes.write(to: folder.appendingPathComponent("image.hex"))
        var manifest = String(
            decoding: try Data(contentsOf: shipped.appendingPathComponent("template.json")), as: UTF8.self)
        let digest = SHA256.hexDigest([UInt8](imageBytes))
        let pattern = try #require(manifest.range(of: "\"imageSha256\": \"[0-9a-f]{64}\"", options: .regularExpression))
        manifest.replaceSubrange(pattern, with: "\"imageSha256\": \"\(digest)\"")
        try Data(manifest.utf8).write(to: folder.appendingPathComponent("template.json"))
        return folder
    }

    /// Runs `ccbeacon generate` in process and returns the station's HEX file.
    func generate(template: URL, options: [String]) throws -> URL {
        let output = url.appendingPathComponent("station-\(UUID().uuidString).hex")
        let diagnostics = Mutex("")
        let status = CommandLineTool.run(
            ["generate", "--template", template.path] + options + ["-o", output.path],
            console: Console(output: { _ in }, diagnostics: { text in diagnostics.withLock { $0 += text } }))
        try #require(status == 0, "ccbeacon generate failed: \(diagnostics.withLock { $0 })")
        return output
    }
}

import BeaconPayload
import BeaconScan
import Foundation
import HexText
import Provisioning
import StationLedger
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// `ccbeacon scan --from CAPTURE --stations stations.json` on captures built byte by byte.
struct ScanCommandTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// A capture of legacy reports (address MSB first, data, RSSI).
    static func capture(_ reports: [([UInt8], [UInt8], Int8)]) -> [UInt8] {
        BTSnoopFile.file(
            reports.map { address, data, rssi in
                (3, BTSnoopFile.uartEvent(BTSnoopFile.legacyReport(address: address, data: data, rssi: rssi)))
            })
    }

    /// The iBeacon advertising data (flags 02 01 06) of minor `minor`, major 1, `power`.
    static func data(minor: UInt8, power: Int8 = -59) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0x76, 0x34, 0xA4, 0x85, 0x17, 0x32, 0x4B, 0x7D]
            + [0xAB, 0x44, 0xD5, 0x05, 0xD8, 0xA2, 0x4C, 0x60, 0x00, 0x01, 0x00, minor, UInt8(bitPattern: power)]
    }

    @Test func eachStationOfARecordIsReportedAndOnlyExactBytesPass() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write(
            "s.csv", "name,uuid,major,minor\nA,\(Self.uuid),1,1\nB,\(Self.uuid),1,2\nC,\(Self.uuid),1,3\n")
        #expect(ToolRun(["batch", list, "--board", "hm10", "-o", scratch.path("out")]).status == 0)
        let record = scratch.path("out/stations.json")
        // Each station's burned address, from the record.
        let written =
            try JSONSerialization.jsonObject(with: Data(try scratch.bytes("out/stations.json"))) as? [String: Any]
        let addresses = try #require(
            (written?["stations"] as? [[String: Any]])?.compactMap { $0["address"] as? String })
        func bytes(_ text: String) -> [UInt8] { text.split(separator: ":").compactMap { UInt8($0, radix: 16) } }
        let (a, b, c) = (bytes(addresses[0]), bytes(addresses[1]), bytes(addresses[2]))
        let partial = scratch.path("partial.btsnoop")
        try Data(
            Self.capture([
                (a, Self.data(minor: 1), -60), (a, Self.data(minor: 1), -62), (b, Self.data(minor: 2, power: -70), -65),
                (b, Self.data(minor: 9), -50),
            ])
        ).write(to: URL(fileURLWithPath: partial))
        let run = ToolRun(["scan", "--from", partial, "--stations", record])
        #expect(run.status == 1)
        #expect(
            run.output.contains("heard      A (7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 1 power -59 dBm)"),
            "\(run.output)")
        #expect(
            run.output.contains("from \(addresses[0]): ok; RSSI 2× -62/-62/-60 dBm (min/median/max)"), "\(run.output)"
        )
        #expect(
            run.output.contains("HEARD      B") && run.output.contains("advertises other bytes than it was burned with")
        )
        #expect(run.output.contains("NOT HEARD  C"))
        #expect(run.output.contains("STRANGER   7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 9"), "\(run.output)")
        #expect(run.diagnostics.contains("2 of 3 station(s) not heard exactly as burned"))

        let full = scratch.path("full.btsnoop")
        try Data(
            Self.capture([
                (a, Self.data(minor: 1), -60), (b, Self.data(minor: 2), -61),
                (c, Self.data(minor: 3), -70),
            ])
        )
        .write(to: URL(fileURLWithPath: full))
        let good = ToolRun(["scan", "--from", full, "--stations", record, "--json"])
        #expect(good.status == 0, "\(good.diagnostics)")
        let json = try JSONSerialization.jsonObject(with: Data(good.output.utf8)) as? [String: Any]
        #expect(json?["allGood"] as? Bool == true)
        let stations = json?["stations"] as? [[String: Any]]
        #expect(stations?.map { $0["exactBytes"] as? Bool } == [true, true, true])
        #expect(stations?.first?["rssiMedian"] as? Int == -60)

        // The right bytes from an address the station was not burned with: a clone, another board.
        let clone = scratch.path("clone.btsnoop")
        try Data(
            Self.capture([
                (a, Self.data(minor: 1), -60), (b, Self.data(minor: 2), -61),
                ([0xC0, 0, 0, 0, 0, 9], Self.data(minor: 3), -70),
            ])
        )
        .write(to: URL(fileURLWithPath: clone))
        let cloned = ToolRun(["scan", "--from", clone, "--stations", record])
        #expect(cloned.status == 1)
        #expect(cloned.output.contains("from an address it was not burned with (\(addresses[2]))"), "\(cloned.output)")

        // By UUID: every station of it heard, or a failure when none is.
        #expect(ToolRun(["scan", "--from", full, "--uuid", Self.uuid, "--minor", "3"]).status == 0)
        let none = ToolRun(["scan", "--from", full, "--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"])
        #expect(none.status == 1 && none.diagnostics.contains("no iBeacon of UUID E2C56DB5"))
        let noneJSON = ToolRun(["scan", "--from", full, "--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--json"])
        let answer = try JSONSerialization.jsonObject(with: Data(noneJSON.output.utf8)) as? [String: Any]
        #expect(noneJSON.status == 1 && answer?["allGood"] as? Bool == false)
    }

    /// The record carries the bytes as burned (advertisingData), and the scan expects those, not
    /// assumed flags: a template sending flags 02 01 04 is heard as exact with its own bytes.
    @Test func theRecordsBurnedBytesAreWhatIsExpected() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\nA,\(Self.uuid),1,1\n")
        #expect(ToolRun(["batch", list, "--board", "hm10", "-o", scratch.path("out")]).status == 0)
        let recordText = try scratch.text("out/stations.json")
        let burned = HexText.bytes(Self.data(minor: 1))
        #expect(recordText.contains("\"advertisingData\": \"\(burned)\""), "\(recordText)")
        // The same record for a template whose flags byte is 04.
        var other = Self.data(minor: 1)
        other[2] = 0x04
        let edited = try scratch.write(
            "other.json", recordText.replacing(burned, with: HexText.bytes(other)))
        let capture = scratch.path("c.btsnoop")
        try Data(Self.capture([([0xC0, 0, 0, 0, 0, 1], other, -60)])).write(to: URL(fileURLWithPath: capture))
        let run = ToolRun(["scan", "--from", capture, "--stations", edited, "--uuid", Self.uuid])
        #expect(run.status == 64, "--stations and --uuid are one choice")
        let exact = ToolRun(["scan", "--from", capture, "--stations", edited])
        #expect(exact.output.contains("advertises other bytes") == false, "\(exact.output)")
        #expect(exact.output.contains("from an address it was not burned with"), "the address is still checked")
        let assumed = ToolRun(["scan", "--from", capture, "--stations", scratch.path("out/stations.json")])
        #expect(assumed.output.contains("advertises other bytes than it was burned with"), "\(assumed.output)")
        // Bytes that are not the station's identity are refused.
        let wrong = try scratch.write(
            "wrong.json", recordText.replacing(burned, with: HexText.bytes(Self.data(minor: 9))))
        let refused = ToolRun(["scan", "--from", capture, "--stations", wrong])
        #expect(refused.status == 65 && refused.diagnostics.contains("stations[0].advertisingData"))
        // Both forms for one station: which one was burned cannot be told.
        let both = try scratch.write(
            "both.json",
            recordText.replacing(
                "\"advertisingData\": \"\(burned)\"",
                with: "\"advertisingData\": \"\(burned)\", \"manufacturerData\": \"\(burned.dropFirst(6))\""))
        let twice = ToolRun(["scan", "--from", capture, "--stations", both])
        #expect(
            twice.status == 65 && twice.diagnostics.contains("stations[0].manufacturerData"), "\(twice.diagnostics)")
    }

    @Test func aDamagedCaptureOrRecordIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let capture = try scratch.write("c.btsnoop", "not a capture")
        let record = try scratch.write("r.json", #"{"stations": [{"name": "a"}]}"#)
        let bad = ToolRun(["scan", "--from", capture, "--uuid", Self.uuid])
        #expect(bad.status == 65 && bad.diagnostics.contains("is not a btsnoop capture"))
        let good = scratch.path("g.btsnoop")
        try Data(Self.capture([])).write(to: URL(fileURLWithPath: good))
        let badRecord = ToolRun(["scan", "--from", good, "--stations", record])
        #expect(badRecord.status == 65 && badRecord.diagnostics.contains("stations[0]"), "\(badRecord.diagnostics)")
        #expect(ToolRun(["scan", "--from", good]).status == 64)
        // A record that lists no station checks nothing: refused, never a pass.
        let empty = ToolRun(["scan", "--from", good, "--stations", try scratch.write("e.json", #"{"stations": []}"#)])
        #expect(empty.status == 65 && empty.diagnostics.contains("lists no station"), "\(empty.diagnostics)")
    }

    /// A capture that ends inside its last record (pulled while it was written) is read up to it:
    /// the station heard before the cut passes, the warning names the record, `--json` says where.
    @Test func aCaptureCutShortIsReadUpToTheCutWithAWarning() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let address: [UInt8] = [0xC0, 0xFF, 0xEE, 0x00, 0x00, 0x01]
        let whole = Self.capture([(address, Self.data(minor: 1), -60), (address, Self.data(minor: 1), -61)])
        let cut = scratch.path("cut.btsnoop")
        try Data(whole.dropLast(5)).write(to: URL(fileURLWithPath: cut))
        let arguments = ["scan", "--from", cut, "--uuid", Self.uuid, "--major", "1", "--minor", "1"]
        let run = ToolRun(arguments)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            run.diagnostics
                == "warning: \(cut): at byte 89: record 2 says 45 bytes follow, but only 40 do: the capture ends inside this record (copied or stopped while it was written); 1 advertising report(s) of the records before it are read, the rest is not\n"
        )
        #expect(run.output.hasPrefix("\(cut): 1 advertising report(s)\n"), "\(run.output)")
        let json = ToolRun(arguments + ["--json"])
        #expect(json.status == 0)
        #expect(json.output.contains(#""cutShort": "at byte 89: record 2 says 45 bytes follow, but only 40 do""#))
        let wholeFile = scratch.path("whole.btsnoop")
        try Data(whole).write(to: URL(fileURLWithPath: wholeFile))
        let read = ToolRun(["scan", "--from", wholeFile, "--uuid", Self.uuid, "--json"])
        #expect(read.status == 0 && read.diagnostics.isEmpty && read.output.contains(#""cutShort": null"#))
    }
}

/// `ccbeacon scan --hci` through a scripted controller, and `--ledger` as the expected stations.
struct LiveScanCommandTests {
    static let burned: [UInt8] = [0xC0, 0xFF, 0xEE, 0x00, 0x00, 0x01]

    static func controller(_ advertisers: [FakeHCIController.Advertiser]) -> FakeHCIProvider {
        FakeHCIProvider(["hci0": FakeHCIController { _ in advertisers }])
    }

    /// A permission the kernel refuses, as the socket provider reports it.
    struct Refusing: HCIControllerProvider {
        let kind: HCIError.Kind
        func open(_ name: String) throws(HCIError) -> any HCITransport {
            throw HCIError(controller: name, kind: kind, message: "refused (test)")
        }
    }

    @Test func theVerifiedStationsOfALedgerAreHeardThroughTheController() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        let data = IBeaconFixture.identity(1).advertisingData(flags: IBeacon.defaultFlags)
        let other = IBeaconFixture.identity(2).advertisingData(flags: IBeacon.defaultFlags)
        // Station a is verified; b is pending, so it is not expected — hearing it is a stranger.
        let radios = Self.controller([
            .init(address: Self.burned, data: data, rssi: -58), .init(address: [0xC0, 0, 0, 0, 0, 2], data: other),
        ])
        let run = ToolRun(["scan", "--hci", "hci0", "--seconds", "3", "--ledger", path], radios: radios)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.hasPrefix("hci0, 3 s: 60 advertising report(s)\nheard      a ("), "\(run.output)")
        #expect(run.output.contains("from C0:FF:EE:00:00:01: ok; RSSI 30× -58/-58/-58 dBm"), "\(run.output)")
        #expect(run.output.contains("STRANGER") && !run.output.contains(" b "), "\(run.output)")

        let json = ToolRun(["scan", "--hci", "hci0", "--seconds", "0.5", "--ledger", path, "--json"], radios: radios)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(answer["controller"] as? String == "hci0" && answer["seconds"] as? Double == 0.5)
        #expect(answer["allGood"] as? Bool == true && answer["reports"] as? Int == 10)

        // From another address than the ledger records: not good.
        let moved = ToolRun(
            ["scan", "--hci", "hci0", "--seconds", "1", "--ledger", path],
            radios: Self.controller([.init(address: [0xC0, 0, 0, 0, 0, 9], data: data)]))
        #expect(
            moved.status == 1 && moved.output.contains("from an address it was not burned with (C0:FF:EE:00:00:01)"))
        // Nothing on air.
        let silent = ToolRun(
            ["scan", "--hci", "hci0", "--seconds", "1", "--ledger", path], radios: Self.controller([]))
        #expect(silent.status == 1 && silent.output.contains("NOT HEARD  a"), "\(silent.output)")
    }

    @Test func aLedgerWithNoVerifiedStationExpectsNothingAndSaysSo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        let ledger = try SQLiteLedger(path: path)
        try ledger.register([Station(name: "a", identity: IBeaconFixture.identity(1))])
        let run = ToolRun(["scan", "--hci", "hci0", "--ledger", path], radios: Self.controller([]))
        #expect(run.status == 1 && run.diagnostics.contains("no station is verified in this ledger"))
        let missing = ToolRun(
            ["scan", "--hci", "hci0", "--ledger", scratch.path("none.sqlite")], radios: Self.controller([]))
        #expect(missing.status != 0 && !Files.exists(scratch.path("none.sqlite")), "a scan never creates a ledger")
    }

    @Test(arguments: [
        (HCIError.Kind.permission, "setcap cap_net_raw+ep"), (.noBluetooth, "btmon -w FILE"),
        (.noController, "bluetoothctl list"), (.down, "bluetoothctl power on"),
        (.refused(command: "LE Set Scan Parameters", status: 0x0C), "bluetoothctl scan off"),
    ])
    func aControllerThatCannotBeUsedIsToldWithWhatToDo(_ kind: HCIError.Kind, _ hint: String) {
        let run = ToolRun(
            ["scan", "--hci", "hci0", "--uuid", ScanCommandTests.uuid], radios: Refusing(kind: kind))
        #expect(run.status == 1)
        #expect(run.diagnostics.hasPrefix("ccbeacon scan: error: hci0: refused (test)\nhint: "), "\(run.diagnostics)")
        #expect(run.diagnostics.contains(hint))
    }

    @Test(arguments: [
        ["scan", "--hci", "bt0", "--uuid", ScanCommandTests.uuid],
        ["scan", "--hci", "hci0", "--seconds", "0x10", "--uuid", ScanCommandTests.uuid],
        ["scan", "--hci", "hci0", "--seconds", "0", "--uuid", ScanCommandTests.uuid],
        ["scan", "--from", "c.btsnoop", "--seconds", "5", "--uuid", ScanCommandTests.uuid],
        ["scan", "--from", "c.btsnoop", "--hci", "hci0", "--uuid", ScanCommandTests.uuid],
        ["scan", "--hci", "hci0"],
        ["scan", "--hci", "hci0", "--ledger", "l.sqlite", "--minor", "1"],
    ])
    func usageMistakesAreRefusedBeforeAnythingIsOpened(_ arguments: [String]) {
        let run = ToolRun(arguments, radios: Refusing(kind: .io))
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("refused (test)"))
    }
}

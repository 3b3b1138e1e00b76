import Foundation
import TestSupport
import Testing

@testable import CCBeaconCLI

/// `ccbeacon calibrate` from an RSSI file (one per line, or a CSV column) and from a capture with
/// several stations and foreign advertisers mixed in.
struct CalibrateCommandTests {
    @Test func rssiFilesOnePerLineOrACSVColumn() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let values = [-30, -35] + [Int](repeating: -60, count: 16) + [-90, -95]
        let lines = try scratch.write("one.txt", values.map(String.init).joined(separator: "\n") + "\n")
        let csv = try scratch.write(
            "app.csv",
            "time,RSSI,name\n" + values.enumerated().map { "\($0.offset),\($0.element),x" }.joined(separator: "\n"))
        for file in [lines, csv] {
            let run = ToolRun(["calibrate", "--rssi", file])
            #expect(run.status == 0, "\(run.diagnostics)")
            #expect(
                run.output.hasPrefix(
                    "measured power -60 dBm from 20 samples of \(file) (the lowest and highest 2 left out; 16 averaged, -60…-60 dBm"
                ), "\(run.output)")
        }
        let json = ToolRun(["calibrate", "--rssi", csv, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(
            object?["measuredPower"] as? Int == -60 && object?["samples"] as? Int == 20 && object?["used"] as? Int == 16
        )
    }

    @Test(arguments: [
        ("-60\n-61\n", 65, "2 samples; a calibration needs at least 20 (18 more)"),
        ("-60\nloud\n", 65, ":2:1: 'loud' is not an RSSI"),
        ("time,level\n1,-60\n", 65, ":1: the header names no rssi column"),
        ("-60\n-200\n", 65, "'-200' is not an RSSI; give a whole number of dBm, -127…20"),
    ])
    func badSampleFilesAreRefused(text: String, status: Int32, message: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = ToolRun(["calibrate", "--rssi", try scratch.write("s.txt", text)])
        #expect(run.status == status && run.diagnostics.contains(message), "\(run.diagnostics)")
    }

    /// From a capture: only the given address's reports count; other stations and foreign
    /// advertisers are left out.
    @Test func aCaptureGivesTheSamplesOfOneAddress() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let ours: [UInt8] = [0xC7, 0xD5, 0x60, 0xAD, 0x5D, 0x5A]
        let other: [UInt8] = [0xC0, 0xFF, 0xEE, 0x00, 0x00, 0x01]
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE]
        func event(_ address: [UInt8], _ rssi: Int8) -> (flags: UInt32, bytes: [UInt8]) {
            (3, BTSnoopFile.uartEvent(BTSnoopFile.legacyReport(address: address, data: data, rssi: rssi)))
        }
        var packets: [(flags: UInt32, bytes: [UInt8])] = []
        for index in 0..<24 {
            packets.append(event(ours, Int8(-58 - index % 5)))
            packets.append(event(other, -40))
        }
        let bytes = BTSnoopFile.file(packets)
        let capture = scratch.path("c.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: capture))
        let run = ToolRun(["calibrate", "--from", capture, "--address", "C7:D5:60:AD:5D:5A"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.hasPrefix("measured power -60 dBm from 24 samples"), "\(run.output)")
        let missing = ToolRun(["calibrate", "--from", capture])
        #expect(missing.status == 64 && missing.diagnostics.contains("--from needs --address"))
        let none = ToolRun(["calibrate", "--from", capture, "--address", "C0:00:00:00:00:09"])
        #expect(
            none.status == 65 && none.diagnostics.contains("no advertising report from C0:00:00:00:00:09"),
            "\(none.diagnostics)")
    }

    /// One advertisement heard by two controllers is two samples of two radios: refused.
    @Test func samplesOfTwoControllersAreRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let address: [UInt8] = [0xC7, 0xD5, 0x60, 0xAD, 0x5D, 0x5A]
        let data: [UInt8] = [0x02, 0x01, 0x06]
        var packets: [(flags: UInt32, bytes: [UInt8])] = []
        for index in 0..<20 {
            for controller: UInt32 in [0, 1] {
                let rssi = Int8(controller == 0 ? -50 : -80 - index % 2)
                let report = BTSnoopFile.legacyReport(address: address, data: data, rssi: rssi)
                packets.append((controller << 16 | 3, BTSnoopFile.monitorEvent(report)))
            }
        }
        let bytes = BTSnoopFile.file(datalink: 2001, packets)
        let capture = scratch.path("two.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: capture))
        let run = ToolRun(["calibrate", "--from", capture, "--address", "C7:D5:60:AD:5D:5A"])
        #expect(
            run.status == 65 && run.diagnostics.contains("heard by 2 controllers (hci0, hci1)"), "\(run.diagnostics)")
    }
}

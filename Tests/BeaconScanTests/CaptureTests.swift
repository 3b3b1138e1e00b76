import Foundation
import TestSupport
import Testing

@testable import BeaconScan

struct CaptureTests {
    static let address: [UInt8] = [0xC7, 0xD5, 0x60, 0xAD, 0x5D, 0x5A]
    /// The iBeacon advertising data of 7634A485-1732-4B7D-AB44-D505D8A24C60, major 1, minor 2, -59 dBm.
    static let data: [UInt8] =
        [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0x76, 0x34, 0xA4, 0x85, 0x17, 0x32, 0x4B, 0x7D]
        + [0xAB, 0x44, 0xD5, 0x05, 0xD8, 0xA2, 0x4C, 0x60, 0x00, 0x01, 0x00, 0x02, 0xC5]

    /// A legacy report (RSSI −61) then an extended one (−70) of `data` from `address`.
    static let twoReports = BTSnoopFile.file([
        (3, BTSnoopFile.uartEvent(BTSnoopFile.legacyReport(address: address, data: data, rssi: -61))),
        (3, BTSnoopFile.uartEvent(BTSnoopFile.extendedReport(address: address, data: data, rssi: -70))),
    ])

    static func reports(_ bytes: [UInt8]) throws -> [AdvertisingReport] {
        try AdvertisingReport.reports(in: BTSnoopCapture(bytes: bytes, file: "c.btsnoop"), file: "c.btsnoop")
    }

    /// Legacy and extended reports on the UART datalink; commands, ACL data and other events are
    /// skipped.
    @Test func uartCapturesGiveTheirAdvertisingReports() throws {
        let capture = BTSnoopFile.file([
            (2, [0x01, 0x0C, 0x20, 0x02, 0x00, 0x00]),  // a command (LE Set Scan Enable), host to controller
            (3, BTSnoopFile.uartEvent([0x01, 0x0C, 0x20, 0x00], code: 0x0E)),  // Command Complete
            (3, BTSnoopFile.uartEvent(BTSnoopFile.legacyReport(address: Self.address, data: Self.data, rssi: -61))),
            (1, [0x02, 0x00, 0x20, 0x00, 0x00]),  // ACL data
            (3, BTSnoopFile.uartEvent(BTSnoopFile.extendedReport(address: Self.address, data: Self.data, rssi: -70))),
        ])
        let reports = try Self.reports(capture)
        #expect(reports.count == 2)
        #expect(
            reports[0]
                == AdvertisingReport(
                    eventType: 3, extended: false, addressType: 1, address: Self.address, data: Self.data, rssi: -61,
                    record: 3))
        #expect(reports[0].addressText == "C7:D5:60:AD:5D:5A")
        #expect(reports[1].extended && reports[1].eventType == 0x10 && reports[1].rssi == -70)
        #expect(reports[1].data == Self.data && reports[1].address == Self.address && reports[1].record == 5)
    }

    /// The monitor datalink: no type byte, the opcode in the flags (3: an event).
    @Test func monitorCapturesToo() throws {
        let report = BTSnoopFile.legacyReport(address: Self.address, data: Self.data, rssi: -55)
        let event = BTSnoopFile.monitorEvent(report)
        let command: [UInt8] = [0x0C, 0x20, 0x02, 0x00, 0x00]
        let capture = BTSnoopFile.file(datalink: 2001, [(2, command), (0x0001_0003, event)])
        let reports = try Self.reports(capture)
        #expect(reports.map(\.rssi) == [-55] && reports.first?.data == Self.data)
    }

    /// A damaged capture is refused at the byte where it goes wrong, never read in part (a capture
    /// that merely ends inside its last record is read up to it: `aCaptureCutShortIsReadToItsLastWholeRecord`).
    static let damaged: [([UInt8], String)] = {
        let header: [UInt8] = Array("btsnoop".utf8) + [0]
        let shortReport: [UInt8] = [0x02, 0x01, 0x03, 0x01, 0x11]
        let longReport: [UInt8] = [0x02, 0x01, 0x03, 0x01] + [UInt8](repeating: 1, count: 6) + [40]
        // A record running past the end whose header says it holds more than its packet had.
        var swollen = BTSnoopFile.file([(3, BTSnoopFile.uartEvent([0x02, 0x01]))])
        swollen[16..<20] = ArraySlice(BTSnoopFile.u32(3))
        swollen[20..<24] = ArraySlice(BTSnoopFile.u32(9))
        // A header damaged mid-file into a length no packet has, records after it (the eighth
        // review: read as a capture cut short there, and calibrated from the records before).
        var huge = BTSnoopFile.file(Array(repeating: (3, BTSnoopFile.uartEvent([0x02, 0x00])), count: 3))
        huge[16..<20] = ArraySlice(BTSnoopFile.u32(0xFFFF_FFFF))
        huge[20..<24] = ArraySlice(BTSnoopFile.u32(0x7FFF_FFFF))
        return [
            (Array("btsnoo".utf8), "at byte 0: is not a btsnoop capture"),
            // Only the start of a capture: too short, not another file.
            (header, "at byte 8: ends after 8 bytes, inside the 16-byte btsnoop header"),
            (header + [1, 0], "at byte 10: ends after 10 bytes, inside the 16-byte btsnoop header"),
            (header + BTSnoopFile.u32(2) + BTSnoopFile.u32(1002), "at byte 8: is btsnoop version 2"),
            (header + BTSnoopFile.u32(1) + BTSnoopFile.u32(1001), "at byte 12: has datalink 1001"),
            (
                huge,
                "at byte 20: record 1 says 2147483647 bytes follow, more than any HCI packet (65540): the header is damaged"
            ),
            (
                swollen,
                "at byte 20: record 1 says 9 bytes follow, but only 5 do (and its packet had 3: the header is damaged)"
            ),
            (
                BTSnoopFile.file([(3, [0x04, 0x3E, 0x05, 0x02])]),
                "at byte 40: record 1: the HCI event says 5 parameter bytes, the record holds 1"
            ),
            (
                BTSnoopFile.file([(3, BTSnoopFile.uartEvent(shortReport))]),
                "at byte 47: record 1: the advertising report ends before its address"
            ),
            (
                BTSnoopFile.file([(3, BTSnoopFile.uartEvent(longReport))]),
                "at byte 53: record 1: a legacy advertising report of 40 data bytes (at most 31)"
            ),
            (
                BTSnoopFile.file([(3, BTSnoopFile.uartEvent([0x02, 0x00, 0x03]))]),
                "at byte 45: record 1: 1 byte(s) after the 0 report(s) the event counts"
            ),
            (
                BTSnoopFile.file(datalink: 2001, [(0xFFFF_0003, [0x3E, 0x01, 0x02])]),
                "at byte 24: record 1 is an event of no controller (index 0xFFFF)"
            ),
        ]
    }()

    @Test(arguments: damaged)
    func damagedCapturesAreRefusedWhereTheyGoWrong(bytes: [UInt8], message: String) {
        #expect {
            _ = try Self.reports(bytes)
        } throws: { error in
            (error as? CaptureError).map { "\($0)".contains(message) } ?? false
        }
    }

    /// A capture that ends inside a record — copied or stopped while it was written — is read up
    /// to that record, and says where it was cut: at every length of a two-report capture.
    @Test func aCaptureCutShortIsReadToItsLastWholeRecord() throws {
        let records = [
            BTSnoopFile.uartEvent(BTSnoopFile.legacyReport(address: Self.address, data: Self.data, rssi: -61)),
            BTSnoopFile.uartEvent(BTSnoopFile.extendedReport(address: Self.address, data: Self.data, rssi: -70)),
        ]
        let whole = BTSnoopFile.file(records.map { (3, $0) })
        let secondRecord = 16 + 24 + records[0].count
        for length in 16..<whole.count {
            let capture = try BTSnoopCapture(bytes: Array(whole[..<length]), file: "c.btsnoop")
            let reports = try AdvertisingReport.reports(in: capture, file: "c.btsnoop")
            let recordCut = length < secondRecord ? 1 : 2
            let recordStart = recordCut == 1 ? 16 : secondRecord
            let expected =
                length == recordStart
                ? nil
                : length - recordStart < 24
                    ? "c.btsnoop: at byte \(recordStart): record \(recordCut) is cut short after \(length - recordStart) of its header's 24 bytes"
                    : "c.btsnoop: at byte \(recordStart + 4): record \(recordCut) says \(records[recordCut - 1].count) bytes follow, but only \(length - recordStart - 24) do"
            #expect(capture.cutShort?.description == expected, "length \(length)")
            #expect(reports.map(\.rssi) == (recordCut == 1 ? [] : [-61]), "length \(length)")
        }
        #expect(try BTSnoopCapture(bytes: whole, file: "c.btsnoop").cutShort == nil)
    }

    /// Hostile captures — a valid one with bytes changed, cut or added at random — are read or
    /// refused, never crashed on (a seeded generator: every run tries the same 3,000).
    @Test func mangledCapturesNeverCrash() {
        let valid = Self.twoReports
        var generator = SeededGenerator(seed: 2541, stream: 7)
        var read = 0
        for _ in 0..<3_000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.removeSubrange(index...)
                default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                }
                if bytes.isEmpty { bytes = [0] }
            }
            if (try? Self.reports(bytes)) != nil { read += 1 }
        }
        #expect(read > 0 && read < 3_000, "some mangled captures still read, others are refused: \(read)")
    }

    /// Debian's btmon reads the same captures the same way: address, event type, RSSI and the
    /// advertising bytes. (Its iBeacon UUID/major/minor lines are in the wrong byte order in 5.66,
    /// so nothing here depends on them.)
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/btmon"), "needs btmon (Debian bluez)"))
    func btmonReadsTheCapturesAsWeDo() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bytes = Self.twoReports
        let path = folder.path("c.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let btmon = try ChildProcess.run("/usr/bin/btmon", ["-r", path], in: folder.url, timeout: 20)
        #expect(btmon.status == 0, "\(btmon.errors)")
        let reports = try Self.reports(bytes)
        let text = btmon.output
        #expect(
            text.contains("LE Advertising Report (0x02)") && text.contains("LE Extended Advertising Report (0x0d)"),
            "\(text)")
        for report in reports {
            #expect(text.contains("Address: \(report.addressText)"), "\(text)")
            #expect(text.contains("RSSI: \(report.rssi) dBm"), "\(text)")
        }
        #expect(text.contains("Non connectable undirected - ADV_NONCONN_IND (0x03)"), "\(text)")
        #expect(text.contains("Legacy PDU Type: ADV_NONCONN_IND (0x0010)"), "\(text)")
        // For a legacy report btmon decodes the structures (length, Apple's ID, the last byte as
        // "TX power"); for an extended one it also prints the bytes, which must be ours exactly.
        #expect(text.contains("Data length: 30") && text.contains("Data length: 0x1e"), "\(text)")
        #expect(text.contains("Company: Apple, Inc. (76)") && text.contains("TX power: -59 dB"), "\(text)")
        let dump = stride(from: 0, to: Self.data.count, by: 16).map { start in
            Self.data[start..<min(start + 16, Self.data.count)].map { String(format: "%02x", $0) }.joined(
                separator: " ")
        }
        for line in dump { #expect(text.contains(line), "\(line) in \(text)") }
    }

    /// Wireshark's tshark reads a capture cut inside its last record as we do: the records before
    /// it, and a word that it was cut short. (btmon 5.66 decodes the cut record too, with bytes it
    /// does not have: no model here.)
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark"), "needs tshark (Debian)"))
    func tsharkReadsACaptureCutShortAsWeDo() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bytes = Self.twoReports.dropLast(5)
        let path = folder.path("cut.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let tshark = try ChildProcess.run("/usr/bin/tshark", ["-r", path], in: folder.url, timeout: 60)
        let lines = tshark.output.split(separator: "\n").filter { $0.contains("HCI_EVT") }
        #expect(lines.count == 1 && lines[0].contains("LE Advertising Report"), "\(tshark.output)")
        #expect(tshark.errors.contains("cut short in the middle of a packet"), "\(tshark.errors)")
        let capture = try BTSnoopCapture(bytes: Array(bytes), file: path)
        #expect(try AdvertisingReport.reports(in: capture, file: path).map(\.rssi) == [-61])
        #expect(capture.cutShort != nil)
    }
}

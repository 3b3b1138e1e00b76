import Foundation
import TestSupport
import Testing

/// `--trace FILE`: a usbmon pcap that Debian's own `tshark` reads back, checked against what the
/// emulated debugger received and sent (`cc-debugger-emulator --log-data`).
enum TShark {
    static let path = ["/usr/bin/tshark", "/usr/local/bin/tshark"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// One record as tshark dissects it.
    struct Record: Equatable {
        var id: String
        var event: String  // S or C
        var transferType: Int  // 2 control, 3 bulk
        var endpoint: Int
        var status: Int
        var data: [UInt8]
    }

    /// Every record of `file`, and tshark's diagnostics.
    static func records(_ file: String, in directory: URL) throws -> (records: [Record], errors: String, status: Int32)
    {
        let run = try ChildProcess.run(
            path!,
            [
                "-r", file, "-T", "fields", "-E", "separator=|", "-e", "usb.urb_id", "-e", "usb.urb_type", "-e",
                "usb.transfer_type", "-e", "usb.endpoint_address", "-e", "usb.urb_status", "-e", "usb.capdata",
                "-e", "usb.data_fragment",
            ], in: directory, timeout: 60)
        let records = run.output.split(separator: "\n").compactMap { line -> Record? in
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 7 else { return nil }
            let hex = (fields[5].isEmpty ? fields[6] : fields[5]).replacingOccurrences(of: ":", with: "")
            let bytes = stride(from: 0, to: hex.count - 1, by: 2).map { offset -> UInt8 in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
            }
            return Record(
                id: fields[0], event: fields[1].replacingOccurrences(of: "'", with: ""),
                transferType: Int(fields[2].dropFirst(2), radix: 16) ?? -1,
                endpoint: Int(fields[3].dropFirst(2), radix: 16) ?? -1, status: Int(fields[4]) ?? -999, data: bytes)
        }
        return (records, run.errors, run.status)
    }

    /// The emulator's `DATA OUT|IN` lines: the bytes of each bulk transfer, in order.
    static func emulatorData(_ log: String, direction: String) -> [[UInt8]] {
        log.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count >= 3, parts[0] == "DATA", parts[1] == direction else { return nil }
            let hex = parts.count > 3 ? Array(parts[3].utf8) : []
            return stride(from: 0, to: hex.count - 1, by: 2).map {
                UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)!
            }
        }
    }
}

@Suite(
    .serialized,
    .enabled(if: Tools.available && TShark.path != nil, "needs umockdev and tshark (scripts/test installs both)"))
struct USBTraceTests {
    /// A whole flash, traced: every submission has its completion (same URB id, in order), control
    /// and bulk both, and the bulk payloads are byte for byte what the debugger received and sent.
    @Test(arguments: ["proven", "packed"])
    func aFlashTraceReadsBackInTSharkAsTheDebuggerSawIt(framing: String) throws {
        let work = try Workspace()
        defer { work.remove() }
        let (station, _) = try work.station()
        let run = try Tools.ccbeacon(
            ["flash", station, "--usb-framing", framing, "--trace", work.path("flash.pcap")],
            options: ["--log", work.path("emulator.log"), "--log-data"], in: work.url)
        try #require(run.status == 0, "\(run.errors)")
        let (records, errors, status) = try TShark.records(work.path("flash.pcap"), in: work.url)
        #expect(status == 0, "\(errors)")
        #expect(!errors.contains("cut short"))
        let submissions = records.filter { $0.event == "S" }
        let completions = records.filter { $0.event == "C" }
        #expect(submissions.count == completions.count && !submissions.isEmpty)
        // One transfer at a time: each submission is followed by its own completion.
        for pair in stride(from: 0, to: records.count - 1, by: 2) {
            #expect(records[pair].event == "S" && records[pair + 1].event == "C")
            #expect(records[pair].id == records[pair + 1].id)
            #expect(records[pair + 1].status == 0)
        }
        #expect(records.contains { $0.transferType == 2 } && records.contains { $0.transferType == 3 })
        let log = try String(contentsOfFile: work.path("emulator.log"), encoding: .utf8)
        let sent = submissions.filter { $0.transferType == 3 && $0.endpoint == 0x04 }.map(\.data)
        let received = completions.filter { $0.transferType == 3 && $0.endpoint == 0x84 }.map(\.data)
        #expect(sent == TShark.emulatorData(log, direction: "OUT"))
        #expect(received == TShark.emulatorData(log, direction: "IN"))
        // The bursts are in it: alone in their transfers (proven), or with other frames (packed).
        let bursts = sent.filter { $0.count >= 1027 }
        #expect(!bursts.isEmpty)
        #expect(bursts.allSatisfy { $0.count == 1027 && $0.prefix(2) == [0xEE, 0x84] } == (framing == "proven"))
        // Every control transfer the emulator served (descriptors, vendor requests) is traced;
        // the trace adds SET_CONFIGURATION, which the kernel handles without a URB to the device.
        let served = log.split(separator: "\n").filter { $0.hasPrefix("CTRL") }.count
        #expect(submissions.filter { $0.transferType == 2 }.count == served + 1)
    }

    /// A failing transfer is in the trace with its status: the stall of a packed burst on a
    /// firmware that takes bursts only alone (-EPIPE), the last record before the command ends.
    @Test func aStallIsTracedWithItsStatus() throws {
        let work = try Workspace()
        defer { work.remove() }
        let (station, _) = try work.station()
        let run = try Tools.ccbeacon(
            ["flash", station, "--usb-framing", "packed", "--trace", work.path("stall.pcap")],
            options: ["--bursts-alone"], in: work.url)
        #expect(run.status == 1)
        let (records, errors, _) = try TShark.records(work.path("stall.pcap"), in: work.url)
        #expect(!errors.contains("cut short"))
        let stalled = records.filter { $0.event == "C" && $0.status == -32 }
        #expect(stalled.count == 1)
        #expect(stalled.first?.endpoint == 0x04)
    }

    /// A command killed in the middle of a burn leaves a trace of whole records tshark reads to
    /// its end (each record is one write).
    @Test func aKilledBurnLeavesAReadableTrace() throws {
        let work = try Workspace()
        defer { work.remove() }
        // 64 KiB that every block must be written for, on the device time of a real debugger.
        let image = (0..<0x10000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        try Data(image).write(to: work.url.appendingPathComponent("dense.bin"))
        let trace = work.path("killed.pcap")
        let child = try ChildProcess(
            Tools.emulator,
            ["--timing", "hardware", "--", Tools.ccbeacon, "flash", work.path("dense.bin"), "--trace", trace],
            in: work.url)
        // Killed once the trace holds some 40 KB, in the middle of programming.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline,
            ((try? FileManager.default.attributesOfItem(atPath: trace)[.size] as? Int) ?? 0) < 40_000
        {
            usleep(2_000)
        }
        child.killGroup()
        #expect(child.wait() != 0, "killed before the flash was done")
        let (records, errors, status) = try TShark.records(trace, in: work.url)
        #expect(status == 0, "\(errors)")
        #expect(!errors.contains("cut short"), "\(errors)")
        #expect(records.count > 100)
    }
}

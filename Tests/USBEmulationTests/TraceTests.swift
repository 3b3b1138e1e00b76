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
        /// bRequest of a control submission (6: GET_DESCRIPTOR), nil for anything else.
        var request: Int? = nil
    }

    /// Every record of `file`, and tshark's diagnostics.
    static func records(_ file: String, in directory: URL) throws -> (records: [Record], errors: String, status: Int32)
    {
        let run = try ChildProcess.run(
            path!,
            [
                "-r", file, "-T", "fields", "-E", "separator=|", "-e", "usb.urb_id", "-e", "usb.urb_type", "-e",
                "usb.transfer_type", "-e", "usb.endpoint_address", "-e", "usb.urb_status", "-e", "usb.capdata",
                "-e", "usb.data_fragment", "-e", "usb.setup.bRequest",
            ], in: directory, timeout: 60)
        let records = run.output.split(separator: "\n").compactMap { line -> Record? in
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 7 else { return nil }
            let bytes = hexBytes(
                Array((fields[5].isEmpty ? fields[6] : fields[5]).utf8).filter { $0 != UInt8(ascii: ":") })
            return Record(
                id: fields[0], event: fields[1].replacingOccurrences(of: "'", with: ""),
                transferType: Int(fields[2].dropFirst(2), radix: 16) ?? -1,
                endpoint: Int(fields[3].dropFirst(2), radix: 16) ?? -1, status: Int(fields[4]) ?? -999, data: bytes,
                request: fields.count > 7 ? Int(fields[7]) : nil)
        }
        return (records, run.errors, run.status)
    }

    /// The emulator's `DATA OUT|IN` lines: the bytes of each bulk transfer, in order.
    static func emulatorData(_ log: String, direction: String) -> [[UInt8]] {
        log.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count >= 3, parts[0] == "DATA", parts[1] == direction else { return nil }
            return hexBytes(parts.count > 3 ? Array(parts[3].utf8) : [])
        }
    }

    /// Hex digits (two per byte) as bytes; a digit that is not one reads as 0.
    static func hexBytes(_ digits: [UInt8]) -> [UInt8] {
        func value(_ digit: UInt8) -> UInt8 {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            default: return 0
            }
        }
        return stride(from: 0, to: digits.count - 1, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
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

/// A trace the disk cannot hold: `ulimit -f` stands in for a full disk.
@Suite(
    .serialized,
    .enabled(if: Tools.available && TShark.path != nil, "needs umockdev and tshark (scripts/test installs both)"))
struct TraceWriteFailureTests {
    /// The flash goes on and succeeds; the trace stops on a whole record, which tshark reads to
    /// its end, and stderr says where it stopped.
    @Test func aTraceTheDiskCannotHoldStopsOnAWholeRecord() throws {
        let work = try Workspace()
        defer { work.remove() }
        let (station, _) = try work.station()
        let trace = work.path("full.pcap")
        let run = try Tools.run(
            [],
            ["/bin/bash", "-c", "ulimit -f 8; exec \"$0\" \"$@\"", Tools.ccbeacon, "flash", station, "--trace", trace],
            in: work.url)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.contains("warning: the trace \(trace) stopped after"), "\(run.errors)")
        #expect(run.errors.contains("File too large"), "\(run.errors)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: trace)[.size] as? Int)
        #expect(size > 0 && size <= 8 * 1024)
        let (records, errors, status) = try TShark.records(trace, in: work.url)
        #expect(status == 0 && !errors.contains("cut short"), "\(errors)")
        #expect(records.count > 10)
    }

    /// The burn test's report says its trace stopped (summary.txt and summary.json), and the
    /// test's own outcome stands.
    @Test func aBurnTestReportSaysItsTraceStopped() throws {
        let work = try Workspace()
        defer { work.remove() }
        let run = try Tools.run(
            [],
            [
                "/bin/bash", "-c", "ulimit -f 200; exec \"$0\" \"$@\"", Tools.ccbeacon, "doctor", "--burn-test",
                "--yes",
                "--report", work.path("r"),
            ], in: work.url)
        #expect(run.status == 0, "\(run.errors)")
        #expect(try work.text("r/summary.txt").contains("trace.pcap stopped after"))
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(try work.bytes("r/summary.json"))) as? [String: Any])
        #expect((summary["traceFailure"] as? String)?.contains("File too large") == true)
        #expect(summary["passed"] as? Bool == true)
        let (records, errors, status) = try TShark.records(work.path("r/trace.pcap"), in: work.url)
        #expect(status == 0 && !errors.contains("cut short"), "\(errors)")
        #expect(records.count == summary["traceRecords"] as? Int)
    }
}

/// A burn test whose report folder is on a disk too small for its trace: the trace stops, and
/// its last records are cut to make room for the summaries, which are written; the outcome stands.
/// A 256 KiB tmpfs in a mount namespace of the test's own (root only).
@Suite(
    .serialized,
    .enabled(
        if: Tools.available && TShark.path != nil && getuid() == 0
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
        "needs umockdev, tshark, root and unshare(1) for a small disk of its own"))
struct FullDiskReportTests {
    @Test func theSummariesAreWrittenWhenTheTraceFilledTheDisk() throws {
        let work = try Workspace()
        defer { work.remove() }
        try FileManager.default.createDirectory(atPath: work.path("small"), withIntermediateDirectories: false)
        let script = """
            mount -t tmpfs -o size=256k none "$1" && "$2" -- "$3" doctor --burn-test --yes --report "$1/r"
            status=$?
            cp -r "$1/r" "$4/copy"
            exit $status
            """
        let run = try ChildProcess.run(
            "/usr/bin/unshare",
            [
                "-m", "/bin/bash", "-c", script, "bash", work.path("small"), Tools.emulator, Tools.ccbeacon,
                work.path(""),
            ],
            in: work.url)
        #expect(run.status == 0, "\(run.errors)")
        let summary = try work.text("copy/summary.txt")
        #expect(summary.contains("trace.pcap stopped after"), "\(summary)")
        #expect(summary.contains("records were cut to make room for the summaries"), "\(summary)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(try work.bytes("copy/summary.json"))) as? [String: Any])
        #expect(json["passed"] as? Bool == true)
        let (records, errors, status) = try TShark.records(work.path("copy/trace.pcap"), in: work.url)
        #expect(status == 0 && !errors.contains("cut short"), "\(errors)")
        #expect(records.count == json["traceRecords"] as? Int)
        #expect(try work.text("copy/descriptors.txt").contains("GET_STATE"))
    }
}

/// `doctor --burn-test` through real libusb, as a user with a new debugger runs it.
@Suite(.serialized, .enabled(if: Tools.available, "needs umockdev and the built executables"))
struct BurnTestThroughLibUSBTests {
    @Test func aStuckBitFailsTheBurnTestNamingItsAddress() throws {
        let work = try Workspace()
        defer { work.remove() }
        let run = try Tools.ccbeacon(
            ["doctor", "--burn-test", "--yes", "--report", work.path("report")],
            options: ["--fault", "corrupt=0x1234:0x01"], in: work.url)
        #expect(run.status == 1)
        #expect(run.errors.contains("the burn test failed: the read-back differs at 0x1234"), "\(run.errors)")
        let summary = try String(contentsOfFile: work.path("report/summary.json"), encoding: .utf8)
        #expect(summary.contains("\"address\": 4660"))
        let (records, errors, status) = try TShark.records(work.path("report/trace.pcap"), in: work.url)
        #expect(status == 0 && !errors.contains("cut short"), "\(errors)")
        #expect(records.count > 2000)
        // The debugger was listed again through the report's trace: its descriptor requests
        // (GET_DESCRIPTOR, for the strings descriptors.txt names) are in it.
        #expect(records.contains { $0.event == "S" && $0.transferType == 2 && $0.request == 6 })
    }

    @Test func aDebuggerThatTakesBurstsOnlyAloneIsTold() throws {
        let work = try Workspace()
        defer { work.remove() }
        let run = try Tools.ccbeacon(
            ["doctor", "--burn-test", "--yes"], options: ["--bursts-alone", "--save-flash", work.path("f.bin")],
            in: work.url)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("framings that work on this debugger: proven (proven is the default)"))
        #expect(try work.bytes("f.bin").allSatisfy { $0 == 0xFF }, "left erased")
    }
}

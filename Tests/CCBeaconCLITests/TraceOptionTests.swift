import CCDebugger
import CCDebuggerEmulator
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// A usbmon pcap read with nothing of ours: the layout of Linux's `struct usbmon_packet`
/// (64 bytes, little-endian here) after pcap's 16-byte record header.
struct PcapReader {
    struct Record {
        var id: UInt64
        var event: Character
        var transferType: UInt8
        var endpoint: UInt8
        var device: UInt8
        var bus: UInt16
        var setupPresent: Bool
        var dataFlag: UInt8
        var status: Int32
        var length: UInt32
        var setup: [UInt8]
        var data: [UInt8]
    }

    var linkType: UInt32
    var records: [Record]

    init(_ bytes: [UInt8]) throws {
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * $1) } }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }
        try #require(bytes.count >= 24)
        try #require(u32(0) == 0xA1B2_C3D4, "little-endian microsecond pcap")
        try #require(u16(4) == 2 && u16(6) == 4)
        linkType = u32(20)
        records = []
        var offset = 24
        while offset < bytes.count {
            try #require(offset + 16 <= bytes.count, "a whole record header")
            let length = Int(u32(offset + 8))
            #expect(u32(offset + 12) == UInt32(length))
            let packet = offset + 16
            try #require(packet + length <= bytes.count, "a whole record")
            try #require(length >= 64)
            records.append(
                Record(
                    id: u64(packet), event: Character(UnicodeScalar(bytes[packet + 8])),
                    transferType: bytes[packet + 9],
                    endpoint: bytes[packet + 10], device: bytes[packet + 11], bus: u16(packet + 12),
                    setupPresent: bytes[packet + 14] == 0, dataFlag: bytes[packet + 15],
                    status: Int32(bitPattern: u32(packet + 28)), length: u32(packet + 32),
                    setup: Array(bytes[(packet + 40)..<(packet + 48)]),
                    data: Array(bytes[(packet + 64)..<(packet + length)]))
            )
            #expect(Int(u32(packet + 36)) == length - 64, "the captured length is the data's")
            offset = packet + length
        }
    }
}

struct TraceOptionTests {
    /// Every command that talks to a debugger takes --trace, and its trace pairs each submission
    /// with its completion and holds exactly the bytes the debugger received and sent.
    @Test(arguments: [
        ["devices"], ["info"], ["erase"], ["read", "--range", "0:0x800", "-o", "dump.bin"], ["flash", "STATION"],
        ["doctor"],
    ])
    func everyDebuggerCommandWritesATraceOfWhatCrossed(arguments: [String]) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let station = try DeviceCommandTests.station(scratch)
        let provider = EmulatorProvider()
        provider.debuggers[0].logging = true
        let trace = scratch.path("trace.pcap")
        let resolved = arguments.map { $0 == "STATION" ? station : $0 == "dump.bin" ? scratch.path($0) : $0 }
        let run = ToolRun(resolved + ["--trace", trace], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        let pcap = try PcapReader(try scratch.bytes("trace.pcap"))
        #expect(pcap.linkType == 220)
        #expect(pcap.records.count % 2 == 0 && !pcap.records.isEmpty)
        for pair in stride(from: 0, to: pcap.records.count, by: 2) {
            let (submission, completion) = (pcap.records[pair], pcap.records[pair + 1])
            #expect(submission.event == "S" && completion.event == "C" && submission.id == completion.id)
            #expect(submission.status == -115 && completion.status == 0)
            #expect((submission.bus, submission.device) == (1, 10))
            #expect(submission.setupPresent == (submission.transferType == 2))
        }
        let log = provider.debuggers[0].log
        let sent = pcap.records.filter { $0.event == "S" && $0.transferType == 3 && $0.endpoint == 0x04 }.map(\.data)
        let received = pcap.records.filter { $0.event == "C" && $0.endpoint == 0x84 }.map(\.data)
        #expect(sent == log.filter { $0.kind == "out" }.map(\.bytes))
        #expect(received == log.filter { $0.kind == "in" }.map(\.bytes))
        // Control transfers: each vendor request with its setup and data.
        let controls = pcap.records.filter { $0.event == "S" && $0.transferType == 2 }
        #expect(controls.count == log.filter { $0.kind.hasPrefix("ctrl") }.count)
        #expect(controls.first?.setup.prefix(2) == [0xC0, 0xC0], "GET_STATE first")
    }

    @Test func provisionWritesATraceToo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("list.csv", "name,uuid,major,minor\nA,\(DeviceCommandTests.uuid),1,1\n")
        let provider = EmulatorProvider()
        let run = ToolRun(
            [
                "provision", scratch.path("list.csv"), "--template", "cc2541-ibeacon", "--ledger",
                scratch.path("l.sqlite"), "--yes", "--trace", scratch.path("p.pcap"),
            ], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        let pcap = try PcapReader(try scratch.bytes("p.pcap"))
        #expect(pcap.records.contains { $0.data.count == 1027 && $0.data.prefix(2) == [0xEE, 0x84] })
    }

    /// The trace never replaces what is not a trace, never writes through a link, and replaces
    /// a trace left by an earlier run; a refusal is a usage error before any debugger is touched.
    @Test func theTraceFileIsNewOrAnEarlierTrace() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = "name,uuid,major,minor\nA,\(DeviceCommandTests.uuid),1,1\n"
        _ = try scratch.write("stations.csv", list)
        let provider = EmulatorProvider()
        provider.debuggers[0].logging = true
        let refused = ToolRun(["info", "--trace", scratch.path("stations.csv")], debuggers: provider)
        #expect(refused.status == 64)
        #expect(refused.diagnostics.contains("does not hold a USB trace"))
        #expect(try scratch.text("stations.csv") == list)
        #expect(provider.debuggers[0].log.isEmpty, "no debugger touched")

        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("link.pcap"), withDestinationPath: scratch.path("stations.csv"))
        let linked = ToolRun(["info", "--trace", scratch.path("link.pcap")], debuggers: provider)
        #expect(linked.status == 64)
        #expect(linked.diagnostics.contains("is not a regular file"))
        #expect(try scratch.text("stations.csv") == list)
        #expect(ToolRun(["info", "--trace", scratch.path("")], debuggers: provider).status == 64)

        let first = ToolRun(["info", "--trace", scratch.path("t.pcap")], debuggers: provider)
        #expect(first.status == 0, "\(first.diagnostics)")
        let firstTrace = try scratch.bytes("t.pcap")
        let again = ToolRun(["devices", "--trace", scratch.path("t.pcap")], debuggers: provider)
        #expect(again.status == 0, "\(again.diagnostics)")
        let second = try scratch.bytes("t.pcap")
        let replaced = try PcapReader(second)
        #expect(second != firstTrace && !replaced.records.isEmpty, "an earlier trace is replaced")

        let missing = ToolRun(["info", "--trace", scratch.path("no/such/folder/t.pcap")], debuggers: provider)
        #expect(missing.status == 64)
        #expect(missing.diagnostics.contains("does not exist"))
    }

    /// A trace this process let go while a child it was starting still had a copy of the
    /// descriptor (posix_spawn's child has one until it execs; another test, a hook) is the next
    /// command's to write once the child is gone: two commands one after the other were refused
    /// as "another ccbeacon is writing the trace". Here the child is forked while the first
    /// command (an erase, which ends by resetting the chip to run) writes the trace, and lives on while the second begins.
    @Test func aTraceLetGoWhileAChildHasItsDescriptorIsTheNextCommands() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let provider = EmulatorProvider()
        let child = Mutex<pid_t>(0)
        provider.debuggers[0].onResetToRun = { _ in
            child.withLock { pid in
                guard pid == 0 else { return }
                pid = fork()
                if pid == 0 {
                    // Only async-signal-safe calls in the child of a threaded process.
                    usleep(300_000)
                    _exit(0)
                }
            }
        }
        let first = ToolRun(["erase", "--trace", scratch.path("t.pcap")], debuggers: provider)
        #expect(first.status == 0, "\(first.diagnostics)")
        let forked = child.withLock { $0 }
        #expect(forked > 0, "the child was started while the trace was open")
        provider.debuggers[0].onResetToRun = nil
        let again = ToolRun(["devices", "--trace", scratch.path("t.pcap")], debuggers: provider)
        #expect(again.status == 0, "\(again.diagnostics)")
        var status: Int32 = 0
        #expect(waitpid(forked, &status, 0) == forked)
        let later = ToolRun(["info", "--trace", scratch.path("t.pcap")], debuggers: provider)
        #expect(later.status == 0, "\(later.diagnostics)")
    }

    /// A trace that cannot be written stops, says so, and changes no outcome.
    @Test func aSinkThatFailsStopsTheTraceOnly() throws {
        let calls = Mutex(0)
        let trace = USBTrace { _ in
            calls.withLock { $0 += 1 }
            return calls.withLock { $0 } > 3 ? "No space left on device" : nil
        }
        let debugger = EmulatedDebugger()
        let session = CC254xSession(
            transport: TracingTransport(debugger, trace: trace, bus: 1, device: 2),
            chips: try BundledData.boards().chips)
        let state = try session.open()
        _ = try session.connect(targetID: state.targetID)
        #expect(trace.failure == "No space left on device")
        // The file header goes out with the first record: three records in three calls.
        #expect(trace.records == 3)
        #expect(calls.withLock { $0 } == 4, "nothing more is tried once it failed")
    }

    /// The record layout, field by field, for each event (usbmon's flags: '-' no setup, '<' IN
    /// data not yet, '>' OUT data already sent).
    @Test func recordsFollowUsbmon() throws {
        let submission = USBTrace.record(
            id: 7, event: .submission, type: .bulk, endpoint: 0x84, bus: 3, device: 9, setup: nil, status: -115,
            length: 4, data: nil, time: (1_700_000_000, 123_456))
        let completion = USBTrace.record(
            id: 7, event: .completion, type: .bulk, endpoint: 0x84, bus: 3, device: 9, setup: nil, status: 0,
            length: 4, data: [1, 2, 3, 4], time: (1_700_000_000, 123_999))
        let control = USBTrace.record(
            id: 8, event: .submission, type: .control, endpoint: 0x00, bus: 3, device: 9,
            setup: USBTrace.vendorSetup(isIn: false, request: 0xC8, value: 1, index: 0, length: 2), status: -115,
            length: 2, data: [0xAA, 0xBB], time: (1_700_000_001, 0))
        let pcap = try PcapReader(USBTrace.fileHeader + submission + completion + control)
        #expect(pcap.records.count == 3)
        let (s, c, k) = (pcap.records[0], pcap.records[1], pcap.records[2])
        #expect(s.id == 7 && s.event == "S" && s.transferType == 3 && s.endpoint == 0x84 && s.bus == 3 && s.device == 9)
        #expect(!s.setupPresent && s.dataFlag == UInt8(ascii: "<") && s.length == 4 && s.data.isEmpty)
        #expect(c.event == "C" && c.dataFlag == 0 && c.data == [1, 2, 3, 4] && c.status == 0)
        #expect(
            k.setupPresent && k.setup == [0x40, 0xC8, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00] && k.data == [0xAA, 0xBB])
        #expect(Array(submission[0..<8]) == [0x00, 0xF1, 0x53, 0x65, 0x40, 0xE2, 0x01, 0x00], "seconds, microseconds")
        #expect(USBTrace.status(for: .pipe) == -32 && USBTrace.status(for: .timeout) == -2)
    }
}

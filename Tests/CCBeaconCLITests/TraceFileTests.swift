import CCDebugger
import CCDebuggerEmulator
import Foundation
import Storage
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// What `--trace FILE` may and may not do to a file: it writes one trace, ccbeacon's own or a
/// new file, by one writer at a time; a command that never reached a debugger leaves the file as
/// it found it.
struct TraceFileTests {
    /// A command that fails before any transfer leaves an earlier trace as it was, and leaves
    /// no file where there was none.
    @Test func aCommandThatNeverReachedADebuggerLeavesTheFileAsItWas() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let provider = EmulatorProvider()
        #expect(ToolRun(["info", "--trace", scratch.path("t.pcap")], debuggers: provider).status == 0)
        let earlier = try scratch.bytes("t.pcap")
        let failed = ToolRun(
            ["flash", scratch.path("missing.hex"), "--trace", scratch.path("t.pcap")], debuggers: provider)
        #expect(failed.status != 0)
        #expect(try scratch.bytes("t.pcap") == earlier)
        let fresh = ToolRun(
            ["flash", scratch.path("missing.hex"), "--trace", scratch.path("new.pcap")], debuggers: provider)
        #expect(fresh.status != 0)
        #expect(!FileManager.default.fileExists(atPath: scratch.path("new.pcap")))
    }

    /// A command that succeeds without a single transfer (no debugger attached) leaves an empty
    /// trace that tools open, not no file.
    @Test func aCommandWithNoTransfersLeavesAnEmptyTrace() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = ToolRun(["devices", "--trace", scratch.path("t.pcap")], debuggers: EmulatorProvider(count: 0))
        #expect(run.status == 0, "\(run.diagnostics)")
        let pcap = try PcapReader(try scratch.bytes("t.pcap"))
        #expect(pcap.linkType == 220 && pcap.records.isEmpty)
    }

    /// A usbmon capture the user made with tcpdump or Wireshark is theirs: never replaced.
    @Test func aCaptureCcbeaconDidNotWriteIsNeverReplaced() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // What tcpdump -i usbmon1 writes: the same magic and link type, none of our mark.
        var theirs: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0] + [UInt8](repeating: 0, count: 8)
        theirs += [0x00, 0x00, 0x04, 0x00, 220, 0, 0, 0]
        theirs += USBTrace.record(
            id: 1, event: .submission, type: .bulk, endpoint: 0x84, bus: 1, device: 2, setup: nil, status: -115,
            length: 4, data: nil, time: (1_700_000_000, 0))
        try Data(theirs).write(to: URL(fileURLWithPath: scratch.path("mine.pcap")))
        let provider = EmulatorProvider()
        provider.debuggers[0].logging = true
        let run = ToolRun(["info", "--trace", scratch.path("mine.pcap")], debuggers: provider)
        #expect(run.status == 64)
        #expect(run.diagnostics.contains("is a capture ccbeacon did not write"), "\(run.diagnostics)")
        #expect(try scratch.bytes("mine.pcap") == theirs)
        #expect(provider.debuggers[0].log.isEmpty, "no debugger touched")
    }

    /// Two writers of one trace would interleave their records: the second is refused before it
    /// touches a debugger, and the first's trace stays whole.
    @Test func aSecondWriterOfOneTraceIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("t.pcap")
        let first = try TraceFile(path: path)
        let debugger = EmulatedDebugger()
        let session = CC254xSession(
            transport: TracingTransport(debugger, trace: first.trace, bus: 1, device: 2),
            chips: try BundledData.boards().chips)
        _ = try session.open()
        let provider = EmulatorProvider()
        provider.debuggers[0].logging = true
        let second = ToolRun(["info", "--trace", path], debuggers: provider)
        #expect(second.status == 1)
        #expect(second.diagnostics.contains("another ccbeacon is writing the trace"), "\(second.diagnostics)")
        #expect(provider.debuggers[0].log.isEmpty, "no debugger touched")
        _ = try session.open()
        first.finish(succeeded: true)
        let pcap = try PcapReader(try scratch.bytes("t.pcap"))
        #expect(pcap.records.count % 2 == 0 && pcap.records.count >= 4, "\(pcap.records.count)")
        #expect(pcap.records.allSatisfy { $0.bus == 1 && $0.device == 2 })
    }

    /// The trace is no other file the command names: an output, a ledger or an input given
    /// twice by mistake is refused before anything is written, and no file is left behind.
    @Test(arguments: [
        ["read", "--range", "0:0x800", "-o", "SAME"],
        ["provision", "LIST", "--template", "cc2541-ibeacon", "--yes", "--ledger", "SAME"],
        ["flash", "HARDLINK"],
    ])
    func theTraceIsNoOtherFileOfTheCommand(arguments: [String]) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("list.csv", "name,uuid,major,minor\nA,\(DeviceCommandTests.uuid),1,1\n")
        // An earlier trace and a hard link to it: one file under two names.
        #expect(ToolRun(["info", "--trace", scratch.path("old.pcap")], debuggers: EmulatorProvider()).status == 0)
        try FileManager.default.linkItem(atPath: scratch.path("old.pcap"), toPath: scratch.path("hard.pcap"))
        let earlier = try scratch.bytes("old.pcap")
        let places = [
            "SAME": scratch.path("same.pcap"), "LIST": scratch.path("list.csv"), "HARDLINK": scratch.path("hard.pcap"),
        ]
        let trace = arguments.contains("HARDLINK") ? scratch.path("old.pcap") : scratch.path("same.pcap")
        let provider = EmulatorProvider()
        provider.debuggers[0].logging = true
        let run = ToolRun(arguments.map { places[$0] ?? $0 } + ["--trace", trace], debuggers: provider)
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("is also an argument of this command"), "\(run.diagnostics)")
        #expect(provider.debuggers[0].log.isEmpty, "no debugger touched")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("same.pcap")))
        #expect(try scratch.bytes("old.pcap") == earlier)
    }

    /// A folder that does not exist is the command line's mistake (64), found before anything
    /// is touched.
    @Test func aTraceInAFolderThatDoesNotExistIsAUsageError() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let provider = EmulatorProvider()
        provider.debuggers[0].logging = true
        let run = ToolRun(["info", "--trace", scratch.path("no/such/t.pcap")], debuggers: provider)
        #expect(run.status == 64)
        #expect(run.diagnostics.contains("--trace"), "\(run.diagnostics)")
        #expect(run.diagnostics.contains("does not exist"), "\(run.diagnostics)")
        #expect(provider.debuggers[0].log.isEmpty)
    }

    /// One trace per run: the burn test's report holds its own, so `--trace` beside `--report`
    /// is refused (two files of one run, each missing what the other has).
    @Test func theBurnTestReportAndTraceAreNotBothGiven() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let provider = EmulatorProvider()
        provider.debuggers[0].logging = true
        let run = ToolRun(
            [
                "doctor", "--burn-test", "--yes", "--report", scratch.path("r"), "--trace",
                scratch.path("r/trace.pcap"),
            ], debuggers: provider)
        #expect(run.status == 64)
        #expect(run.diagnostics.contains("--report DIR holds the trace"), "\(run.diagnostics)")
        #expect(provider.debuggers[0].log.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: scratch.path("r")))
    }

    /// A transfer that moved fewer bytes than asked is traced as usbmon shows it: completed
    /// (status 0) with the length that moved; an overflow is -EOVERFLOW.
    @Test func shortAndOverflowingTransfersAreTracedAsUsbmonShowsThem() throws {
        final class Failing: DebuggerTransport {
            let error: TransportError
            init(error: TransportError) { self.error = error }
            func controlIn(request: UInt8, value: UInt16, index: UInt16, length: Int, timeoutMilliseconds: Int)
                throws(TransportError) -> [UInt8]
            { throw error }
            func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], timeoutMilliseconds: Int)
                throws(TransportError)
            { throw error }
            func bulkOut(_ data: [UInt8], timeoutMilliseconds: Int) throws(TransportError) { throw error }
            func bulkIn(length: Int, timeoutMilliseconds: Int) throws(TransportError) -> [UInt8] { throw error }
        }
        let bytes = Mutex<[UInt8]>([])
        let trace = USBTrace { record in
            bytes.withLock { $0 += record }
            return nil
        }
        let short = TracingTransport(
            Failing(error: .shortTransfer(expected: 3, actual: 1)), trace: trace, bus: 1, device: 2)
        #expect(throws: TransportError.shortTransfer(expected: 3, actual: 1)) {
            try short.bulkIn(length: 3, timeoutMilliseconds: 100)
        }
        let overflow = TracingTransport(
            Failing(error: .libusb(LibUSBErrorCode(rawValue: -8, name: "LIBUSB_ERROR_OVERFLOW"))), trace: trace,
            bus: 1, device: 2)
        #expect(throws: TransportError.self) { try overflow.bulkIn(length: 3, timeoutMilliseconds: 100) }
        let pcap = try PcapReader(bytes.withLock { $0 })
        let completions = pcap.records.filter { $0.event == "C" }
        #expect(completions.map { $0.status } == [0, -75])
        #expect(completions.map { $0.length } == [1, 0])
    }

    /// A trace's name ends in .pcap: so it is never a ledger's journal (SQLite's -wal, -shm,
    /// -journal) or lock, whether nothing is there yet or an earlier trace was moved there — both
    /// refused before anything is touched, and the ledger stays whole.
    @Test(arguments: ["-wal", "-shm", "-journal", "X.lock"])
    func aLedgersJournalIsNeverTheTrace(suffix: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("list.csv", "name,uuid,major,minor\nA,\(DeviceCommandTests.uuid),1,1\n")
        let ledger = scratch.path("l.sqlite")
        let name = suffix == "X.lock" ? scratch.path(".l.sqlite.lock") : ledger + suffix
        func provision(_ list: String) -> ToolRun {
            ToolRun(
                [
                    "provision", scratch.path(list), "--template", "cc2541-ibeacon", "--yes", "--ledger", ledger,
                    "--trace", name,
                ], debuggers: EmulatorProvider())
        }
        let new = provision("list.csv")
        #expect(new.status == 64)
        #expect(new.diagnostics.contains("a trace's name ends in .pcap"), "\(new.diagnostics)")
        // An earlier trace moved to that name.
        #expect(ToolRun(["info", "--trace", scratch.path("t.pcap")], debuggers: EmulatorProvider()).status == 0)
        try FileManager.default.moveItem(atPath: scratch.path("t.pcap"), toPath: name)
        let earlier = provision("list.csv")
        #expect(earlier.status == 64, "\(earlier.diagnostics)")
        #expect(earlier.diagnostics.contains("a trace's name ends in .pcap"), "\(earlier.diagnostics)")
        let check = ToolRun(
            ["provision", scratch.path("list.csv"), "--template", "cc2541-ibeacon", "--yes", "--ledger", ledger],
            debuggers: EmulatorProvider())
        #expect(check.status == 0, "\(check.diagnostics)")
        let audit = ToolRun(["ledger", "check", "--ledger", ledger])
        #expect(audit.status == 0, "\(audit.output)\(audit.diagnostics)")
    }

    /// What another program makes under the trace's name between the check and the first record
    /// is its own: left as it is, the command goes on, a warning says why there is no trace.
    @Test func aFileThatAppearsBeforeTheFirstRecordIsLeftAlone() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("t.pcap")
        let provider = ListingHook(EmulatorProvider()) {
            _ = FileManager.default.createFile(atPath: path, contents: Data("theirs\n".utf8))
        }
        let run = ToolRun(["info", "--trace", path], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(try scratch.text("t.pcap") == "theirs\n")
        #expect(run.diagnostics.contains("warning: the trace \(path) stopped after 0 records: a file appeared"))
    }

    /// Two runs that both found the name free: the first to record makes the file; the second
    /// writes nothing and, ending, removes nothing — the first's trace stays whole.
    @Test func twoRunsOnOneNewNameLeaveTheFirstsTrace() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("t.pcap")
        let first = try TraceFile(path: path)
        let second = try TraceFile(path: path)
        let id = first.trace.submit(.bulk, endpoint: 0x84, bus: 1, device: 2, length: 4)
        first.trace.complete(id, .bulk, endpoint: 0x84, bus: 1, device: 2, status: 0, data: [1, 2, 3, 4], length: 4)
        _ = second.trace.submit(.bulk, endpoint: 0x84, bus: 1, device: 3, length: 4)
        #expect(second.trace.failure?.contains("a file appeared") == true)
        second.finish(succeeded: false)
        first.finish(succeeded: true)
        let pcap = try PcapReader(try scratch.bytes("t.pcap"))
        #expect(pcap.records.count == 2 && pcap.records.allSatisfy { $0.device == 2 })
    }

    /// An empty .pcap holds nothing to lose (a trace whose first write failed, `touch t.pcap`):
    /// taken. Where this command's output goes (`> t.pcap` makes it empty) is refused.
    @Test func anEmptyPcapIsTakenUnlessItIsTheOutput() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("empty.pcap", "")
        let run = ToolRun(["info", "--trace", scratch.path("empty.pcap")], debuggers: EmulatorProvider())
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(try !PcapReader(try scratch.bytes("empty.pcap")).records.isEmpty)
        _ = try scratch.write("empty.csv", "")
        let named = ToolRun(["info", "--trace", scratch.path("empty.csv")], debuggers: EmulatorProvider())
        #expect(named.status == 64)
        #expect(named.diagnostics.contains("a trace's name ends in .pcap"))
    }
}

/// A provider that runs `beforeListing` each time the debuggers are listed.
final class ListingHook: DebuggerProvider, Sendable {
    let inner: EmulatorProvider
    let beforeListing: @Sendable () -> Void

    init(_ inner: EmulatorProvider, beforeListing: @escaping @Sendable () -> Void) {
        self.inner = inner
        self.beforeListing = beforeListing
    }

    func devices() throws(DebuggerError) -> [DebuggerDevice] {
        beforeListing()
        return try inner.devices()
    }

    func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport { try inner.open(device) }
}

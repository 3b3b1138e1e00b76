import CCDebugger
import CCDebuggerEmulator
import Foundation
import Storage
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// `doctor --burn-test`: the first burn on a new bench, against the emulated debuggers.
struct BurnTestTests {
    /// The two patterns: every byte below the lock bits, none of the lock bits, no 1 KiB block
    /// left out (none all 0xFF), the second the complement of the first (every bit written as 0
    /// once), and no two 1 KiB blocks alike (a write into the wrong page or bank reads back wrong).
    @Test func thePatternsCoverEveryPageAndEveryBit() throws {
        let chip = try BundledData.chip("CC2541F256")
        let first = BurnTest.image(for: chip, pass: 0)
        let second = BurnTest.image(for: chip, pass: 1)
        #expect(first.segments.count == 1 && first.segments[0].range == 0..<chip.lockBits!.lowerBound)
        #expect(try FlashPlan(image: first, chip: chip, allowLastPage: true).blocks.count == chip.flashSize / 1024)
        #expect(zip(first.segments[0].bytes, second.segments[0].bytes).allSatisfy { $0 == ~$1 })
        let blocks = stride(from: 0, to: chip.flashSize - 1024, by: 1024).map {
            first.bytes(in: $0..<($0 + 1024), fill: 0xFF)
        }
        #expect(Set(blocks).count == blocks.count)
    }

    @Test func bothFramingsWorkOnTheEmulatorAndTheChipIsLeftErased() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let provider = EmulatorProvider()
        let report = scratch.path("report")
        let run = ToolRun(["doctor", "--burn-test", "--yes", "--report", report], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("proven framing: works (erased, written, every byte read back, CRC verified;"))
        #expect(run.output.contains("packed framing: works"))
        #expect(run.output.contains("IEEE address 00:12:4B:00:25:41"))
        #expect(run.output.contains("firmware 0x5CC rev 0x44"))
        #expect(run.output.contains("framings that work on this debugger: proven, packed (proven is the default)"))
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF }, "left erased")
        #expect(try Files.list(report).sorted() == ["descriptors.txt", "summary.json", "summary.txt", "trace.pcap"])
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(try scratch.bytes("report/summary.json"))) as? [String: Any])
        #expect(summary["passed"] as? Bool == true && summary["leftErased"] as? Bool == true)
        let passes = try #require(summary["passes"] as? [[String: Any]])
        #expect(passes.map { $0["framing"] as? String } == ["proven", "packed"])
        #expect(passes.allSatisfy { $0["works"] as? Bool == true && $0["bytesWritten"] as? Int == 0x40000 - 16 })
        let debugger = try #require(summary["debugger"] as? [String: Any])
        #expect(debugger["firmwareRevision"] as? Int == 0x44 && debugger["serial"] as? String == "EMU001")
        let pcap = try PcapReader(try scratch.bytes("report/trace.pcap"))
        #expect(pcap.records.count == summary["traceRecords"] as? Int)
        // Every block written twice: the bursts alone (proven), then packed with a few frames.
        let outs = pcap.records.filter { $0.event == "S" && $0.endpoint == 0x04 }.map(\.data)
        #expect(outs.filter { $0.count == 1027 && $0.prefix(3) == [0xEE, 0x84, 0x00] }.count == 256)
        #expect(outs.filter { (1028...1200).contains($0.count) }.count == 256)
        let shown = run.output.split(separator: "\n").drop { !$0.hasPrefix("burn test on") }.dropLast()
        #expect(try scratch.text("report/summary.txt") == shown.joined(separator: "\n") + "\n")
        #expect(
            try scratch.text("report/descriptors.txt").contains(
                "GET_STATE: target 0x2541, firmware 0x5CC, revision 0x44"))

        // Again into the same folder: an earlier report is replaced.
        let again = ToolRun(["doctor", "--burn-test", "--yes", "--report", report], debuggers: provider)
        #expect(again.status == 0, "\(again.diagnostics)")
    }

    /// On a chip without a factory address the line says none (it printed an empty one), and on a
    /// CC2430, whose flash is not checked by CRC, the test says it read back rather than "CRC
    /// verified".
    @Test(arguments: [("CC2510F32", true), ("CC2430F32", false)])
    func whatTheTestCheckedIsWhatItSays(part: String, usesCRC: Bool) throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named(part)!)
        let run = ToolRun(["doctor", "--burn-test", "--yes", "--flash-size", "32"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("IEEE address none, secondary address none"), "\(run.output)")
        #expect(
            run.output.contains(
                "proven framing: works (erased, written, every byte read back\(usesCRC ? ", CRC verified" : ""); "),
            "\(run.output)")
        #expect(
            run.output.contains("the chip is left erased (checked by \(usesCRC ? "CRC" : "reading it back"))"),
            "\(run.output)")
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF }, "left erased")
    }

    /// `--flash-size` is checked as every command that connects checks it: a size the family does
    /// not come in, or one a reporting chip contradicts, is refused before the chip is erased.
    @Test(arguments: [
        ("CC2510F16", "64", "--flash-size 64 KiB: the CC2510 comes in 8, 16 or 32 KiB"),
        ("CC2541F256", "128", "--flash-size 128 KiB: the CC2541F256 reports 256 KiB"),
    ])
    func aFlashSizeTheChipRefutesIsRefusedBeforeTheErase(part: String, size: String, message: String) throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named(part)!)
        provider.debuggers[0].chip!.flash[0x100] = 0x5A
        let run = ToolRun(["doctor", "--burn-test", "--yes", "--flash-size", size], debuggers: provider)
        #expect(run.status == 64, "\(run.output)\(run.diagnostics)")
        #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash[0x100] == 0x5A, "not erased")
    }

    /// A locked chip tells its size only once erased: a size of its family that it then
    /// contradicts stops the test, saying the chip was erased (exit 1, not a usage error).
    @Test func aLockedChipThatContradictsTheSizeIsSaidToBeErased() throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.flash[0x100] = 0x5A
        provider.debuggers[0].chip!.setDebugLockBit()
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = ToolRun(
            ["doctor", "--burn-test", "--yes", "--flash-size", "128", "--report", scratch.path("r")],
            debuggers: provider
        )
        #expect(run.status == 1, "\(run.output)\(run.diagnostics)")
        let summary = try scratch.text("r/summary.txt")
        #expect(
            summary.contains(
                "the burn test stopped after erasing the chip (it was debug-locked): a flash size of 128 KiB was given, but the CC2541F256 reports 256 KiB"
            ), "\(summary)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(try scratch.bytes("r/summary.json"))) as? [String: Any])
        #expect(json["passed"] as? Bool == false && json["erased"] as? Bool == true, "\(json)")
        #expect(
            run.diagnostics.contains(
                "--flash-size 128 KiB: the CC2541F256 reports 256 KiB\nhint: the chip's flash may be erased or partly written; "
            ), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("usage:"))
    }

    /// A chip of a known family reporting a size code no chip of the data has is said to be that,
    /// not "a CC2541, not a CC2541".
    @Test func aPartTheDataLacksIsNamedAsSuch() throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.flashSizeCode = 6
        let run = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "the target (ID 0x2541, CHIPINFO0.FLASHSIZE 6) is none of the chips of boards/chips.json\nhint: ccbeacon programs the parts of boards/chips.json"
            ), "\(run.diagnostics)")
    }

    /// A debugger that takes a burst only alone: the packed framing stalls, the default works,
    /// the test says so, leaves the chip erased (on a fresh session) and passes.
    @Test func aFirmwareThatTakesBurstsOnlyAloneIsFoundOut() throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].takesBurstsOnlyAlone = true
        let run = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("proven framing: works"))
        #expect(
            run.output.contains(
                "packed framing: FAILED while writing: the debugger stalled the transfer while programming the 1 KiB at 0x0; after "
            ))
        #expect(
            run.output.contains("this debugger takes a burst only alone in its transfer: keep the default (proven)"))
        #expect(run.output.contains("framings that work on this debugger: proven (proven is the default)"))
        #expect(run.output.contains("the chip is left erased (checked by CRC)"))
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF })
    }

    /// A bit stuck at 0: the read-back names the first differing address, exit 1; the erase at
    /// the end cannot clear it either, and says so.
    @Test func aStuckBitFailsNamingItsAddress() throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.stuckAtZero[0x1234] = 0x01
        let run = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(run.status == 1)
        #expect(run.output.contains("READ-BACK DIFFERS at 0x1234 (wrote 0xA7, read 0xA6)"))
        #expect(
            run.diagnostics.contains(
                "the burn test failed: the read-back differs at 0x1234 (wrote 0xA7, read 0xA6) with the packed framing")
        )
        #expect(run.output.contains("the chip could NOT be left erased"))
    }

    /// A locked chip is erased (which unlocks it) and tested.
    @Test func aLockedChipIsErasedAndTested() throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.setDebugLockBit()
        let run = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("chip: CC2541F256"))
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF })
    }

    /// A debugger lost after the burn test erased a locked chip: the flash is said to be changed,
    /// once, and the advice is to try again — not to run 'ccbeacon flash', which a burn test has no
    /// image for (it said so for a while, and once said the flash was changed twice).
    @Test(arguments: [16, 18, 20, 24])
    func aDebuggerLostAfterTheEraseSaysTryAgain(unplugAfter: Int) throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.setDebugLockBit()
        provider.debuggers[0].faults.unplugAfterTransfers = unplugAfter
        let run = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(run.status == 1)
        #expect(
            run.diagnostics.contains(
                "hint: the chip's flash may be erased or partly written; replug the debugger, press its reset button and try again"
            ), "\(unplugAfter): \(run.diagnostics)")
        #expect(!run.diagnostics.contains("ccbeacon flash"), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("left partly written"), "\(run.diagnostics)")
    }

    /// Nothing is erased unasked, no report folder holding anything else is written into, and the
    /// burn test's options are refused without it — each before any debugger is touched.
    @Test(arguments: [
        (["--burn-test"], "with no terminal to ask on, confirm with --yes"),
        (["--yes"], "--yes is for --burn-test"),
        (["--report", "REPORT"], "--report is for --burn-test"),
        (["--device", "1:10"], "--device is for --burn-test"),
        (["--burn-test", "--yes", "--json"], "--json is not for --burn-test"),
        (["--burn-test", "--yes", "--report", "FOREIGN"], "holds other files ('stations.csv')"),
        (["--burn-test", "--yes", "--report", "FILE"], "is not a folder (a file or a link)"),
        (["--burn-test", "--yes", "--report", "LINK"], "is not a folder (a file or a link)"),
        (["--burn-test", "--yes", "--report", "SLASHEDLINK"], "is not a folder (a file or a link)"),
        (["--burn-test", "--yes", "--report", "DOTTEDLINK"], "is not a folder (a file or a link)"),
        (["--ledger", ""], "--ledger needs a file or a postgresql:// URL"),
        (
            ["--burn-test", "--yes", "--report", "FOREIGNTRACE"],
            "FOREIGNTRACE/trace.pcap is a capture ccbeacon did not write"
        ),
        (["--burn-test", "--yes", "--report", "NOPARENT"], "is not a folder this user may write"),
        (["--burn-test", "--yes", "--report", "LINKEDTRACE"], "--report LINKEDTRACE/trace.pcap is a link"),
        (["--burn-test", "--yes", "--report", "FOLDERSUMMARY"], "--report FOLDERSUMMARY/summary.txt is a folder"),
        // A station list named like a report file is no report: it was replaced.
        (["--burn-test", "--yes", "--report", "LISTSUMMARY"], "--report LISTSUMMARY/summary.txt is a station list"),
    ])
    func refusedBeforeAnythingIsTouched(arguments: [String], message: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("foreign"), withIntermediateDirectories: false)
        _ = try scratch.write("foreign/stations.csv", "name\n")
        _ = try scratch.write("file", "keep\n")
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("link"), withDestinationPath: scratch.path("foreign"))
        // An earlier report whose trace.pcap is now a link to the list, and one whose
        // summary.txt is a folder.
        try FileManager.default.createDirectory(atPath: scratch.path("linkedtrace"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("linkedtrace/trace.pcap"), withDestinationPath: scratch.path("foreign/stations.csv"))
        try FileManager.default.createDirectory(
            atPath: scratch.path("foldersummary/summary.txt"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch.path("listsummary"), withIntermediateDirectories: false)
        _ = try scratch.write(
            "listsummary/summary.txt", "name,uuid,major,minor\nA,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\n")
        // An earlier report whose trace.pcap is a tcpdump capture (pcap, no ccbeacon mark).
        try FileManager.default.createDirectory(
            atPath: scratch.path("foreigntrace"), withIntermediateDirectories: false)
        let capture: [UInt8] =
            [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0] + [UInt8](repeating: 0, count: 8) + [0, 0, 4, 0, 220, 0, 0, 0]
        try Data(capture).write(to: URL(fileURLWithPath: scratch.path("foreigntrace/trace.pcap")))
        let places = [
            "REPORT": scratch.path("r"), "FOREIGN": scratch.path("foreign"), "FILE": scratch.path("file"),
            "LINK": scratch.path("link"), "NOPARENT": scratch.path("no/such/report"),
            "LINKEDTRACE": scratch.path("linkedtrace"), "FOLDERSUMMARY": scratch.path("foldersummary"),
            "SLASHEDLINK": scratch.path("link") + "/", "DOTTEDLINK": scratch.path("link") + "/./.",
            "FOREIGNTRACE": scratch.path("foreigntrace"), "LISTSUMMARY": scratch.path("listsummary"),
        ]
        let provider = EmulatorProvider()
        provider.debuggers[0].logging = true
        let flash = provider.debuggers[0].chip!.flash
        let run = ToolRun(["doctor"] + arguments.map { places[$0] ?? $0 }, debuggers: provider)
        #expect(run.status == 64, "\(run.diagnostics)")
        let expected = arguments.reduce(message) { $0.replacingOccurrences(of: $1, with: places[$1] ?? $1) }
        #expect(run.diagnostics.contains(expected), "\(run.diagnostics)")
        #expect(provider.debuggers[0].log.isEmpty, "no debugger touched")
        #expect(provider.debuggers[0].chip!.flash == flash)
        #expect(try scratch.text("foreign/stations.csv") == "name\n" && scratch.text("file") == "keep\n")
    }

    /// A report folder an earlier, killed burn test left half-written (a temporary file of a
    /// dead writer) is taken: the leftover goes, the report is written.
    @Test func aKilledReportsLeftoversAreCleared() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("r"), withIntermediateDirectories: false)
        // A process ID that runs no process: the writer is dead.
        let leftover = Files.temporaryName(for: "summary.txt", inFolder: scratch.path("r"), process: 999_999_999)
        _ = try scratch.write("r/" + leftover, "half")
        let run = ToolRun(
            ["doctor", "--burn-test", "--yes", "--report", scratch.path("r")], debuggers: EmulatorProvider())
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            try Files.list(scratch.path("r")).sorted() == [
                "descriptors.txt", "summary.json", "summary.txt", "trace.pcap",
            ])
    }

    /// The report folder is pinned once the test may begin: a folder swapped for a link while
    /// the test runs (or while it asks) is never written through; the report lands in the folder
    /// that was checked.
    @Test func aReportFolderSwappedForALinkIsNotWrittenThrough() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("victim"), withIntermediateDirectories: false)
        _ = try scratch.write("victim/summary.txt", "someone else's\n")
        let report = scratch.path("r")
        let swapped = Mutex(false)
        let provider = HookedProvider(EmulatorProvider()) { data in
            // At the first burst: the test has begun.
            guard data.count >= 1027 else { return }
            swapped.withLock { done in
                guard !done else { return }
                done = true
                try? FileManager.default.moveItem(atPath: report, toPath: scratch.path("moved"))
                try? FileManager.default.createSymbolicLink(atPath: report, withDestinationPath: scratch.path("victim"))
            }
        }
        let run = ToolRun(["doctor", "--burn-test", "--yes", "--report", report], debuggers: provider)
        #expect(swapped.withLock { $0 })
        #expect(try scratch.text("victim/summary.txt") == "someone else's\n")
        #expect(try Files.list(scratch.path("victim")) == ["summary.txt"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            try Files.list(scratch.path("moved")).sorted() == [
                "descriptors.txt", "summary.json", "summary.txt", "trace.pcap",
            ])
    }

    /// Two burn tests never write one report folder: the second, finding it held, stops before
    /// its test begins (the chip untouched).
    @Test func aSecondBurnTestIntoOneFolderIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("r"), withIntermediateDirectories: false)
        let first = try PinnedDirectory(scratch.path("r"))
        #expect(first.lockExclusively())
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.flash[0x100] = 0x42
        let run = ToolRun(["doctor", "--burn-test", "--yes", "--report", scratch.path("r")], debuggers: provider)
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("another burn test is writing its report into"), "\(run.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash[0x100] == 0x42, "not erased")
        #expect(try Files.list(scratch.path("r")).isEmpty)
    }

    /// A report folder this process let go while a child it was starting still had a copy of the
    /// descriptor is the next burn test's once the child is gone (`ExclusiveLock`); one this
    /// process still holds stays refused.
    @Test func aReportFolderLetGoWhileAChildHasItsDescriptorIsTakenOnceTheChildIsGone() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("r"), withIntermediateDirectories: false)
        var first: PinnedDirectory? = try PinnedDirectory(scratch.path("r"))
        #expect(first?.lockExclusively() == true)
        let child = fork()
        if child == 0 {
            // Only async-signal-safe calls in the child of a threaded process.
            usleep(300_000)
            _exit(0)
        }
        #expect(child > 0)
        first = nil
        let second = try PinnedDirectory(scratch.path("r"))
        #expect(second.lockExclusively(), "taken once the child is gone")
        var status: Int32 = 0
        #expect(waitpid(child, &status, 0) == child)
        #expect(try !PinnedDirectory(scratch.path("r")).lockExclusively(), "still held by this process")
        _ = second
    }

    /// A folder that changes after its check (here: a foreign file made while the debuggers are
    /// listed) is refused when it is pinned — a failure (1), not the command line's fault, and
    /// before the test begins.
    @Test func aReportFolderThatChangedSinceItsCheckIsAFailure() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("r"), withIntermediateDirectories: false)
        let foreign = scratch.path("r/foreign.txt")
        let inner = EmulatorProvider()
        inner.debuggers[0].chip!.flash[0x100] = 0x42
        let provider = ListingHook(inner) { _ = FileManager.default.createFile(atPath: foreign, contents: Data()) }
        let run = ToolRun(["doctor", "--burn-test", "--yes", "--report", scratch.path("r")], debuggers: provider)
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("the report folder changed since it was checked"), "\(run.diagnostics)")
        #expect(inner.debuggers[0].chip!.flash[0x100] == 0x42, "not erased")
    }

    /// An earlier report's summaries go before the test begins: a run killed mid-test leaves its
    /// own trace, never beside another run's "works".
    @Test func anEarlierReportsSummariesGoBeforeTheTestBegins() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let report = scratch.path("r")
        #expect(
            ToolRun(["doctor", "--burn-test", "--yes", "--report", report], debuggers: EmulatorProvider()).status == 0)
        let seen = Mutex<[String]?>(nil)
        let provider = HookedProvider(EmulatorProvider()) { data in
            guard data.count >= 1027 else { return }
            seen.withLock { if $0 == nil { $0 = (try? Files.list(report)) ?? [] } }
        }
        #expect(ToolRun(["doctor", "--burn-test", "--yes", "--report", report], debuggers: provider).status == 0)
        #expect(seen.withLock { $0 } == ["trace.pcap"])
    }

    /// A test that cannot begin (no target) still leaves its report: what was found, the error,
    /// the descriptors and the trace of the attempt.
    @Test func aTestThatCannotBeginStillWritesItsReport() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = nil
        let run = ToolRun(["doctor", "--burn-test", "--yes", "--report", scratch.path("r")], debuggers: provider)
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("press the debugger's reset button"), "\(run.diagnostics)")
        #expect(
            try Files.list(scratch.path("r")).sorted() == [
                "descriptors.txt", "summary.json", "summary.txt", "trace.pcap",
            ])
        let text = try scratch.text("r/summary.txt")
        #expect(text.contains("the burn test could not begin: the debugger sees no target chip"), "\(text)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(try scratch.bytes("r/summary.json"))) as? [String: Any])
        #expect(summary["passed"] as? Bool == false)
        #expect((summary["error"] as? String)?.contains("sees no target") == true)
        #expect(try scratch.text("r/descriptors.txt").contains("GET_STATE: target 0x0"))
        #expect(try !PcapReader(try scratch.bytes("r/trace.pcap")).records.isEmpty)
    }

    /// A debugger lost during the packed pass is a failure, not a finding about framings: only a
    /// stall or a timeout says the firmware refuses the packed layout.
    @Test func aDebuggerLostDuringThePackedPassFailsTheTest() throws {
        // Unplugged at the first transfer longer than a burst alone once the proven pass wrote
        // its 256 blocks: the packed pass's first block.
        let bursts = Mutex(0)
        let provider = HookedProvider(EmulatorProvider()) { data throws(TransportError) in
            if data.count == 1027, data.prefix(2) == [0xEE, 0x84] { bursts.withLock { $0 += 1 } }
            let packedBurst =
                data.count > 1027 && data.indices.dropLast(2).contains { data[$0...].starts(with: [0xEE, 0x84, 0x00]) }
            if packedBurst, bursts.withLock({ $0 }) >= 256 { throw .noDevice }
        }
        let run = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("packed framing: FAILED while writing: the debugger is gone"), "\(run.output)")
        #expect(run.diagnostics.contains("the burn test failed: writing with the packed framing: the debugger is gone"))
        #expect(!run.output.contains("takes a burst only alone"))
    }

    /// A read-back that differs in one pass says nothing about that pass's framing: it is
    /// undecided, not "does not work".
    @Test func aFlashFaultIsNotBlamedOnAFraming() throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.stuckAtZero[0x1234] = 0x01
        let run = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(run.status == 1)
        #expect(
            run.output.contains(
                "framings that work on this debugger: proven (proven is the default); undecided: packed (its read-back differed: a flash fault as likely as the framing)"
            ), "\(run.output)")
    }

    /// A locked chip hides its secondary address until the erase clears it: unknown, not none.
    @Test func aLockedChipsSecondaryAddressIsUnknown() throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.setDebugLockBit()
        let run = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("secondary address unknown (the chip was locked; its erase cleared the page)"))
    }

    /// A firmware revision no report has mentioned is noted in the summary the user sends.
    @Test func anUnseenFirmwareRevisionIsNotedInTheSummary() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let provider = EmulatorProvider()
        provider.debuggers[0].firmware = (0x05CC, 0x0051)
        let run = ToolRun(["doctor", "--burn-test", "--yes", "--report", scratch.path("r")], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            try scratch.text("r/summary.txt").contains("firmware revision 0x51 has not been seen with open clients"))
    }

    @Test func noTargetOrSeveralDebuggersSayWhatToDo() throws {
        let empty = EmulatorProvider()
        empty.debuggers[0].chip = nil
        let none = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: empty)
        #expect(none.status == 1)
        #expect(none.diagnostics.contains("press the debugger's reset button"))
        let two = EmulatorProvider(count: 2)
        let ambiguous = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: two)
        #expect(ambiguous.status == 1)
        #expect(ambiguous.diagnostics.contains("choose one with --device"))
        #expect(two.debuggers.allSatisfy { $0.chip!.flash.allSatisfy { $0 == 0xFF } })
        let chosen = ToolRun(["doctor", "--burn-test", "--yes", "--device", "1:11"], debuggers: two)
        #expect(chosen.status == 0, "\(chosen.diagnostics)")
        #expect(chosen.output.contains("burn test on debugger 1:11"))
    }
}

/// A stall while programming with `--usb-framing packed` says what to do: the default framing.
struct PackedStallHintTests {
    @Test func flashSuggestsTheProvenFraming() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try DeviceCommandTests.station(scratch)
        let provider = EmulatorProvider()
        provider.debuggers[0].takesBurstsOnlyAlone = true
        let packed = ToolRun(["flash", image, "--usb-framing", "packed"], debuggers: provider)
        #expect(packed.status == 1)
        #expect(packed.diagnostics.contains("the debugger stalled a packed burst"), "\(packed.diagnostics)")
        #expect(packed.diagnostics.contains("run again without --usb-framing packed"))
        let proven = ToolRun(["flash", image], debuggers: provider)
        #expect(proven.status == 0, "\(proven.diagnostics)")
    }
}

extension PackedStallHintTests {
    /// provision says it too, on the failed burn's line.
    @Test func provisionSuggestsTheProvenFraming() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("list.csv", "name,uuid,major,minor\nA,\(DeviceCommandTests.uuid),1,1\n")
        let provider = EmulatorProvider()
        provider.debuggers[0].takesBurstsOnlyAlone = true
        let run = ToolRun(
            [
                "provision", scratch.path("list.csv"), "--template", "cc2541-ibeacon", "--ledger",
                scratch.path("l.sqlite"), "--yes", "--usb-framing", "packed", "--retries", "0",
            ], debuggers: provider)
        #expect(run.status != 0)
        #expect(run.diagnostics.contains("hint: the debugger stalled a packed burst"), "\(run.diagnostics)")
    }
}

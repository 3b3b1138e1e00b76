import CCDebugger
import Foundation
import PostgresLedger
import StationLedger
import Storage
import Synchronization
import TestSupport
import Testing

/// A held station is released only where its outcome cannot wait in a journal: by a run of the
/// bench that was burning it, keeping its journal where that run kept it (same machine, same
/// list folder) or finding no file there, or told with --journal-lost that the journal is gone.
extension PostgresProvisionTests {
    /// The double burn the third review confirmed: bench j's run was burning s1 when its server
    /// went away; it kept the outcome (verified) in its journal beside its list and stopped. The
    /// same bench run from a copy of the list in another folder, or on another machine under the
    /// same name, used to release s1 and burn it on a second chip. Both keep s1 held and say where
    /// the journal is; the bench run from its own list records the journal.
    @Test func aBenchElsewhereDoesNotReleaseWhatItsJournalHolds() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, 3)
        let outage = try Self.journaledRun(list, Self.bench(first: 0xD0)).outage
        let journal = OutcomeJournal.journalPath(bench: "bench-j", listPath: list)
        try FileManager.default.createDirectory(atPath: scratch.path("copy"), withIntermediateDirectories: false)
        let copy = scratch.path("copy/list.csv")
        try FileManager.default.copyItem(atPath: list, toPath: copy)
        let kept =
            "kept 's1' held: this bench's run that was burning it on chip 00:12:4B:00:D0:00 kept its journal at '\(journal)' on host \(RunIdentity.current.host), not where this run keeps it, and its outcome may wait there; run bench 'bench-j' there (with the list in '\(Files.directory(of: journal))'), with --release-interrupted — or, once that journal is lost for good (its machine gone), add --journal-lost\n"
        // From the copy: s1 kept, s2 and s3 burned.
        let fromCopy = Self.provision(
            copy, outage.url, bench: "bench-j", ["--release-interrupted"], debuggers: Self.bench(first: 0xD4))
        #expect(fromCopy.status == 3, "\(fromCopy.diagnostics)")
        #expect(fromCopy.diagnostics.contains(kept), "\(fromCopy.diagnostics)")
        // On another machine under the same name, its list at the same path: the journal is not
        // there (moved aside here, as that machine's disk would not hold it).
        let aside = scratch.path("journal-on-the-first-machine")
        try FileManager.default.moveItem(atPath: journal, toPath: aside)
        let otherMachine = Self.provision(
            list, outage.url, bench: "bench-j", ["--release-interrupted"], debuggers: Self.bench(first: 0xD8),
            machineID: "another-machine")
        #expect(otherMachine.status == 3, "\(otherMachine.diagnostics)")
        #expect(otherMachine.diagnostics.contains(kept), "\(otherMachine.diagnostics)")
        try FileManager.default.moveItem(atPath: aside, toPath: journal)
        let verified = try PostgresLedger(url: outage.url, bench: "").attempts().filter { $0.outcome == .verified }
        #expect(verified.map(\.station).sorted() == ["s2", "s3"], "\(verified)")
        // The bench on its own machine, from its own list: the journal recorded, nothing released.
        let own = Self.provision(
            list, outage.url, bench: "bench-j", ["--release-interrupted"], debuggers: Self.bench(first: 0xDC))
        try Self.expectJournalRecorded(own, outage.url, chip: "00:12:4B:00:D0:00", stations: 3)
    }
}

/// Where the run that was burning s1 kept its journal, and what a release by bench s finds.
struct JournalReleaseCase: Sendable, CustomTestStringConvertible {
    /// Where that run's journal is: beside the list, or in another folder.
    var elsewhere: Bool
    /// Whether that run was on another machine.
    var otherMachine: Bool
    /// Whether a file is at that journal's path.
    var fileThere: Bool
    /// The releasing run's bench, and --journal-lost.
    var releasingBench = "bench-s"
    var journalLost = false
    /// Whether s1 is released.
    var released: Bool

    var testDescription: String {
        "journal \(elsewhere ? "elsewhere" : "beside the list")\(otherMachine ? " on another machine" : "")\(fileThere ? ", a file there" : ""), released by \(releasingBench)\(journalLost ? " --journal-lost" : "")"
    }

    static let all = [
        JournalReleaseCase(elsewhere: false, otherMachine: false, fileThere: false, released: true),
        JournalReleaseCase(elsewhere: true, otherMachine: false, fileThere: false, released: true),
        JournalReleaseCase(elsewhere: true, otherMachine: false, fileThere: true, released: false),
        JournalReleaseCase(elsewhere: true, otherMachine: false, fileThere: true, journalLost: true, released: true),
        JournalReleaseCase(elsewhere: false, otherMachine: true, fileThere: false, released: false),
        JournalReleaseCase(elsewhere: true, otherMachine: true, fileThere: false, journalLost: true, released: true),
        JournalReleaseCase(
            elsewhere: false, otherMachine: false, fileThere: false, releasingBench: "bench-t", released: false),
        JournalReleaseCase(
            elsewhere: false, otherMachine: false, fileThere: false, releasingBench: "bench-t", journalLost: true,
            released: false),
    ]
}

extension PostgresProvisionTests {
    /// The release rule, case by case: bench s's run was burning s1 (its process gone) and had
    /// recorded where its journal is; a run with --release-interrupted releases s1 only where no
    /// outcome can wait in that journal unseen. Another bench never releases it, --journal-lost
    /// or not, and is told where the journal is.
    @Test(arguments: JournalReleaseCase.all)
    func aStationIsReleasedOnlyWhereItsJournalIsSeen(_ given: JournalReleaseCase) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("other"), withIntermediateDirectories: false)
        let list = scratch.path("list.csv")
        let journal = OutcomeJournal.journalPath(bench: "bench-s", listPath: list)
        let recorded =
            given.elsewhere ? Files.join(Files.directory(of: journal), "other/ccbeacon-journal-bench-s.jsonl") : journal
        var identity = RunIdentity.goneProcess
        identity.journal = recorded
        if given.otherMachine { identity.machineID = "another-machine" }
        let (_, url, s) = try Self.burning(in: scratch, bench: "bench-s", chip: "00:12:4B:00:5E:00", identity: identity)
        if given.fileThere { _ = try scratch.write("other/ccbeacon-journal-bench-s.jsonl", "") }
        let run = Self.provision(
            list, url, bench: given.releasingBench,
            ["--release-interrupted"] + (given.journalLost ? ["--journal-lost"] : []),
            debuggers: Self.bench(first: 0x7E))
        let host = RunIdentity.current.host
        if given.released {
            #expect(run.status == 0, "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains("released 's1' (was interrupted on chip 00:12:4B:00:5E:00)"),
                "\(run.diagnostics)")
        } else if given.releasingBench == "bench-s" {
            #expect(run.status == 3, "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains(
                    "kept 's1' held: this bench's run that was burning it on chip 00:12:4B:00:5E:00 kept its journal at '\(recorded)' on host \(host), not where this run keeps it"
                ), "\(run.diagnostics)")
        } else {
            #expect(run.status == 3, "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains(
                    "kept 's1' held: bench 'bench-s' was burning it on chip 00:12:4B:00:5E:00 and may keep its outcome in its journal ('\(recorded)' on host \(host)); run bench 'bench-s' again"
                ), "\(run.diagnostics)")
        }
        let s1 = try s.attempts().filter { $0.station == "s1" }.map(\.outcome)
        #expect(s1 == (given.released ? [.failed, .verified] : [.interrupted]), "\(s1)")
    }
}

/// `--journal-lost` is refused where it means nothing (no server needed).
struct JournalLostUsageTests {
    /// --journal-lost says a pool bench's journal is lost: alone, or for a file ledger, it is a
    /// usage error.
    @Test(arguments: [
        (["--journal-lost"], "postgresql://u@h/db"), (["--journal-lost", "--release-interrupted"], "led.sqlite"),
    ])
    func journalLostAppliesToAPoolsRelease(_ extra: [String], _ ledger: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try PostgresProvisionTests.list(scratch, 1)
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", ledger, "--bench", "b"] + extra)
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(
            run.diagnostics.hasPrefix(
                "ccbeacon provision: --journal-lost applies to --release-interrupted on a shared ledger (--ledger postgresql://…)"
            ), "\(run.diagnostics)")
    }
}

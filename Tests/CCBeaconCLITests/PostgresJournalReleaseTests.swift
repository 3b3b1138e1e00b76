import CCDebugger
import Foundation
import HexText
import PostgresLedger
import StationLedger
import Storage
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A held station is released only once no outcome of it can wait in a journal unseen: by a run
/// of the bench that was burning it that found the burning run's token beside its own journal and
/// recorded that journal (the run is settled), or told with --journal-lost that the journal is
/// gone (and no file is at its path here).
extension PostgresProvisionTests {
    /// Bench j run from `list` with --release-interrupted, its chips from `next` on: it records
    /// the journal that holds s1 verified on chip `burned` first, and finishes the list.
    static func recordsItsJournal(_ list: String, _ url: String, burned: UInt8, next: UInt8) -> ToolRun {
        let own = Self.provision(
            list, url, bench: "bench-j", ["--release-interrupted"], debuggers: Self.bench(first: next))
        #expect(own.status == 0, "\(own.diagnostics)")
        let chip = "00:12:4B:00:\(HexText.byte(burned)):00"
        #expect(
            own.diagnostics.contains("recorded from the journal: 's1' on chip \(chip): verified"), "\(own.diagnostics)")
        return own
    }

    /// A list of `count` stations in the folder `bench` of `scratch`.
    static func listInAFolder(_ scratch: Scratch, _ count: Int) throws -> String {
        try FileManager.default.createDirectory(atPath: scratch.path("bench"), withIntermediateDirectories: false)
        return try Self.list(scratch, count, name: "bench/list.csv")
    }

    /// The double burn the third review confirmed, and the ways the first fix still let it through
    /// (the sixth review): bench j's run was burning s1 when its server went away; it kept the
    /// outcome (verified) in its journal beside its list and stopped. The same bench run from a
    /// copy of the list in another folder, on another machine with the list at the same path (a
    /// cloned card included), from a third folder after the first was renamed, or after the
    /// folder's stick was taken out, used to release s1 and burn it on a second chip; so did a
    /// copy of the folder made while the bench ran (the second review), hard-linked or not (the
    /// final review). Each keeps s1
    /// held and says where the journal is; the bench run from the folder records the journal.
    @Test func aBenchElsewhereDoesNotReleaseWhatItsJournalHolds() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.listInAFolder(scratch, 4)
        let outage = try Self.journaledRun(list, Self.bench(first: 0xD0)).outage
        let journal = OutcomeJournal(path: OutcomeJournal.journalPath(bench: "bench-j", listPath: list))
        #expect(Files.exists(journal.path) && journal.placeToken() != nil)
        let kept =
            "kept 's1' held: this bench's run that was burning it on chip 00:12:4B:00:D0:00 kept its journal at '\(journal.path)' on host \(RunIdentity.current.host), "
        let elsewhere = { (listPath: String, first: UInt8, samePath: Bool) -> Void in
            let run = Self.provision(
                listPath, outage.url, bench: "bench-j", ["--release-interrupted"], debuggers: Self.bench(first: first))
            #expect(run.status == 3, "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains(
                    kept
                        + (samePath
                            ? "where this run keeps its own, but not the token it left beside it in ccbeacon-journal-bench-j.place: this is not the folder that run started in (a copy of it, a folder made at its path after it was renamed or mounted over, another machine with the list at the same path), or that file was damaged or replaced, or the journal could not be written; run bench 'bench-j' from the folder that run started in, wherever it is now, on that machine (it records the journal first), with --release-interrupted — --journal-lost only once that folder and its journal are known to be lost\n"
                            : "which this run has not recorded (another folder, or another machine); run bench 'bench-j' with the list in '\(Files.directory(of: journal.path))' on that machine (it records that journal first), with --release-interrupted — or, once that journal is gone for good (its machine or folder lost) or recorded (the folder moved to another file system or restored from a copy, and run from there), add --journal-lost\n")
                ), "\(run.diagnostics)")
        }
        // A copy of the list in another folder.
        try FileManager.default.createDirectory(atPath: scratch.path("copy"), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: list, toPath: scratch.path("copy/list.csv"))
        elsewhere(scratch.path("copy/list.csv"), 0xD4, false)
        // A copy of the folder made while the bench ran, before it journaled: the list and the
        // token, in a file of its own (the second review: it was taken for the folder).
        try FileManager.default.createDirectory(atPath: scratch.path("snapshot"), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: list, toPath: scratch.path("snapshot/list.csv"))
        try FileManager.default.copyItem(
            atPath: journal.placePath, toPath: scratch.path("snapshot/ccbeacon-journal-bench-j.place"))
        elsewhere(scratch.path("snapshot/list.csv"), 0xD6, false)
        // Another machine, its list at the same path: neither the journal nor the token there
        // (a card cloned before the run: an older token, or none).
        let away = scratch.path("first-machine")
        try FileManager.default.moveItem(atPath: scratch.path("bench"), toPath: away)
        try FileManager.default.createDirectory(atPath: scratch.path("bench"), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: away + "/list.csv", toPath: list)
        elsewhere(list, 0xD8, true)
        // The first folder back under another name, the bench run from a third: still held.
        try FileManager.default.removeItem(atPath: scratch.path("bench"))
        let renamed = scratch.path("renamed")
        try FileManager.default.moveItem(atPath: away, toPath: renamed)
        try FileManager.default.createDirectory(atPath: scratch.path("third"), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: renamed + "/list.csv", toPath: scratch.path("third/list.csv"))
        elsewhere(scratch.path("third/list.csv"), 0xDA, false)
        // A hard-linked copy of the folder (cp -al), its token file the very same, while the
        // folder itself is renamed away (the final review: taken for the renamed folder).
        try FileManager.default.createDirectory(atPath: scratch.path("linked"), withIntermediateDirectories: false)
        for name in ["list.csv", "ccbeacon-journal-bench-j.place"] {
            try FileManager.default.linkItem(atPath: renamed + "/" + name, toPath: scratch.path("linked/" + name))
        }
        elsewhere(scratch.path("linked/list.csv"), 0xDB, false)
        var verified = try PostgresLedger(url: outage.url, bench: "").attempts().filter { $0.outcome == .verified }
        #expect(!verified.contains { $0.station == "s1" }, "\(verified)")
        // The folder itself, wherever it is now: its journal recorded, nothing released.
        let own = Self.recordsItsJournal(renamed + "/list.csv", outage.url, burned: 0xD0, next: 0xDC)
        #expect(!own.diagnostics.contains("released"), "\(own.diagnostics)")
        verified = try PostgresLedger(url: outage.url, bench: "").attempts().filter { $0.outcome == .verified }
        #expect(verified.map(\.station).sorted() == ["s1", "s2", "s3", "s4"])
        #expect(verified.first { $0.station == "s1" }?.chip == "00:12:4B:00:D0:00")
    }
}

extension PostgresProvisionTests {
    /// The server away and the journal's folder gone (deleted mid-run): the outcome is recorded
    /// nowhere, and the bench names the chip that carries it (the second review: it said only
    /// that the journal could not be opened).
    @Test func anOutcomeNeitherRecordedNorJournaledNamesItsChip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.listInAFolder(scratch, 2)
        let run = try Self.cutOff(list, Self.bench(first: 0xC0)) {
            try? FileManager.default.removeItem(atPath: Files.directory(of: list))
        }.run
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "the outcome (verified) is recorded nowhere; chip 00:12:4B:00:C0:00 carries 's1': set it aside and attach it to a bench later"
            ), "\(run.diagnostics)")
    }

    /// What stood at the journal's name when the outcome was to be journaled.
    enum JournalObstacle: String, CaseIterable, Sendable { case folder, fifo, danglingLink }

    /// The journal's name taken mid-run (the ninth review): the outcome was recorded nowhere and
    /// the run named its chip, but its token stayed, so the next run from the folder settled it
    /// and a plain --release-interrupted burned s1 on a second chip (and a FIFO there hung the run
    /// for good). The token goes with the journal that could not be written: s1 stays held.
    @Test(arguments: JournalObstacle.allCases)
    func aJournalThatCannotBeWrittenLeavesItsStationHeld(_ obstacle: JournalObstacle) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.listInAFolder(scratch, 2)
        let journal = OutcomeJournal.journalPath(bench: "bench-j", listPath: list)
        let (outage, run) = try Self.cutOff(list, Self.bench(first: 0xA0)) {
            switch obstacle {
            case .folder: try? FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: false)
            case .fifo: mkfifo(journal, 0o644)
            case .danglingLink:
                try? FileManager.default.createSymbolicLink(atPath: journal, withDestinationPath: "gone")
            }
        }
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "the outcome (verified) is recorded nowhere; chip 00:12:4B:00:A0:00 carries 's1': set it aside and attach it to a bench later (its flash is checked and recorded), or erase it ('s1' stays held until then, or until --release-interrupted --journal-lost)"
            ), "\(run.diagnostics)")
        unlink(journal)
        rmdir(journal)
        let again = Self.provision(
            list, outage.url, bench: "bench-j", ["--release-interrupted"], debuggers: Self.bench(first: 0xA4))
        #expect(again.status == 3 && again.diagnostics.contains("kept 's1' held: "), "\(again.diagnostics)")
        let attempts = try PostgresLedger(url: outage.url, bench: "").attempts()
        #expect(attempts.filter { $0.station == "s1" }.map(\.chip) == ["00:12:4B:00:A0:00"], "\(attempts)")
    }

    /// Sets or clears the immutable attribute of `folder` (`chattr`): no name in it can then be
    /// made, removed or renamed, but its files can still be written. False where the file system
    /// or the process cannot.
    @discardableResult
    static func immutable(_ folder: String, _ on: Bool) -> Bool {
        let run = try? ChildProcess.run(
            "/usr/bin/chattr", [on ? "+i" : "-i", folder], in: URL(fileURLWithPath: "/"), timeout: 10)
        return run?.status == 0
    }

    /// Whether this machine can make a folder immutable (root, a file system with the attribute).
    static let immutableFolders: Bool = {
        let folder = NSTemporaryDirectory() + "immutable-\(UUID().uuidString)"
        guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)) != nil
        else { return false }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard immutable(folder, true) else { return false }
        return immutable(folder, false)
    }()

    /// The folder made immutable mid-run (the tenth review; a file system gone read-only, or a
    /// folder whose write permission was taken away, do the same): the journal could not be
    /// written, nor the token removed, and the run said s1 stays held while its token settled it
    /// for the next run, which burned s1 on a second chip. The token is emptied where it cannot be
    /// removed.
    @Test(.enabled(if: immutableFolders, "needs chattr +i (root, a file system with the attribute)"))
    func aFolderThatTakesNoNewNameStillLosesTheRunsToken() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.listInAFolder(scratch, 2)
        let folder = Files.directory(of: list)
        defer { Self.immutable(folder, false) }
        let (outage, run) = try Self.cutOff(list, Self.bench(first: 0x98)) { Self.immutable(folder, true) }
        Self.immutable(folder, false)
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "chip 00:12:4B:00:98:00 carries 's1': set it aside and attach it to a bench later (its flash is checked and recorded), or erase it ('s1' stays held until then, or until --release-interrupted --journal-lost)"
            ), "\(run.diagnostics)")
        let again = Self.provision(
            list, outage.url, bench: "bench-j", ["--release-interrupted"], debuggers: Self.bench(first: 0x9C))
        #expect(again.status == 3 && again.diagnostics.contains("kept 's1' held: "), "\(again.diagnostics)")
        let attempts = try PostgresLedger(url: outage.url, bench: "").attempts()
        #expect(attempts.filter { $0.station == "s1" }.map(\.chip) == ["00:12:4B:00:98:00"], "\(attempts)")
    }

    /// What became of bench j's folder while its server was away, before the outcome was journaled.
    enum FolderMidRun: String, CaseIterable, Sendable {
        /// Renamed, and a copy of it (the list and the token) left at its path.
        case renamedWithACopyLeft
        /// Taken away with an empty folder left at its path (a stick pulled, its mount point
        /// bare), then put back.
        case takenAwayThenPutBack
    }

    /// The eighth review's double burns: the journal was written by its path — into the copy, or
    /// the bare mount point — apart from the token that settles its run, so a run from the folder
    /// holding the token released s1 and burned it on a second chip. A run keeps its journal in
    /// the folder it left its token in, wherever that folder is now: the message names it there,
    /// the copy keeps s1 held, and the folder's own run records the journal.
    @Test(arguments: FolderMidRun.allCases)
    func aFolderMovedWhileTheServerIsAwayKeepsTheJournalWithItsToken(_ change: FolderMidRun) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.listInAFolder(scratch, 3)
        let folder = Files.directory(of: list)
        let original = scratch.path("original")
        let (outage, run) = try Self.cutOff(list, Self.bench(first: 0xB0)) {
            try? FileManager.default.moveItem(atPath: folder, toPath: original)
            switch change {
            case .renamedWithACopyLeft: try? FileManager.default.copyItem(atPath: original, toPath: folder)
            case .takenAwayThenPutBack:
                try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            }
        }
        let name = "ccbeacon-journal-bench-j.jsonl"
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains("1 outcome(s) are kept in the journal \(original)/\(name)\n"), "\(run.diagnostics)"
        )
        #expect(Files.exists(original + "/" + name) && !Files.exists(folder + "/" + name))
        switch change {
        case .renamedWithACopyLeft:
            let copy = Self.provision(
                list, outage.url, bench: "bench-j", ["--release-interrupted"], debuggers: Self.bench(first: 0xB4))
            #expect(copy.status == 3 && copy.diagnostics.contains("kept 's1' held: "), "\(copy.diagnostics)")
        case .takenAwayThenPutBack:
            try FileManager.default.removeItem(atPath: folder)
            try FileManager.default.moveItem(atPath: original, toPath: folder)
        }
        let home = change == .renamedWithACopyLeft ? original : folder
        _ = Self.recordsItsJournal(home + "/list.csv", outage.url, burned: 0xB0, next: 0xB8)
        let attempts = try PostgresLedger(url: outage.url, bench: "").attempts()
        #expect(attempts.filter { $0.station == "s1" }.map(\.chip) == ["00:12:4B:00:B0:00"], "\(attempts)")
        #expect(attempts.filter { $0.outcome == .verified }.map(\.station).sorted() == ["s1", "s2", "s3"])
    }

    /// A bench that cannot leave its place token (a folder in its place) stops before it burns,
    /// and says what to move (the second review: the hint said the journal was kept, after it
    /// had been recorded).
    @Test func aPlaceTokenThatCannotBeLeftStopsTheBenchFirst() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, 2)
        let url = try PostgresTestServer.freshDatabase()
        let place = OutcomeJournal(path: OutcomeJournal.journalPath(bench: "bench-p", listPath: list)).placePath
        try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: false)
        let run = Self.provision(list, url, bench: "bench-p", debuggers: Self.bench(first: 0x90))
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "hint: the bench keeps its place token in '\(place)': move away what is there, then run again; nothing was burned"
            ), "\(run.diagnostics)")
        #expect(try PostgresLedger(url: url, bench: "").attempts().isEmpty)
    }
}

/// Where the run that was burning s1 kept its journal, and what a release by a bench finds.
struct JournalReleaseCase: Sendable, CustomTestStringConvertible {
    /// The token beside the releasing bench's journal: the burning run's (in the file it left it
    /// in, in a copy, through a symbolic link to that file, or a hard link of it), another, or none.
    enum Token: Sendable { case burningRuns, changedSince, copied, linked, hardLinked, another, none }
    var token: Token
    /// Whether a file is at the burning run's journal path (in another folder).
    var fileThere = false
    /// Whether the burning run recorded a journal place at all (not: an earlier ccbeacon's run).
    var recorded = true
    /// The releasing run's bench, and --journal-lost.
    var releasingBench = "bench-s"
    var journalLost = false
    /// Whether s1 is released.
    var released: Bool

    var testDescription: String {
        "\(token) token\(fileThere ? ", a file at its journal" : "")\(recorded ? "" : ", no place recorded"), by \(releasingBench)\(journalLost ? " --journal-lost" : "")"
    }

    static let all = [
        JournalReleaseCase(token: .burningRuns, released: true),
        JournalReleaseCase(token: .changedSince, released: false),
        JournalReleaseCase(token: .copied, released: false),
        JournalReleaseCase(token: .linked, released: false),
        JournalReleaseCase(token: .hardLinked, fileThere: true, released: false),
        JournalReleaseCase(token: .hardLinked, released: false),
        JournalReleaseCase(token: .another, released: false),
        JournalReleaseCase(token: .none, released: false),
        JournalReleaseCase(token: .none, recorded: false, released: true),
        JournalReleaseCase(token: .none, journalLost: true, released: true),
        JournalReleaseCase(token: .another, fileThere: true, journalLost: true, released: false),
        JournalReleaseCase(token: .burningRuns, releasingBench: "bench-t", released: false),
        JournalReleaseCase(token: .none, releasingBench: "bench-t", journalLost: true, released: false),
    ]
}

extension PostgresProvisionTests {
    /// Changes the inode change time of `path`, its inode kept (chmod, again until the clock
    /// the file system stamps with — as coarse as a kernel tick — has moved; at most a second).
    static func changeInodeTime(of path: String) -> Bool {
        var before = stat()
        guard lstat(path, &before) == 0 else { return false }
        for round in 0..<1000 {
            _ = chmod(path, round % 2 == 0 ? 0o600 : 0o644)
            var now = stat()
            if lstat(path, &now) == 0, now.st_ino == before.st_ino,
                now.st_ctim.tv_sec != before.st_ctim.tv_sec || now.st_ctim.tv_nsec != before.st_ctim.tv_nsec
            {
                return true
            }
            usleep(1_000)  // the file system's clock moves by ticks: wait for the next one
        }
        return false
    }

    /// The release rule, case by case: bench s's run was burning s1 (its process gone), its
    /// journal recorded in the folder `other`; a run from the list's folder with
    /// --release-interrupted releases s1 only where no outcome can wait in that journal unseen.
    /// Another bench never releases it, --journal-lost or not, and is told where the journal is.
    @Test(arguments: JournalReleaseCase.all)
    func aStationIsReleasedOnlyOnceItsRunIsSettled(_ given: JournalReleaseCase) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("other"), withIntermediateDirectories: false)
        let token = RunIdentity.randomHex()
        let recorded = OutcomeJournal.journalPath(bench: "bench-s", listPath: scratch.path("other/list.csv"))
        var identity = RunIdentity.goneProcess
        if given.recorded { identity.journal = (recorded, token) }
        let (list, url, s) = try Self.burning(
            in: scratch, bench: "bench-s", chip: "00:12:4B:00:5E:00", identity: identity)
        let own = OutcomeJournal(path: OutcomeJournal.journalPath(bench: given.releasingBench, listPath: list))
        switch given.token {
        case .burningRuns: try s.recordPlace(try own.leavePlaceToken(token))
        case .changedSince:
            // Its file changed since (its inode number the same): what a folder deleted and
            // restored from a backup looks like when the file system reuses the numbers (the
            // final review's double burn on ext4).
            try s.recordPlace(try own.leavePlaceToken(token))
            #expect(Self.changeInodeTime(of: own.placePath), "the change time never moved")
        case .copied, .linked, .hardLinked:
            let elsewhere = OutcomeJournal(path: recorded)
            try s.recordPlace(try elsewhere.leavePlaceToken(token))
            try? FileManager.default.removeItem(atPath: own.placePath)
            switch given.token {
            case .linked:
                try FileManager.default.createSymbolicLink(
                    atPath: own.placePath, withDestinationPath: elsewhere.placePath)
            case .hardLinked: try FileManager.default.linkItem(atPath: elsewhere.placePath, toPath: own.placePath)
            default: _ = try own.leavePlaceToken(token)
            }
        case .another: _ = try own.leavePlaceToken(RunIdentity.randomHex())
        case .none: try? FileManager.default.removeItem(atPath: own.placePath)
        }
        if given.fileThere { _ = try scratch.write("other/ccbeacon-journal-bench-s.jsonl", "") }
        let run = Self.provision(
            list, url, bench: given.releasingBench,
            ["--release-interrupted"] + (given.journalLost ? ["--journal-lost"] : []),
            debuggers: Self.bench(first: 0x7E))
        let place = "kept its journal at '\(recorded)' on host \(RunIdentity.current.host), "
        if given.released {
            #expect(run.status == 0, "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains("released 's1' (was interrupted on chip 00:12:4B:00:5E:00)"),
                "\(run.diagnostics)")
        } else if given.releasingBench == "bench-s" {
            #expect(run.status == 3, "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains(
                    "kept 's1' held: this bench's run that was burning it on chip 00:12:4B:00:5E:00 \(place)"
                        + (given.fileThere && given.journalLost
                            ? "and a file is there on this machine, which may be that journal"
                            : "which this run has not recorded")), "\(run.diagnostics)")
        } else {
            #expect(run.status == 3, "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains(
                    "kept 's1' held: bench 'bench-s' was burning it on chip 00:12:4B:00:5E:00 and may keep its outcome in its journal ('\(recorded)' on host \(RunIdentity.current.host)); run bench 'bench-s' again"
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

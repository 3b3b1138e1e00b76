import BeaconPayload
import CCDebuggerEmulator
import Foundation
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit
@testable import Provisioning
@testable import StationLedger

/// One provision run per ledger: a second run would take the first one's burns in progress for
/// a crash's (and with --release-interrupted give their stations to other chips).
struct OneRunPerLedgerTests {
    @Test func aSecondProvisionOnTheSameLedgerIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let ledger = scratch.path("provisioning.sqlite")
        let held = try FolderLock.acquire(scratch.url.path, name: ".provisioning.sqlite.lock", wait: false)
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--release-interrupted"],
            debuggers: EmulatorProvider())
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains("another provision (process \(getpid())) is using the ledger \(ledger)"),
            "\(run.diagnostics)")
        #expect(!Files.exists(ledger), "nothing was written")
        held.release()
        // Alone it runs — and ends as soon as its one station is done, without waiting the
        // default ten minutes for a chip nothing is left for.
        let alone = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes"], debuggers: EmulatorProvider())
        #expect(alone.status == 0, "\(alone.diagnostics)")
    }

    /// --release-interrupted lets a held station go to a new chip and names the chip that may
    /// still carry its identity, with what to do when it turns up.
    @Test func aReleasedStationNamesItsChip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        do {
            // A run whose process is gone left its burn in progress.
            let crashed = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), identity: .goneProcess)
            try crashed.register([Station(name: "a", identity: IBeaconFixture.identity(1))])
            _ = try crashed.claimNextStation(
                chip: "00:12:4B:00:00:77", debugger: "EMU001", template: "t", templateSHA256: "x",
                verifyMethod: "crc", skipping: [], image: { _ in ("i", nil) })
        }
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--release-interrupted", "--wait", "0.2"],
            debuggers: EmulatorProvider(count: 0))
        #expect(
            run.diagnostics.contains(
                "released 'a' (was interrupted on chip 00:12:4B:00:00:77); chip 00:12:4B:00:00:77 may still carry its identity: erase it (ccbeacon erase) or set it aside"
            ), "\(run.diagnostics)")
        let states = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), access: .readOnly).states()
        guard case .pending = states.first?.state else {
            Issue.record("the released station is pending: \(states)")
            return
        }
    }

    /// `ledger migrate` copies a ledger only with every burn settled (the fifth review): a burn in
    /// progress or held may have its outcome in a bench's journal, which is recorded only onto
    /// the ledger it was written for, and a file copy would release it at once. Refused (exit 1,
    /// the burn named, nothing copied); once released, copied.
    @Test func aLedgerWithABurnNotSettledIsNotMigrated() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let path = scratch.path("provisioning.sqlite")
        do {
            let crashed = try SQLiteLedger(path: path, bench: "bench-s", identity: .goneProcess)
            try crashed.register([Station(name: "a", identity: IBeaconFixture.identity(1))])
            _ = try crashed.claimNextStation(
                chip: "00:12:4B:00:00:77", debugger: "EMU001", template: "t", templateSHA256: "x",
                verifyMethod: "crc", skipping: [], image: { _ in ("i", nil) })
        }
        let target = scratch.path("copy.sqlite")
        let refused = ToolRun(["ledger", "migrate", "--from", path, "--to", target])
        #expect(refused.status == 1, "\(refused.diagnostics)")
        #expect(
            refused.diagnostics.contains(
                "has 1 burn not settled (in progress or held): 'a' on chip 00:12:4B:00:00:77 (bench 'bench-s'); a copy would carry them open"
            ), "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains("hint: settle them first"))
        #expect(!Files.exists(target))
        let released = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--release-interrupted", "--wait", "0.1"],
            debuggers: EmulatorProvider(count: 0))
        #expect(released.diagnostics.contains("released 'a'"), "\(released.diagnostics)")
        let copied = ToolRun(["ledger", "migrate", "--from", path, "--to", target])
        #expect(copied.status == 0, "\(copied.diagnostics)")
    }

    /// The lock sits beside the ledger's real path: a run through a symbolic link to the ledger,
    /// or through a symlinked folder, meets the same lock (it used to take one of its own, release
    /// the first run's burn in progress and burn that identity into a second chip).
    @Test func aRunThroughAnotherNameOfTheLedgerIsRefusedToo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        try FileManager.default.createDirectory(atPath: scratch.path("real"), withIntermediateDirectories: false)
        let real = scratch.path("real/T.sqlite")
        try LedgerFiles.sound(real)
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link.sqlite"), withDestinationPath: real)
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("alias"), withDestinationPath: scratch.path("real"))
        let before = try Files.read(real)
        let realFolder = SQLiteLedger.realPath(scratch.path("real"))
        let held = try FolderLock.acquire(realFolder, name: ".T.sqlite.lock", wait: false)
        defer { held.release() }
        for name in ["link.sqlite", "alias/T.sqlite", "real/../real/T.sqlite"] {
            let run = ToolRun(
                [
                    "provision", list, "--template", "cc2541-ibeacon", "--yes", "--release-interrupted", "--ledger",
                    scratch.path(name),
                ],
                debuggers: EmulatorProvider())
            #expect(run.status == 1, "\(name): \(run.diagnostics)")
            #expect(run.diagnostics.contains("another provision (process \(getpid()))"), "\(name): \(run.diagnostics)")
        }
        #expect(try Files.read(real) == before)
        // A ledger that does not exist yet, named through the symlinked folder: the same lock.
        let newHeld = try FolderLock.acquire(realFolder, name: ".New.sqlite.lock", wait: false)
        defer { newHeld.release() }
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", scratch.path("alias/New.sqlite")],
            debuggers: EmulatorProvider())
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(!Files.exists(scratch.path("real/New.sqlite")))
    }
}

/// SQLite keeps a ledger's journal (-wal, -shm) beside the name it was opened by. A second name
/// for the same file would miss what is only in the journal — and, written through, fork the
/// history: a crashed run's records vanished and stations were burned again.
struct LedgerNameTests {
    /// `--ledger --yes` forgot the ledger's name: taking `--yes` for it made a new ledger named
    /// `--yes` and burned stations the real ledger has as done a second time (found by a review).
    /// A value that is one of the command's own options is refused before anything happens.
    @Test func anOptionIsNeverTakenForAMissingValue() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        for arguments in [
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", "--yes"],
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", "--jsno", "--yes"],
            ["ledger", "export", "-o", "--format", "json"], ["ledger", "show", "--ledger", "--json"],
        ] {
            let run = ToolRun(arguments, debuggers: EmulatorProvider())
            #expect(run.status == 64, "\(arguments): \(run.diagnostics)")
            #expect(run.diagnostics.contains("option; to give that text as the value, write"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("")) == ["list.csv"])
        for name in ["--yes", "--format", "--jsno"] { #expect(!FileManager.default.fileExists(atPath: name)) }
    }

    /// A run killed inside the ledger's creation — after the new ledger was linked into place,
    /// before its temporary name was removed — leaves the ledger with a second name of ccbeacon's
    /// own making. The next runs take it for the leftover it is (provision removes it; the
    /// read-only commands leave it and read the ledger) instead of refusing the ledger for good.
    /// Found by the kill test, which killed a bench in that window.
    @Test func aCreationKilledBeforeItsTemporaryNameWentLeavesAUsableLedger() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("provisioning.sqlite")
        do { _ = try SQLiteLedger(path: path) }
        let leftover = path + ".ccbeacon-creating-4242-1x2y3z"
        try FileManager.default.linkItem(atPath: path, toPath: leftover)
        for arguments in [["ledger", "show"], ["ledger", "export"], ["ledger", "check"]] {
            let run = ToolRun(arguments + ["--ledger", path])
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
            #expect(Files.exists(leftover), "a read-only command removed a name")
        }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        let provision = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", path])
        #expect(provision.status != 65, "\(provision.diagnostics)")
        #expect(!Files.exists(leftover))
        #expect(ToolRun(["ledger", "show", "--ledger", path]).output.contains("x "))
        // Second names that are not exactly ccbeacon's are someone's: refused, and counted whole.
        for (index, name) in [
            ".ccbeacon-creating-1-AB", ".new-1-ab", ".ccbeacon-creating-1-ab-c", ".ccbeacon-creating-١-ab",
        ]
        .enumerated() {
            try FileManager.default.linkItem(atPath: path, toPath: path + name)
            let run = ToolRun(["ledger", "show", "--ledger", path])
            #expect(
                run.status == 65 && run.diagnostics.contains("has \(index + 2) names"), "\(name): \(run.diagnostics)")
        }
    }

    /// The leftover is removed only from a ledger that passed every check: a refused ledger and its
    /// folder stay as they were (found by a review: the leftover went before a foreign journal
    /// refused the ledger). A temporary ledger that a creation killed before its link left is
    /// removed once its process is gone, with its journals; a live process's is left alone.
    @Test func leftoversGoOnlyWithAnAcceptedLedgerAndOnlyWhenTheirProcessIsGone() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("provisioning.sqlite")
        do { _ = try SQLiteLedger(path: path) }
        let leftover = path + ".ccbeacon-creating-4242-abc"
        try FileManager.default.linkItem(atPath: path, toPath: leftover)
        try FileManager.default.createSymbolicLink(atPath: path + "-journal", withDestinationPath: scratch.path("x"))
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        let refused = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", path])
        #expect(refused.status == 65, "\(refused.diagnostics)")
        #expect(Files.exists(leftover), "a refused ledger's folder was changed")
        try FileManager.default.removeItem(atPath: path + "-journal")

        // A dead process's separate temporary ledger (pid 0x7FFFFFF0 runs nowhere) and a live one's.
        let abandoned = path + ".ccbeacon-creating-2147483632-zz"
        let inProgress = path + ".ccbeacon-creating-\(getpid())-zz"
        for name in [abandoned, inProgress, abandoned + "-journal", abandoned + "-wal"] {
            _ = try scratch.write(Files.lastComponent(name), "")
        }
        let accepted = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", path])
        #expect(accepted.status != 65, "\(accepted.diagnostics)")
        #expect(!Files.exists(leftover) && !Files.exists(abandoned), "a killed creation's files stay")
        #expect(!Files.exists(abandoned + "-journal") && !Files.exists(abandoned + "-wal"))
        #expect(Files.exists(inProgress), "a creation in progress was removed")
    }

    /// A folder given as the ledger is "not a regular file", not a file with several names (a
    /// folder's link count counts its subfolders).
    @Test func aFolderGivenAsTheLedgerIsNamedForWhatItIs() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("p1/sub"), withIntermediateDirectories: true)
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        let run = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", scratch.path("p1")])
        #expect(run.status == 65 && run.diagnostics.contains("not a regular file"), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("names"))
    }

    @Test func aSymlinkIsFollowedAndASecondHardLinkIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("provisioning.sqlite")
        // A writer that has not checkpointed: its last records are only in the -wal file.
        let open = try SQLiteLedger(path: path)
        try open.register([Station(name: "only-in-the-wal", identity: IBeaconFixture.identity(7))])
        #expect(Files.exists(path + "-wal"))
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link.sqlite"), withDestinationPath: path)
        let show = ToolRun(["ledger", "show", "--ledger", scratch.path("link.sqlite")])
        #expect(show.status == 0 && show.output.contains("only-in-the-wal"), "\(show.output)\(show.diagnostics)")
        let wal = try Files.read(path + "-wal")
        let export = ToolRun(["ledger", "export", "--ledger", scratch.path("link.sqlite"), "-o", path + "-wal"])
        #expect(
            export.status == 64 && export.diagnostics.contains("would overwrite the ledger"), "\(export.diagnostics)")
        #expect(try Files.read(path + "-wal") == wal)

        try FileManager.default.linkItem(atPath: path, toPath: scratch.path("hard.sqlite"))
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        for arguments in [
            ["ledger", "show"], ["ledger", "export"], ["ledger", "check"],
            ["provision", list, "--template", "cc2541-ibeacon", "--yes"],
        ] {
            for name in ["hard.sqlite", "provisioning.sqlite"] {
                let run = ToolRun(arguments + ["--ledger", scratch.path(name)])
                #expect(run.status == 65, "\(arguments) \(name): \(run.output)\(run.diagnostics)")
                #expect(run.diagnostics.contains("has 2 names (hard links)"), "\(run.diagnostics)")
            }
        }
        #expect(try Files.read(path + "-wal") == wal)
    }

    /// What SQLite takes for a ledger's journal must be that journal: it writes a -wal file from
    /// its start and maps the -shm file into memory, so a journal name that leads to another
    /// ledger (a link, a second name, a copy) would have SQLite overwrite that ledger's first
    /// pages. Every such ledger is refused before anything is opened for writing.
    @Test(arguments: ["symlink-wal", "symlink-shm", "hardlink-wal", "copy-wal", "folder-shm"])
    func aJournalNameThatLeadsToAnotherFileIsRefused(kind: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("provisioning.sqlite")
        let other = scratch.path("other.sqlite")
        try LedgerFiles.sound(path)
        try LedgerFiles.sound(other)
        let otherBytes = try Files.read(other)
        let suffix = kind.hasSuffix("wal") ? "-wal" : "-shm"
        switch kind {
        case "symlink-wal", "symlink-shm":
            try FileManager.default.createSymbolicLink(atPath: path + suffix, withDestinationPath: other)
        case "hardlink-wal": try FileManager.default.linkItem(atPath: other, toPath: path + suffix)
        case "copy-wal": try FileManager.default.copyItem(atPath: other, toPath: path + suffix)
        default: try FileManager.default.createDirectory(atPath: path + suffix, withIntermediateDirectories: false)
        }
        let ledgerBytes = try Files.read(path)
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),3,3\n")
        for arguments in [
            ["provision", list, "--template", "cc2541-ibeacon", "--yes"],
            ["ledger", "show"], ["ledger", "export"], ["ledger", "check"],
        ] {
            let run = ToolRun(arguments + ["--ledger", path], debuggers: EmulatorProvider())
            #expect(run.status == 65, "\(kind) \(arguments): \(run.output)\(run.diagnostics)")
            #expect(run.diagnostics.contains("provisioning.sqlite\(suffix)"), "\(run.diagnostics)")
            #expect(try Files.read(other) == otherBytes, "\(kind) \(arguments): the other ledger was written")
            #expect(try Files.read(path) == ledgerBytes, "\(kind) \(arguments): the ledger was written")
        }
        // No ledger yet: none is created beside such a journal name (it would be refused and left).
        let fresh = scratch.path("fresh.sqlite")
        try FileManager.default.createSymbolicLink(atPath: fresh + "-wal", withDestinationPath: other)
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", fresh],
            debuggers: EmulatorProvider())
        #expect(run.status == 65, "\(run.diagnostics)")
        #expect(!Files.exists(fresh), "a refused ledger was created")
        #expect(try Files.read(other) == otherBytes)
    }
}

/// `ledger show`, `export` and `check` as another user (nobody) on a ledger they may only read:
/// run as root, a chmod stops nothing, so the real binary runs under setpriv.
@Suite(.enabled(if: OtherUser.available, "needs root, setpriv and the built ccbeacon"))
struct ReadOnlyLedgerTests {
    static let readers: [[String]] = [
        ["ledger", "show"], ["ledger", "export", "--format", "json"], ["ledger", "export"], ["ledger", "check"],
    ]

    /// A WAL ledger with no -wal file: a read-only file, in a read-only folder and in a writable
    /// one. Every reader works, nothing is written or created; provisioning cannot write it
    /// (which shows the child really was denied).
    @Test(arguments: [true, false])
    func aReadOnlyLedgerIsReadWithoutWriting(readOnlyFolder: Bool) throws {
        let scratch = try Scratch()
        defer {
            OtherUser.unlock(scratch)
            scratch.remove()
        }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        try OtherUser.lock(scratch, folder: readOnlyFolder ? 0o555 : 0o777)
        let before = try filesBeside(path)
        for reader in Self.readers {
            let run = try OtherUser.ccbeacon(reader + ["--ledger", path], in: scratch)
            #expect(run.status == 0, "\(reader): \(run.errors)")
            #expect(run.output.contains("00:12:4B:00:00:01") || reader[1] == "check", "\(reader): \(run.output)")
            #expect(try filesBeside(path) == before, "\(reader) wrote or created a file")
        }
        let provision = try OtherUser.ccbeacon(
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", path, "--yes", "--wait", "0.1"],
            in: scratch)
        #expect(provision.status == 1)
        #expect(
            provision.errors.contains(readOnlyFolder ? "cannot lock the ledger" : "the file cannot be written"),
            "\(provision.errors)")
        #expect(try filesBeside(path) == before)
    }

    /// A ledger left with -wal and -shm files (its process died), in a read-only folder: the
    /// readers see what only the -wal holds, through SQLite's read-only -shm access; without the
    /// -shm file SQLite cannot read it there, and the command says what it needs.
    @Test func aLedgerWithAWALFileIsReadInAReadOnlyFolder() throws {
        let scratch = try Scratch()
        defer {
            OtherUser.unlock(scratch)
            scratch.remove()
        }
        let source = try Scratch()
        defer { source.remove() }
        let ledger = try SQLiteLedger(path: source.path("ledger.sqlite"))
        try ledger.register([Station(name: "only-in-the-wal", identity: IBeaconFixture.identity(9))])
        // Copied while the writer still has it open: as a crash would leave it.
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(
                atPath: source.path("ledger.sqlite" + suffix), toPath: scratch.path("ledger.sqlite" + suffix))
        }
        let path = scratch.path("ledger.sqlite")
        try OtherUser.lock(scratch, folder: 0o555)
        let before = try filesBeside(path)
        #expect(before.keys.sorted() == ["ledger.sqlite", "ledger.sqlite-shm", "ledger.sqlite-wal"])
        for reader in Self.readers {
            let run = try OtherUser.ccbeacon(reader + ["--ledger", path], in: scratch)
            #expect(run.status == 0, "\(reader): \(run.errors)")
            #expect(try filesBeside(path) == before, "\(reader) changed a file")
        }
        let show = try OtherUser.ccbeacon(["ledger", "show", "--ledger", path], in: scratch)
        #expect(show.output.contains("only-in-the-wal"))

        OtherUser.unlock(scratch)
        try FileManager.default.removeItem(atPath: path + "-shm")
        try OtherUser.lock(scratch, folder: 0o555)
        let withoutSHM = try filesBeside(path)
        let refused = try OtherUser.ccbeacon(["ledger", "show", "--ledger", path], in: scratch)
        #expect(refused.status == 1)
        #expect(refused.errors.contains("-shm file"), "\(refused.errors)")
        #expect(try filesBeside(path) == withoutSHM)
    }
}

/// Running the built ccbeacon as nobody (uid and gid 65534, no groups).
enum OtherUser {
    static let binary = BuiltTools.ccbeacon
    static let setpriv = "/usr/bin/setpriv"

    static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: setpriv)
            && FileManager.default.isExecutableFile(atPath: binary)
    }

    static func ccbeacon(_ arguments: [String], in folder: Scratch) throws -> ProcessResult {
        try ChildProcess.run(
            setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments, in: folder.url,
            timeout: 60)
    }

    /// Makes every file in the folder read-only (0444) and gives the folder `folder`'s mode.
    static func lock(_ scratch: Scratch, folder: Int) throws {
        for entry in try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: scratch.path(entry))
        }
        try FileManager.default.setAttributes([.posixPermissions: folder], ofItemAtPath: scratch.url.path)
    }

    /// Makes the folder writable again (for the test to change or remove it).
    static func unlock(_ scratch: Scratch) {
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.url.path)
    }
}

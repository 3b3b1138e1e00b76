import Foundation
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// An output of several files is one output (`OutputSet`): a write that fails part way replaces
/// none of them. Each command case runs the real ccbeacon under a file size limit (`ulimit -f`, in
/// KiB, with SIGXFSZ ignored) that the first file fits and the second does not: a command that wrote
/// its files one after the other replaced the first and then failed (a station's .hex new and its
/// .bin old, a template's image new and its manifest old — BROKEN —, a label sheet's first page
/// of the new list and the second of the old).
@Suite(.enabled(if: BuiltTools.ccbeaconAvailable, "needs the built ccbeacon"))
struct OutputSetTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// ccbeacon `arguments` in `scratch`, no file it writes larger than `kib` KiB.
    static func limited(_ kib: Int, _ arguments: [String], in scratch: Scratch) throws -> ProcessResult {
        try BuiltTools.runLimited("-f \(kib)", arguments, in: scratch.url)
    }

    /// The names in `scratch` (temporary files a failed write left would show here).
    static func names(_ scratch: Scratch, _ folder: String = "") throws -> [String] {
        try Files.list(scratch.path(folder)).sorted()
    }

    @Test func aStationImageAndItsBinAreReplacedTogetherOrNotAtAll() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let identity = ["--template", "cc2541-ibeacon", "--uuid", Self.uuid, "--major", "1"]
        let first = ToolRun(
            ["generate"] + identity + ["--minor", "1", "-o", scratch.path("s.hex"), "--bin", scratch.path("s.bin")])
        #expect(first.status == 0, "\(first.diagnostics)")
        let (hex, bin) = (try scratch.bytes("s.hex"), try scratch.bytes("s.bin"))
        #expect(hex.count < 10 * 1024 && bin.count > 10 * 1024, "the .hex fits the limit, the .bin does not")
        let run = try Self.limited(
            10, ["generate"] + identity + ["--minor", "2", "-o", "s.hex", "--bin", "s.bin"], in: scratch)
        #expect(run.status == 1, "\(run.errors)")
        #expect(run.errors.contains("cannot write 's.bin': File too large; no file was replaced"), "\(run.errors)")
        #expect(try scratch.bytes("s.hex") == hex && scratch.bytes("s.bin") == bin, "both as they were")
        #expect(try Self.names(scratch) == ["s.bin", "s.hex"])
    }

    @Test func aTemplatesImageAndManifestAreReplacedTogetherOrNotAtAll() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let station = scratch.path("s.hex")
        let small = scratch.path("small.hex")
        #expect(
            ToolRun([
                "generate", "--template", "cc2541-ibeacon", "--uuid", Self.uuid, "--major", "1", "--minor", "1", "-o",
                station,
            ])
            .status == 0)
        #expect(ToolRun(["convert", station, "--range", "0x7F00:0x7F40", "-o", small]).status == 0)
        let made = ToolRun(["template", "import", station, "--name", "mine", "-o", scratch.path("tpl")])
        #expect(made.status == 0, "\(made.diagnostics)")
        let (image, manifest) = (try scratch.bytes("tpl/image.hex"), try scratch.bytes("tpl/template.json"))
        // The small image fits 1 KiB; its manifest, with a long description, does not.
        let description = String(repeating: "d", count: 1500)
        let run = try Self.limited(
            1,
            [
                "template", "import", "small.hex", "--name", "mine", "-o", "tpl", "--force", "--description",
                description,
            ],
            in: scratch)
        #expect(run.status == 1, "\(run.errors)")
        #expect(
            run.errors.contains("cannot write 'tpl/template.json': File too large; no file was replaced"),
            "\(run.errors)")
        #expect(try scratch.bytes("tpl/image.hex") == image && scratch.bytes("tpl/template.json") == manifest)
        #expect(try Self.names(scratch, "tpl") == ["image.hex", "template.json"])
        #expect(ToolRun(["templates", "--templates", scratch.path("")]).output.contains("BROKEN") == false)
    }

    /// A second list's sheet that cannot be written whole leaves the first list's pages, every one.
    @Test func aLabelSheetsPagesAreReplacedTogetherOrNotAtAll() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        func list(_ prefix: String) -> String {
            "name,uuid,major,minor\n"
                + (1...48).map {
                    "\(prefix)\($0)\($0 > 24 ? " with a long name that makes its page larger" : ""),\(Self.uuid),1,\($0)\n"
                }
                .joined()
        }
        let one = try scratch.write("one.csv", list("first "))
        _ = try scratch.write("two.csv", list("second "))
        let first = ToolRun(["labels", one, "--board", "hm10", "-o", scratch.path("sheet.svg")])
        #expect(first.status == 0, "\(first.diagnostics)")
        let pages = (try scratch.bytes("sheet-1.svg"), try scratch.bytes("sheet-2.svg"))
        #expect(pages.0.count < 180 * 1024 && pages.1.count > 180 * 1024, "page 1 fits the limit, page 2 does not")
        let run = try Self.limited(180, ["labels", "two.csv", "--board", "hm10", "-o", "sheet.svg"], in: scratch)
        #expect(run.status == 1, "\(run.errors)")
        #expect(
            run.errors.contains("cannot write 'sheet-2.svg': File too large; no file was replaced"), "\(run.errors)")
        #expect(!run.output.contains("wrote"), "\(run.output)")
        #expect(try scratch.bytes("sheet-1.svg") == pages.0 && scratch.bytes("sheet-2.svg") == pages.1)
        #expect(try Self.names(scratch) == ["one.csv", "sheet-1.svg", "sheet-2.svg", "two.csv"])
    }

    /// Two sets committed into one folder at once take turns: the test is the first run here,
    /// holding the folder's lock while it puts its .hex and .bin in place, and the command, whose
    /// files were staged meanwhile, puts both of its own in place after it. (Nothing kept them apart:
    /// one run's .hex could end beside the other's .bin, both runs saying "wrote".)
    @Test func twoSetsIntoOneFolderTakeTurns() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = open(scratch.path(""), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(ExclusiveLock.take(folder) == .taken)
        let generate = try ChildProcess(
            BuiltTools.ccbeacon,
            [
                "generate", "--template", "cc2541-ibeacon", "--uuid", Self.uuid, "--major", "1", "--minor", "3", "-o",
                "o.hex", "--bin", "o.bin",
            ], in: scratch.url)
        func staged() -> Int { ((try? Self.names(scratch)) ?? []).filter { $0.contains(".ccbeacon-tmp.") }.count }
        let deadline = Date().addingTimeInterval(60)
        while staged() < 2, generate.isRunning, Date() < deadline { usleep(2_000) }
        _ = try scratch.write("o.hex", "the other run's\n")
        _ = try scratch.write("o.bin", "the other run's\n")
        ExclusiveLock.release(folder)
        #expect(generate.wait(timeout: 60) == 0, "\(generate.errors)")
        #expect(try scratch.text("o.hex").contains(":107F0000") && scratch.bytes("o.bin").count > 30_000)
        #expect(try Self.names(scratch) == ["o.bin", "o.hex"])
    }

    /// A ccbeacon in another PID namespace (another container sharing the folder) sees no process
    /// with a live writer's ID: it used to take the writer's staged file for a killed run's and
    /// remove it, so that the writer failed. The file names the writer's machine; it stays.
    @Test(.enabled(if: OtherNamespaces.canBeMade, "needs unshare (root)"))
    func aCcbeaconInAnotherPIDNamespaceLeavesALiveWritersFile() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let live = Files.temporaryName(for: "a.hex", inFolder: scratch.url.path)  // this test process's
        _ = try scratch.write(live, "staged\n")
        let run = try ChildProcess.run(
            "/usr/bin/unshare",
            [
                "--pid", "--fork", "--mount-proc", BuiltTools.ccbeacon, "generate", "--template", "cc2541-ibeacon",
                "--uuid", Self.uuid, "--major", "1", "--minor", "1", "-o", "b.hex",
            ], in: scratch.url, timeout: 60)
        #expect(run.status == 0, "\(run.errors)")
        #expect(try Self.names(scratch) == [live, "b.hex"].sorted())
    }

    /// What a killed run staged is removed by the next set staged into its folder (a labels run of
    /// thousands of pages, stopped with Ctrl-C, left them all); a live run's files are left alone.
    @Test func aKilledRunsStagedFilesGoWithTheNextSet() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let ended = try ChildProcess("/bin/true", [], in: scratch.url)
        let dead = ended.processID
        ended.wait()
        let left = ["sheet-1.svg", "sheet-2.svg"].map {
            Files.temporaryName(for: $0, inFolder: scratch.url.path, process: dead)
        }
        let live = Files.temporaryName(for: "a.hex", inFolder: scratch.url.path)
        for name in left + [live] { _ = try scratch.write(name, "staged\n") }
        // A file written alone (one of a batch's thousands) lists no folder.
        try Files.writeAtomically(Array("alone\n".utf8), to: scratch.path("b.txt"))
        #expect(try Self.names(scratch) == (left + [live, "b.txt"]).sorted())
        let set = OutputSet(clearingLeftovers: true)
        try set.stage(Array("new\n".utf8), as: scratch.path("a.txt"))
        try set.commit()
        #expect(try Self.names(scratch) == [live, "a.txt", "b.txt"])
    }

    /// A list named like a page of the sheet is the input, not a page of an earlier run to remove.
    @Test func aListNamedLikeAPageIsNotCalledALeftover() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("lab-1.svg", "name,uuid,major,minor\nA,\(Self.uuid),1,1\n")
        let run = ToolRun(["labels", list, "--board", "hm10", "-o", scratch.path("lab.svg")])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("left alone"), "\(run.diagnostics)")
        #expect(try scratch.text("lab-1.svg") == "name,uuid,major,minor\nA,\(Self.uuid),1,1\n")
    }

    /// The set itself: a file that cannot be staged leaves every target as it was and nothing
    /// beside them; a rename that fails names the files already replaced.
    @Test func aSetReplacesNothingUntilEveryFileIsStaged() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let a = try scratch.write("a.txt", "old a")
        let staged = OutputSet()
        try staged.stage(Array("new a".utf8), as: a)
        #expect(throws: FileError.self) { try staged.stage(Array("new b".utf8), as: scratch.path("missing/b.txt")) }
        staged.discard()
        #expect(try scratch.text("a.txt") == "old a")
        #expect(try Self.names(scratch) == ["a.txt"])

        try FileManager.default.createDirectory(atPath: scratch.path("d/inside"), withIntermediateDirectories: true)
        let partly = OutputSet()
        try partly.stage(Array("new a".utf8), as: a)
        try partly.stage(Array("a file".utf8), as: scratch.path("d"))
        #expect(partly.paths == [a, scratch.path("d")])
        do {
            try partly.commit()
            Issue.record("a file renamed over a folder that holds a file")
        } catch {
            #expect(error.path == scratch.path("d") && error.reason.hasSuffix("; already replaced: \(a)"), "\(error)")
        }
        #expect(try scratch.text("a.txt") == "new a")
        #expect(try Self.names(scratch) == ["a.txt", "d"])

        let whole = OutputSet()
        try whole.stage(Array("newest a".utf8), as: a)
        try whole.stage(Array("new c".utf8), as: scratch.path("c.txt"))
        try whole.commit()
        #expect(try scratch.text("a.txt") == "newest a" && scratch.text("c.txt") == "new c")
        #expect(try Self.names(scratch) == ["a.txt", "c.txt", "d"])
    }

    /// A staged file another program removed (a ccbeacon in another container sharing the folder
    /// takes a writer it cannot see for a killed one) is said as that, not as a missing folder.
    @Test func aStagedFileRemovedMeanwhileIsSaidAsSuch() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let set = OutputSet()
        try set.stage(Array("new\n".utf8), as: scratch.path("a.txt"))
        for name in try Self.names(scratch) { unlink(scratch.path(name)) }
        #expect {
            try set.commit()
        } throws: { error in
            (error as? FileError)?.reason
                == "its new file, written beside it, was removed meanwhile by another program; run again"
        }
        #expect(try Self.names(scratch).isEmpty)
    }

    /// A full disk is said as such, with what to do.
    @Test func aFullDiskIsSaidAsSuch() {
        let full = FileAccess.writeFailure(
            FileError(.write, path: "out/a.hex", reason: "No space left on device", code: ENOSPC), replacedNothing: true
        )
        #expect(full.message == "cannot write 'out/a.hex': No space left on device; no file was replaced")
        #expect(full.hint == "the disk (or this user's quota) is full: free some space and run again")
        let denied = FileAccess.writeFailure(
            FileError(.write, path: "out/a.hex", reason: "Permission denied", code: EACCES))
        #expect(denied.hint == "check that the directory 'out' exists and is writable")
    }
}

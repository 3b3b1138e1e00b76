import CCDebuggerEmulator
import Checksums
import FirmwareTemplate
import Foundation
import IntelHex
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CCDebugger
@testable import CommandLineKit

/// "Nothing a user gave us is ever damaged; bad input never crashes or half-writes." Each test
/// tries to break that promise the way a user (or an adversary) could.
struct InputIsNeverDroppedOrDamagedTests {
    static let identity = ["--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "1", "--minor", "2"]

    /// A JSON list with a null required key is refused whole (exit 65): no station is dropped,
    /// nothing is written, no ledger is created.
    @Test(arguments: ["batch", "provision"])
    func aNullKeyRefusesTheWholeList(command: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write(
            "list.json",
            """
            [{"name": "a", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": 1, "minor": 1},
             {"name": "b", "uuid": null, "major": 1, "minor": 2}]
            """)
        let extra = command == "batch" ? ["-o", scratch.path("out")] : ["--yes"]
        let run = ToolRun([command, list, "--template", "cc2541-ibeacon"] + extra)
        #expect(run.status == 65)
        #expect(
            run.diagnostics.contains("list.json:2:24: [1].uuid: expected a string, found null"), "\(run.diagnostics)")
        #expect(try Files.list(scratch.url.path) == ["list.json"], "nothing written, no ledger")
    }

    /// A copy of the bundled template in the scratch folder, so a test may aim outputs at it.
    static func templateCopy(_ scratch: Scratch) throws -> String {
        let source = SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon")
        let copy = scratch.url.appendingPathComponent("tpl")
        try FileManager.default.copyItem(at: source, to: copy)
        return copy.path
    }

    /// Outputs aimed at an input of the same run — directly, through `..`, a symlinked folder or a
    /// hard link — are refused with exit 64 before anything is written, and the input is unchanged.
    @Test func noOutputReplacesAnInputOfTheSameRun() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let template = try Self.templateCopy(scratch)
        let image = template + "/image.hex"
        let imageBefore = try Files.read(image)
        let manifestBefore = try Files.read(template + "/template.json")
        try FileManager.default.createSymbolicLink(atPath: scratch.path("linked"), withDestinationPath: template)
        try FileManager.default.linkItem(atPath: image, toPath: scratch.path("hardlink.hex"))
        let list = try scratch.write(
            "stations.json",
            #"[{"name": "image", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": 1, "minor": 1}]"#)
        // A CSV list saved as list.hex whose one station is called "list".
        let csv = try scratch.write(
            "list.hex", "name,uuid,major,minor\nlist,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\n")
        try FileManager.default.linkItem(atPath: image, toPath: scratch.path("hardlink.bin"))
        let listBefore = try Files.read(list)
        let cases: [(arguments: [String], input: String)] = [
            (["batch", list, "--template", template, "-o", scratch.url.path], "the station list"),
            (["batch", list, "--template", template, "-o", template], "the template 'cc2541-ibeacon' file"),
            (["batch", list, "--template", template, "-o", scratch.path("linked")], "the template"),
            (["batch", csv, "--template", template, "-o", scratch.url.path, "--bin"], "the station list"),
            (["batch", list, "--template", template, "-o", scratch.path("linked"), "--bin"], "the template"),
            (["generate", "--template", template, "-o", image] + Self.identity, "the template"),
            (
                ["generate", "--template", template, "-o", scratch.path("linked/../tpl/image.hex")] + Self.identity,
                "the template"
            ),
            (["generate", "--template", template, "-o", scratch.path("hardlink.hex")] + Self.identity, "the template"),
            (
                [
                    "generate", "--template", template, "-o", scratch.path("ok.hex"), "--bin",
                    scratch.path("hardlink.bin"),
                ] + Self.identity, "the template"
            ),
            (["convert", image, "-o", scratch.path("hardlink.hex")], "the input image"),
            (["patch", image, "--at", "0x7F10", "--bytes", "00", "-o", image], "the input image"),
            (["template", "import", image, "--name", "x", "-o", template, "--force"], "the image being imported"),
        ]
        for (arguments, input) in cases {
            let run = ToolRun(arguments)
            #expect(run.status == 64, "\(arguments): \(run.diagnostics)")
            #expect(run.diagnostics.contains("would overwrite \(input)"), "\(arguments): \(run.diagnostics)")
        }
        #expect(try Files.read(image) == imageBefore)
        #expect(try Files.read(template + "/template.json") == manifestBefore)
        #expect(try Files.read(list) == listBefore)
        #expect(!Files.exists(scratch.path("ok.hex")), "no output written when another is refused")
    }

    /// `generate --bin` into a folder that does not exist writes nothing at all (the .hex was
    /// written first and then the command failed).
    @Test func everyOutputPathIsCheckedBeforeAnyIsWritten() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        for bin in ["/nonexistent-folder/x.bin", scratch.path("x.hex/x.bin")] {
            _ = try? scratch.write("x.hex", "not a folder")
            let run = ToolRun(
                ["generate", "--template", "cc2541-ibeacon", "-o", scratch.path("station.hex"), "--bin", bin]
                    + Self.identity)
            #expect(run.status == 1, "\(run.diagnostics)")
            #expect(run.diagnostics.contains("nothing was written"))
            #expect(!Files.exists(scratch.path("station.hex")))
        }
        let folder = ToolRun(
            ["generate", "--template", "cc2541-ibeacon", "-o", scratch.url.path + "/"] + Self.identity)
        #expect(folder.status == 64)
    }

    /// Everything in a folder, by name (hidden files too), to compare before and after a run.
    static func snapshot(_ folder: String) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try Files.list(folder) where Files.isFile(folder + "/" + name) {
            files[name] = try Files.read(folder + "/" + name)
        }
        return files
    }

    /// A rerun of `batch` over its folder where one output path is now a folder (or a FIFO) is a
    /// usage error before anything changes: it used to replace seven files and set the record
    /// aside before failing on the eighth (exit 1).
    @Test(arguments: ["Stairs_South.hex", "Hall_A.bin", "stations.json", "Entrance.hex"])
    func aBatchChecksEveryOutputPathBeforeChangingAnything(blocked: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = SharedFixtures.checkout.appendingPathComponent("scripts/example-stations.csv").path
        let folder = scratch.path("o5")
        let first = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", folder, "--bin"])
        try #require(first.status == 0, "\(first.diagnostics)")
        let path = folder + "/" + blocked
        try FileManager.default.removeItem(atPath: path)
        if blocked == "Entrance.hex" {
            #expect(mkfifo(path, 0o600) == 0)
        } else {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        let before = try Self.snapshot(folder)
        let run = ToolRun([
            "batch", list, "--template", "cc2541-ibeacon", "-o", folder, "--bin", "--interval", "200", "--jobs", "1",
        ])
        #expect(run.status == 64, "\(run.diagnostics)")
        let kind = blocked == "Entrance.hex" ? "a FIFO" : "a folder"
        #expect(run.diagnostics.contains("'\(path)' is \(kind)"), "\(run.diagnostics)")
        #expect(try Self.snapshot(folder) == before, "nothing written, the record untouched")
        #expect(!Files.exists(folder + "/.stations.json.incomplete"))
    }

    /// A batch folder's files belong to its record: no other writer may replace one (exit 64,
    /// naming the record), or `stations.json` would disagree with the files it lists. `generate`
    /// into a batch folder used to succeed and leave the record lying. The batch itself may.
    @Test func noSingleFileWriterReplacesAFileABatchRecordLists() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = SharedFixtures.checkout.appendingPathComponent("scripts/example-stations.csv").path
        let folder = scratch.path("o4")
        let batch = ["batch", list, "--template", "cc2541-ibeacon", "-o", folder, "--bin"]
        try #require(ToolRun(batch).status == 0)
        let image = SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon/image.hex").path
        let ledger = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(ledger)
        let generate = ["generate", "--template", "cc2541-ibeacon"] + Self.identity
        let cases: [(arguments: [String], debuggers: EmulatorProvider?)] = [
            (generate + ["-o", folder + "/Entrance.hex"], nil),
            (generate + ["-o", scratch.path("elsewhere.hex"), "--bin", folder + "/Hall_A.bin"], nil),
            (generate + ["-o", folder + "/../o4/Lab_1.hex"], nil),
            (["convert", image, "-o", folder + "/Cafeteria.bin"], nil),
            (["patch", image, "--at", "0x7F10", "--bytes", "00", "-o", folder + "/Lab_2.hex"], nil),
            (["ledger", "export", "--ledger", ledger, "-o", folder + "/Stairs_North.hex"], nil),
            (["ledger", "export", "--ledger", ledger, "-o", folder + "/stations.json"], nil),
            (["read", "-o", folder + "/Stairs_South.hex"], EmulatorProvider()),
        ]
        let before = try Self.snapshot(folder)
        for (arguments, debuggers) in cases {
            let run = ToolRun(arguments, debuggers: debuggers)
            #expect(run.status == 64, "\(arguments): \(run.diagnostics)")
            #expect(
                run.diagnostics.contains("belongs to the batch recorded in '\(folder)")
                    && run.diagnostics.contains("/stations.json'"),
                "\(arguments): \(run.diagnostics)")
            #expect(run.diagnostics.contains("write elsewhere, or rerun batch"), "\(arguments): \(run.diagnostics)")
        }
        #expect(try Self.snapshot(folder) == before, "the batch folder is as the batch left it")
        #expect(!Files.exists(scratch.path("elsewhere.hex")))
        // A file the record does not list may be written there, and the batch may rerun.
        #expect(ToolRun(generate + ["-o", folder + "/extra.hex"]).status == 0)
        let rerun = ToolRun(batch + ["--interval", "200"])
        #expect(rerun.status == 0, "\(rerun.diagnostics)")
        #expect(rerun.output.contains("0 written, 8 replaced"), "\(rerun.output)")
        // A batch of another template says whose record it replaced.
        let other = ToolRun(["batch", list, "--template", "cc2541-ibeacon-prewhitened", "-o", folder])
        #expect(other.status == 0, "\(other.diagnostics)")
        #expect(
            other.output.contains(
                "note: the previous stations.json was for template 'cc2541-ibeacon'; it now describes this batch"),
            "\(other.output)")
    }

    /// Inputs in a folder of their own, so that a test's scratch folder holds only what a command
    /// wrote: a one-station list, a sound ledger and the bundled template's image.
    static func inputsApart() throws -> (folder: Scratch, list: String, ledger: String, image: String) {
        let inputs = try Scratch()
        let list = try inputs.write("list.csv", "name,uuid,major,minor\nA,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\n")
        let ledger = inputs.path("ledger.sqlite")
        try LedgerFiles.sound(ledger)
        let image = SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon/image.hex").path
        return (inputs, list, ledger, image)
    }

    /// An output name of up to NAME_MAX bytes is written: its temporary name used to be longer
    /// than the limit (ENAMETOOLONG).
    @Test func anOutputWithALongNameIsWritten() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.path(String(repeating: "s", count: 250) + ".hex")
        let run = ToolRun(["generate", "--template", "cc2541-ibeacon", "-o", output] + Self.identity)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(Files.isFile(output))
        #expect(try Files.list(scratch.url.path).count == 1, "no temporary file left")
    }

    /// An output name longer than the file system takes (NAME_MAX, 255 bytes here) or a path of
    /// PATH_MAX bytes is refused before anything is written (exit 64), saying so: `generate -o
    /// a.hex --bin <long>.bin` used to write a.hex and then fail on the .bin, hinting at the folder.
    @Test func anOutputNameTooLongIsRefusedBeforeAnythingIsWritten() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let long = String(repeating: "n", count: 252) + ".bin"  // 256 bytes
        let deep = String(repeating: "d/", count: 2100) + "x.hex"  // over 4,096 bytes
        let nearMax = String(repeating: String(repeating: "p", count: 250) + "/", count: 16) + "bbbb.bin"  // 4,024
        let longFolder = String(repeating: "f", count: 256)
        let longTrace = String(repeating: "t", count: 251) + ".pcap"
        let longLedger = String(repeating: "l", count: 203) + ".sqlite"  // 210 bytes
        let deepLedger = String(repeating: String(repeating: "q", count: 99) + "/", count: 4) + "x.sqlite"  // 408
        let (inputs, list, ledger, image) = try Self.inputsApart()
        defer { inputs.remove() }
        let generate = ["generate", "--template", "cc2541-ibeacon"] + Self.identity
        let cases: [(arguments: [String], message: String)] = [
            (
                generate + ["-o", scratch.path("a.hex"), "--bin", scratch.path(long)],
                "its name is 256 bytes long, and the folder takes names of at most 255"
            ),
            (
                generate + ["-o", scratch.path("a.hex"), "--bin", scratch.path("é" + long.dropFirst(2))],
                "its name is 256 bytes long, and the folder takes names of at most 255"
            ),
            (
                ["convert", image, "-o", scratch.path(long)],
                "its name is 256 bytes long, and the folder takes names of at most 255"
            ),
            (generate + ["-o", scratch.path(deep)], "bytes long, and a path may have at most 4055"),
            // Under PATH_MAX, but without room for the temporary file written beside it: it used
            // to fail on that file after a.hex was written.
            (
                generate + ["-o", scratch.path("a.hex"), "--bin", scratch.path(nearMax)],
                "bytes long, and a path may have at most 4055 (the rest is room for the files written beside it)"
            ),
            (["man-pages", "-o", scratch.path(nearMax)], "bytes long, and a path may have at most 4055"),
            (
                ["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path(longFolder)],
                "a folder's name in it is 256 bytes long, and names may have at most 255"
            ),
            (["read", "-o", scratch.path("r.hex"), "--trace", scratch.path(longTrace)], "its name is 256 bytes long"),
            (
                ["template", "import", image, "--name", "t", "-o", scratch.path(longFolder)],
                "a folder's name in it is 256 bytes long"
            ),
            (
                ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", scratch.path(longLedger)],
                "its name is 210 bytes long, and the folder takes names of at most 204 here"
            ),
            (
                ["ledger", "migrate", "--from", ledger, "--to", scratch.path(longLedger)],
                "its name is 210 bytes long, and the folder takes names of at most 204 here"
            ),
            // SQLite opens paths of up to 511 bytes: a new ledger's leaves room for the names
            // beside it (it used to fail as the run started, leaving its lock file).
            (
                ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", scratch.path(deepLedger)],
                "and SQLite opens paths of at most 511 bytes, the names beside a new ledger included: at most 460"
            ),
        ]
        for (arguments, message) in cases {
            let run = ToolRun(arguments, debuggers: EmulatorProvider())
            #expect(run.status == 64, "\(arguments.last ?? ""): \(run.diagnostics)")
            #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
            #expect(!run.diagnostics.contains("exists and is writable"), "\(run.diagnostics)")
            #expect(try Files.list(scratch.url.path).isEmpty, "nothing written: \(arguments.last ?? "")")
        }
        // 255 bytes is a name the file system takes.
        let longest = scratch.path(String(repeating: "n", count: 251) + ".bin")
        #expect(ToolRun(generate + ["-o", scratch.path("a.hex"), "--bin", longest]).status == 0)
        #expect(Files.isFile(longest))
        // A ledger's name may have 204 bytes: its copy is made under a creation name beside it
        // (which used to get the creation suffix twice, and failed from about 180 bytes).
        let fits = scratch.path(String(repeating: "l", count: 197) + ".sqlite")
        let migrated = ToolRun(["ledger", "migrate", "--from", ledger, "--to", fits])
        #expect(migrated.status == 0, "\(migrated.diagnostics)")
        #expect(ToolRun(["ledger", "check", "--ledger", fits]).status == 0)
        // A ledger already at a path SQLite cannot open is named so, and left as it was.
        let deepFolder = scratch.path(String(repeating: String(repeating: "q", count: 99) + "/", count: 5))
        try FileManager.default.createDirectory(atPath: deepFolder, withIntermediateDirectories: true)
        let deepLedgerFile = Files.join(deepFolder, String(repeating: "z", count: 10) + ".sqlite")
        try FileManager.default.copyItem(atPath: ledger, toPath: deepLedgerFile)
        let before = try Files.read(deepLedgerFile)
        let check = ToolRun(["ledger", "check", "--ledger", deepLedgerFile])
        #expect(check.status == 64 && check.diagnostics.contains("SQLite opens paths of at most 511 bytes"))
        #expect(try Files.read(deepLedgerFile) == before)
        let beside = try Files.list(deepFolder)
        #expect(beside == [Files.lastComponent(deepLedgerFile)], "\(beside)")
    }

    /// An output whose folder cannot hold it is refused before anything is written, naming what is
    /// in the way: a folder to be made under a regular file (batch, template import, man-pages and a
    /// new ledger used to fail with the system's "Not a directory"), a folder that is missing, a
    /// path that ends in '/' (a ledger's lock used to be tried at 'new/..lock').
    @Test func anOutputWhoseFolderCannotHoldItIsRefusedBeforeAnythingIsWritten() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (inputs, list, ledger, image) = try Self.inputsApart()
        defer { inputs.remove() }
        let file = try scratch.write("RF", "a file of the user's\n")
        let generate = ["generate", "--template", "cc2541-ibeacon"] + Self.identity
        let provision = ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger"]
        let underFile = "'\(file)' is not a folder"
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            (generate + ["-o", file + "/a.hex"], 1, underFile),
            (["batch", list, "--template", "cc2541-ibeacon", "-o", file + "/out"], 1, underFile),
            (["batch", list, "--template", "cc2541-ibeacon", "-o", file + "/out/deeper"], 1, underFile),
            (["template", "import", image, "--name", "t", "-o", file + "/t"], 1, underFile),
            (["man-pages", "-o", file + "/man"], 1, underFile),
            (provision + [file + "/x.sqlite"], 1, underFile),
            (
                provision + [scratch.path("missing/x.sqlite")], 1,
                "the folder '\(scratch.path("missing"))' does not exist"
            ),
            (
                provision + [scratch.path("new") + "/"], 64,
                "'\(scratch.path("new"))/' names a folder (it ends in '/' or '/.')"
            ),
            (
                ["ledger", "migrate", "--from", ledger, "--to", scratch.path("new.sqlite") + "/"], 64,
                "'\(scratch.path("new.sqlite"))/' names a folder (it ends in '/' or '/.')"
            ),
            (
                ["ledger", "export", "--ledger", ledger, "-o", scratch.path("registry.csv") + "/"], 64,
                "'\(scratch.path("registry.csv"))/' names a folder (it ends in '/' or '/.')"
            ),
        ]
        for (arguments, status, message) in cases {
            let run = ToolRun(arguments, debuggers: EmulatorProvider())
            #expect(run.status == status, "\(arguments.last ?? ""): \(run.diagnostics)")
            #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
            #expect(!run.diagnostics.contains("Not a directory"), "\(run.diagnostics)")
            // A file in the way is not a folder to create first (as the hint said).
            #expect(message != underFile || run.diagnostics.contains("is a file of its own"), "\(run.diagnostics)")
            #expect(try Files.list(scratch.url.path) == ["RF"], "nothing written: \(arguments.last ?? "")")
            #expect(try scratch.text("RF") == "a file of the user's\n")
        }
        // A ledger that is a symbolic link to nothing used to be tried, failing with the system's
        // "No such file or directory" and leaving its lock file.
        try FileManager.default.createSymbolicLink(atPath: scratch.path("dl.sqlite"), withDestinationPath: "nothere")
        let dangling = ToolRun(provision + [scratch.path("dl.sqlite")], debuggers: EmulatorProvider())
        #expect(dangling.status == 64 && dangling.diagnostics.contains("is a symbolic link to nothing"))
        #expect(try Files.list(scratch.url.path) == ["RF", "dl.sqlite"])
    }

    /// A link in the way of a folder to make says where it ends — followed to its last link, its
    /// target taken from the link's folder — and whether making a folder there mends it. It was
    /// called "a file of its own"; then (review) a chain named its first link, and a relative
    /// target was named as written.
    @Test(arguments: [
        (["gone": "nothing"], "gone", "a link to '%/nothing', where nothing is", true),
        (["chain": "dang", "dang": "nowhere"], "chain", "a link to '%/nowhere', where nothing is", true),
        (["sub/rel": "../nowhere"], "sub/rel", "a link to '%/sub/../nowhere', where nothing is", true),
        (["a": "b", "b": "a"], "a", "a link that leads in a circle, or through more than 40 links", false),
        (["tf": "RF"], "tf", "a link to '%/RF', which is not a folder", false),
        (["nd": "RF/x"], "nd", "a link to '%/RF/x', which cannot be reached (", false),
    ])
    func aLinkInTheWayOfAFolderSaysWhereItEnds(links: [String: String], output: String, said: String, missing: Bool)
        throws
    {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("RF", "a file of the user's\n")
        let list = try scratch.write("l.csv", "name,uuid,major,minor\ns1,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\n")
        try FileManager.default.createDirectory(atPath: scratch.path("sub"), withIntermediateDirectories: true)
        for (link, target) in links {
            try FileManager.default.createSymbolicLink(atPath: scratch.path(link), withDestinationPath: target)
        }
        let before = try Files.list(scratch.url.path).sorted()
        let folder = scratch.path(output)
        let text = said.replacing("%", with: scratch.url.path)
        for (arguments, status) in [
            (["man-pages", "-o", folder + "/man"], Int32(1)), (["man-pages", "-o", folder], 1),
        ] {
            let run = ToolRun(arguments, debuggers: EmulatorProvider())
            #expect(run.status == status, "\(run.diagnostics)")
            #expect(run.diagnostics.contains("'\(folder)' is \(text)"), "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains(
                    missing ? "create the folder it leads to" : "hint: choose another output path; nothing was written"),
                "\(run.diagnostics)")
            #expect(try Files.list(scratch.url.path).sorted() == before, "nothing written")
        }
        // batch's own check of -o says the same (as a usage error, as it says a file there).
        let batch = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", folder])
        #expect(batch.status == 64 && batch.diagnostics.contains("-o '\(folder)' is \(text)"), "\(batch.diagnostics)")
        #expect(try Files.list(scratch.url.path).sorted() == before, "nothing written")
    }

    /// An output never replaces state ccbeacon keeps (fourth review of the shared pool): `plan -o`
    /// and `ledger export -o` used to write their text over a ledger, and over a bench's journal
    /// of outcomes not yet on its server. A ledger, SQLite's -wal beside it, another application's
    /// SQLite database and a journal are each refused (exit 64) and left byte for byte. So are the
    /// names, with nothing there yet (the fifth review): an events file or a new ledger named as a
    /// bench's journal used to block that bench's next run; a new ledger or a migrated copy at a
    /// database's -journal or -shm name was deleted by the next SQLite to open that database.
    @Test func anOutputIsNeverWrittenOverALedgerOrAJournal() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (inputs, list, ledger, _) = try Self.inputsApart()
        defer { inputs.remove() }
        let target = scratch.path("provisioning.sqlite")
        try FileManager.default.copyItem(atPath: ledger, toPath: target)
        let wal = try scratch.write("provisioning.sqlite-wal", "not really a WAL, but where one would be\n")
        // Another application's database: the ledger with another application id (header bytes 68–71).
        var otherBytes = try Files.read(ledger)
        otherBytes.replaceSubrange(68..<72, with: [0, 0, 0, 7])
        let other = scratch.path("other.db")
        try Files.writeAtomically(otherBytes, to: other)
        let journal = try scratch.write(
            "ccbeacon-journal-S.jsonl", #"{"ledger":"x","bench":"S","attempt":3,"outcome":"verified"}"# + "\n")
        let places = try inputs.write("places.csv", "name\nLift lobby\n")
        let before = try [target, wal, other, journal].map { try Files.read($0) }
        for output in [target, wal, other, journal] {
            for arguments in [
                ["plan", places, "--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "3", "-o", output],
                ["ledger", "export", "--ledger", ledger, "--format", "csv", "-o", output],
                ["ledger", "export", "--ledger", ledger, "--format", "json", "-o", output],
            ] {
                let run = ToolRun(arguments)
                #expect(run.status == 64, "\(arguments): \(run.diagnostics)")
                #expect(
                    run.diagnostics.contains("'\(output)' is ")
                        && run.diagnostics.contains("; no output is written there: name another file"),
                    "\(arguments): \(run.diagnostics)")
            }
        }
        #expect(try [target, wal, other, journal].map { try Files.read($0) } == before)
        #expect(ToolRun(["ledger", "check", "--ledger", target]).status == 0)
        let provision = ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.1"]
        let named: [(arguments: [String], message: String)] = [
            (provision + ["--events", scratch.path("ccbeacon-journal-S2.jsonl")], "is named as a bench's journal"),
            (provision + ["--ledger", scratch.path("ccbeacon-journal-S2.jsonl")], "is named as a bench's journal"),
            (provision + ["--ledger", target + "-journal"], "is where SQLite keeps the -journal file of the database"),
            (["ledger", "migrate", "--from", ledger, "--to", other + "-shm"], "keeps the -shm file of the database"),
            (["ledger", "export", "--ledger", ledger, "-o", other + "-wal"], "keeps the -wal file of the database"),
            // Matched in any case: on a case-insensitive file system (a FAT stick) they are the same files.
            (provision + ["--events", scratch.path("CCBEACON-JOURNAL-S3.JSONL")], "is named as a bench's journal"),
            (provision + ["--events", scratch.path("ccbeacon-journal-S.place")], "is named as a bench's journal"),
            (["ledger", "export", "--ledger", "postgresql://u@h/db", "-o", journal], "is named as a bench's journal"),
            (
                ["ledger", "export", "--ledger", ledger, "-o", scratch.path(".provisioning.sqlite.lock")],
                "is the lock file"
            ),
            (provision + ["--events", scratch.path(".ccbeacon-journal-S.jsonl.lock")], "is the lock file a running"),
            (["ledger", "export", "--ledger", ledger, "-o", other + "-WAL"], "keeps the -wal file of the database"),
        ]
        let files = try Files.list(scratch.url.path)
        for (arguments, message) in named {
            let run = ToolRun(arguments, debuggers: EmulatorProvider())
            #expect(run.status == 64, "\(arguments): \(run.diagnostics)")
            #expect(run.diagnostics.contains(message), "\(arguments): \(run.diagnostics)")
            #expect(try Files.list(scratch.url.path) == files, "nothing made: \(arguments)")
        }
    }

    /// An input that is not a regular file is refused before it is read (exit 64): a FIFO with no
    /// writer used to hang `inspect` forever. Run as a process, with a deadline, so a regression
    /// fails instead of hanging the suite.
    @Test(.enabled(if: BuiltTools.ccbeaconAvailable, "needs the built ccbeacon"))
    func aFIFOADirectoryOrADeviceIsRefusedNotRead() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        #expect(mkfifo(scratch.path("x.hex"), 0o600) == 0)
        #expect(mkfifo(scratch.path("list.csv"), 0o600) == 0)
        try FileManager.default.createDirectory(atPath: scratch.path("dir.hex"), withIntermediateDirectories: false)
        let cases: [(arguments: [String], kind: String)] = [
            (["inspect", scratch.path("x.hex")], "a FIFO"),
            (["verify", scratch.path("x.hex")] + Self.identity, "a FIFO"),
            (["convert", scratch.path("x.hex"), "-o", scratch.path("y.bin")], "a FIFO"),
            (["patch", scratch.path("x.hex"), "--at", "0", "--bytes", "00", "-o", scratch.path("y.hex")], "a FIFO"),
            (["batch", scratch.path("list.csv"), "--template", "cc2541-ibeacon", "-o", scratch.path("out")], "a FIFO"),
            (["inspect", scratch.path("dir.hex")], "a directory"),
            (["convert", "/dev/zero.bin", "-o", scratch.path("y.hex")], "no such file"),
        ]
        for (arguments, kind) in cases {
            let run = try ChildProcess.run(BuiltTools.ccbeacon, arguments, in: scratch.url, timeout: 20)
            #expect(run.status != 128 + SIGKILL, "\(arguments) hung")
            #expect(run.errors.contains(kind), "\(arguments): \(run.errors)")
            if kind != "no such file" { #expect(run.status == 64, "\(arguments): \(run.errors)") }
        }
        // A character device under a .bin name.
        try FileManager.default.createSymbolicLink(atPath: scratch.path("zero.bin"), withDestinationPath: "/dev/zero")
        let device = try ChildProcess.run(
            BuiltTools.ccbeacon, ["inspect", scratch.path("zero.bin")], in: scratch.url, timeout: 20)
        #expect(device.status == 64 && device.errors.contains("a character device"), "\(device.errors)")
        #expect(!Files.exists(scratch.path("out")) && !Files.exists(scratch.path("y.bin")))
    }

    /// An enormous or sparse input is refused from its size (exit 64) before a byte is read or a
    /// buffer allocated: a 64 GiB sparse file used to abort the tool ("failed to allocate",
    /// SIGABRT). Under a memory limit, a file within the size limit that cannot be held is an
    /// error (exit 1), not an abort. Run as a process, with a deadline.
    @Test(.enabled(if: BuiltTools.ccbeaconAvailable, "needs the built ccbeacon"))
    func anEnormousOrSparseInputIsRefusedNotAllocated() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        for name in ["huge.hex", "huge.bin", "huge.csv"] {
            #expect(FileManager.default.createFile(atPath: scratch.path(name), contents: nil))
            #expect(truncate(scratch.path(name), 1 << 36) == 0)
        }
        let cases: [[String]] = [
            ["inspect", scratch.path("huge.hex")], ["verify", scratch.path("huge.hex")] + Self.identity,
            ["convert", scratch.path("huge.bin"), "-o", scratch.path("y.hex")],
            ["template", "import", scratch.path("huge.hex"), "--name", "t", "-o", scratch.path("t")],
            ["batch", scratch.path("huge.csv"), "--template", "cc2541-ibeacon", "-o", scratch.path("out")],
        ]
        for arguments in cases {
            let run = try ChildProcess.run(BuiltTools.ccbeacon, arguments, in: scratch.url, timeout: 30)
            #expect(run.status == 64, "\(arguments): \(run.errors)")
            #expect(
                run.errors.contains("it is 64 GiB, larger than the 256 MiB ccbeacon reads"),
                "\(arguments): \(run.errors)")
        }
        // 200 MiB is within the size limit, but not within a 100 MB address space.
        #expect(truncate(scratch.path("huge.hex"), 200 << 20) == 0)
        let limited = try ChildProcess.run(
            "/bin/sh", ["-c", "ulimit -v 100000; exec \"$0\" inspect huge.hex", BuiltTools.ccbeacon], in: scratch.url,
            timeout: 30)
        #expect(limited.status == 1, "\(limited.errors)")
        #expect(limited.errors.contains("not enough memory to read its 200 MiB"), "\(limited.errors)")
        #expect(!Files.exists(scratch.path("out")) && !Files.exists(scratch.path("t")))
    }

    /// `encode --format c` is valid C for every URL: compiled with warnings as errors (and
    /// trigraphs on) for URLs that try to end or nest the comment.
    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/cc"), "needs a C compiler"),
        arguments: [
            "http://a.co/*/x", "http://*/", "http://a/*", "http://a/**//*", "https://x/\\", "http://??/",
            "http://a/*/#/*", "http://a.co/%2A/",
        ])
    func theCArrayCompilesWhateverTheURL(url: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = ToolRun(["encode", "--type", "eddystone-url", "--url", url, "--format", "c"])
        #expect(run.status == 0, "\(run.diagnostics)")
        let source =
            "#include <stdint.h>\ntypedef uint8_t uint8;\n" + run.output
            + "int main(void) { return advertData[0] == 2 ? 0 : 1; }\n"
        let file = try scratch.write("beacon.c", source)
        let compile = try ChildProcess.run(
            "/usr/bin/cc",
            ["-std=c99", "-trigraphs", "-Wall", "-Wextra", "-Werror", "-o", scratch.path("beacon"), file],
            in: scratch.url, timeout: 60)
        #expect(compile.status == 0, "\(source)\n\(compile.errors)")
        let program = try ChildProcess.run(scratch.path("beacon"), [], in: scratch.url, timeout: 10)
        #expect(program.status == 0, "the array holds the advertising data")
        #expect(run.output.components(separatedBy: "*/").count == 2, "one comment end only: \(run.output)")
    }

    @Test func theCCommentEncoderNeverEndsOrNestsAComment() {
        let hostile = ["*/", "/*", "*//*", "a*/b", "/**/", "\n*/", "x\u{1B}[31m", "é*/", "\\\n", "*", "/"]
        for text in hostile {
            let encoded = CSource.comment(text)
            #expect(!encoded.contains("*/") && !encoded.contains("/*"), "\(text) → \(encoded)")
            #expect(encoded.unicodeScalars.allSatisfy { (" "..."~").contains($0) }, "\(text) → \(encoded)")
        }
        #expect(CSource.comment("http://a.co/x") == "http://a.co/x")
    }
}

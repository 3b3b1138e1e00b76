import BeaconPayload
import FirmwareTemplate
import Foundation
import IntelHex
import StructuredText
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// The template, station and check commands, run in process against the bundled boards/ and
/// firmware-templates/ (found by walking up from the test executable to the checkout).
struct TemplateCommandTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// A small firmware image with one iBeacon block at 0x200, as HEX text.
    static func firmware(extraBlockAt extra: Int? = nil) -> String {
        let block = try! IBeacon(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: "1", minor: "2").advertisingData()
        var memory = try! MemoryImage(bytes: [UInt8](repeating: 0x12, count: 0x200), at: 0)
        try! memory.write(block, at: 0x200)
        try! memory.write([UInt8](repeating: 0x34, count: 0x80), at: 0x21E)
        if let extra { try! memory.write(block, at: extra) }
        return String(decoding: HexWriter(lineEnding: .crlf).text(for: memory, startAddress: .linear(0)), as: UTF8.self)
    }

    @Test func boardsAndTemplatesAreListed() throws {
        let boards = ToolRun(["boards"])
        #expect(boards.status == 0)
        #expect(boards.output.contains("hm10"))
        #expect(boards.output.contains("0451:16A0"))
        let json = ToolRun(["boards", "--json"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(list.count == 4)
        let templates = ToolRun(["templates"])
        #expect(templates.status == 0)
        #expect(templates.output.contains("\ncc2541-ibeacon              CC2541F256  0x7F08   bundled  "))
        #expect(templates.output.contains("\ncc2541-ibeacon-prewhitened  CC2541F256  0x7F08   bundled  "))
    }

    /// `templates` shows each template by what `--template` takes to reach it: its folder's name,
    /// or its folder's path where a template of that name comes first in the search (a user's
    /// folder shadows a bundled one). It listed every one by its manifest's name, so three rows
    /// could read `cc2541-ibeacon` while `--template cc2541-ibeacon` took only the first.
    @Test func eachTemplateIsListedByWhatTemplateTakes() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let bundled = SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon").path
        for folder in ["cc2541-ibeacon", "other"] {
            try FileManager.default.copyItem(atPath: bundled, toPath: scratch.path("users/\(folder)"))
        }
        let users = scratch.path("users")
        let run = ToolRun(["templates", "--templates", users])
        #expect(run.status == 0, "\(run.diagnostics)")
        let rows = run.output.split(separator: "\n").map(String.init)
        let first = try #require(rows.first { $0.hasPrefix("cc2541-ibeacon ") }, "\(run.output)")
        #expect(first.contains(" \(users) "))
        let other = try #require(rows.first { $0.hasPrefix("other ") }, "\(run.output)")
        #expect(other.hasSuffix("(its template.json names it 'cc2541-ibeacon')"))
        #expect(rows.contains { $0.hasPrefix(bundled + " ") && $0.contains(" bundled ") }, "\(run.output)")
        #expect(
            run.diagnostics
                == "note: \(bundled) is reached only by its folder: --template cc2541-ibeacon takes \(users)/cc2541-ibeacon\n"
        )
        let json = ToolRun(["templates", "--templates", users, "--json"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(
            list.compactMap { $0["reference"] as? String }
                == ["cc2541-ibeacon", "other", bundled, "cc2541-ibeacon-prewhitened"])
        #expect(
            list.compactMap { $0["name"] as? String }.prefix(3) == [
                "cc2541-ibeacon", "cc2541-ibeacon", "cc2541-ibeacon",
            ])
    }

    /// What `templates` shows is what --template reaches: a folder whose name ends in
    /// "template.json" is a folder, not a manifest's path; a folder searched twice (the bundled
    /// one given again with --templates) is listed once, with no note against itself.
    @Test func theListedReferenceIsWhatTheLookupReaches() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let bundled = SharedFixtures.checkout.appendingPathComponent("firmware-templates").path
        try FileManager.default.copyItem(
            atPath: bundled + "/cc2541-ibeacon", toPath: scratch.path("users/x-template.json"))
        let run = ToolRun(["templates", "--templates", scratch.path("users")])
        #expect(run.output.contains("\nx-template.json "), "\(run.output)")
        let generated = ToolRun([
            "generate", "--templates", scratch.path("users"), "--template", "x-template.json", "--uuid", Self.uuid,
            "--major", "1", "--minor", "2", "-o", scratch.path("out.hex"),
        ])
        #expect(generated.status == 0, "\(generated.diagnostics)")
        let twice = ToolRun(["templates", "--templates", bundled])
        #expect(twice.status == 0 && twice.diagnostics.isEmpty, "\(twice.diagnostics)")
        #expect(twice.output.split(separator: "\n").filter { $0.hasPrefix("cc2541-ibeacon ") }.count == 1)
        let unknown = ToolRun([
            "generate", "--templates", bundled, "--template", "nope", "--uuid", Self.uuid, "--major", "1", "--minor",
            "2", "-o", scratch.path("out2.hex"),
        ])
        #expect(
            unknown.diagnostics.contains("the templates are cc2541-ibeacon, cc2541-ibeacon-prewhitened (see"),
            "\(unknown.diagnostics)")
    }

    @Test func brokenUserTemplatesAreListedWithTheReason() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("broken"), withIntermediateDirectories: true)
        _ = try scratch.write("broken/template.json", "{\"format\": 1}")
        let run = ToolRun(["templates", "--templates", scratch.url.path])
        #expect(run.status == 0)
        #expect(run.output.contains("BROKEN: \(scratch.path("broken"))/template.json:1:1: name: is missing"))
        #expect(run.output.contains("cc2541-ibeacon"))
    }

    /// A template.json that is there but is no regular file (a folder, a FIFO) is said as such,
    /// and its template listed as broken: "it has no template.json" was not true.
    @Test func aTemplateJSONThatIsNoFileIsSaidSo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(
            atPath: scratch.path("odd/template.json"), withIntermediateDirectories: true)
        let run = ToolRun([
            "generate", "--template", scratch.path("odd"), "--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60",
            "--major", "1", "--minor", "1", "-o", scratch.path("x.hex"),
        ])
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.hasPrefix(
                "ccbeacon generate: error: cannot read '\(scratch.path("odd"))/template.json': it is a directory"),
            "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("x.hex")))
        let list = ToolRun(["templates", "--templates", scratch.url.path])
        #expect(list.status == 0)
        #expect(list.output.contains("BROKEN: cannot read '\(scratch.path("odd"))/template.json'"), "\(list.output)")
    }

    @Test func importGenerateVerifyInspectRoundTrip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("fw.hex", Self.firmware())
        let folder = scratch.path("lab")
        var run = ToolRun(["template", "import", image, "--name", "lab", "-o", folder])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            run.output.contains(
                "payload: iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 major 1 minor 2 power -59 dBm (flags 0x06) at 0x200"
            ))
        #expect(try scratch.bytes("lab/image.hex") == scratch.bytes("fw.hex"))

        // Importing over it again needs --force.
        run = ToolRun(["template", "import", image, "--name", "lab", "-o", folder])
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("already holds a template"))
        #expect(ToolRun(["template", "import", image, "--name", "lab", "-o", folder, "--force"]).status == 0)

        run = ToolRun([
            "generate", "--template", folder, "--uuid", Self.uuid, "--major", "7", "--minor", "8", "--power", "-60",
            "-o", scratch.path("s.hex"), "--bin", scratch.path("s.bin"),
        ])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            run.output.hasPrefix(
                "wrote \(scratch.path("s.hex")): iBeacon \(Self.uuid) major 7 minor 8 power -60 dBm at 0x200, template 'lab', rewrote lines"
            ))
        let station = try IntelHexFile(text: try scratch.bytes("s.hex"))
        #expect(try scratch.bytes("s.bin") == station.memory.bytes(in: 0..<station.memory.endAddress!))

        let identity = ["--uuid", Self.uuid, "--major", "7", "--minor", "8"]
        #expect(ToolRun(["verify", scratch.path("s.hex")] + identity).status == 0)
        #expect(
            ToolRun(["verify", scratch.path("s.hex")] + identity + ["--power", "-60", "--template", folder]).status == 0
        )
        #expect(ToolRun(["verify", scratch.path("s.bin")] + identity + ["--template", folder]).status == 0)
        let wrong = ToolRun([
            "verify", scratch.path("s.hex"), "--uuid", Self.uuid, "--major", "7", "--minor", "9", "--template", folder,
        ])
        #expect(wrong.status == 1)
        #expect(wrong.output == "MISMATCH: \(scratch.path("s.hex"))\n  minor: expected 9, found 8\n")
        // The template itself carries the placeholder, not the station.
        #expect(ToolRun(["verify", scratch.path("lab/image.hex")] + identity).status == 1)

        let json = ToolRun(["verify", scratch.path("s.hex")] + identity + ["--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["passed"] as? Bool == true)
        #expect(object["address"] as? String == "0x200")

        let inspect = ToolRun(["inspect", scratch.path("s.hex"), "--template", folder, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(inspect.output.utf8)) as? [String: Any])
        let beacons = try #require(report["beacons"] as? [[String: Any]])
        #expect(beacons.count == 1)
        #expect(beacons[0]["minor"] as? Int == 8)
        #expect((report["template"] as? [String: Any])?["matchesTemplate"] as? Bool == true)
    }

    @Test func importListsCandidatesAndRefusesWhatCannotBePatched() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let two = try scratch.write("two.hex", Self.firmware(extraBlockAt: 0x400))
        var run = ToolRun(["template", "import", two, "--name", "t", "-o", scratch.path("t")])
        #expect(run.status == 65)
        #expect(run.diagnostics.contains("2 iBeacon blocks found; one must be chosen:\n  0x200: iBeacon"))
        #expect(run.diagnostics.contains("\n  0x400: iBeacon"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("t")))
        // The block chosen, the other is named: every station keeps it as it is.
        run = ToolRun(["template", "import", two, "--name", "t", "-o", scratch.path("t"), "--address", "0x400"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            run.output.contains(
                "  note: the image also holds iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 major 1 minor 2 power -59 dBm (flags 0x06) at 0x200; every station keeps it unchanged, so the firmware must advertise the block at 0x400\n"
            ), "\(run.output)")
        let empty = try scratch.write("none.hex", ":0400000001020304F2\n:00000001FF\n")
        run = ToolRun(["template", "import", empty, "--name", "n", "-o", scratch.path("n")])
        #expect(run.status == 65)
        #expect(run.diagnostics.contains("no iBeacon advertising block"))
        #expect(run.diagnostics.contains("hint: firmware that assembles its advertising data at run time"))
        #expect(ToolRun(["template", "import", two, "--name", "../x"]).status == 64)
        #expect(ToolRun(["template", "import", two, "--name", "x", "--chip", "CC1234"]).status == 64)
    }

    /// `template import` checks both of its outputs before writing either, and never replaces a
    /// file of the folder without --force: a folder at template.json used to fail only after the
    /// user's image.hex was replaced, and an image.hex with no template.json beside it was
    /// replaced silently.
    @Test func importChecksItsOutputsAndReplacesNothingWithoutForce() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("fw.hex", Self.firmware())
        let mine = Array("the user's own image\n".utf8)
        // t1: a folder where template.json goes, and the user's image.hex.
        try FileManager.default.createDirectory(
            atPath: scratch.path("t1/template.json"), withIntermediateDirectories: true)
        _ = try scratch.write("t1/image.hex", "the user's own image\n")
        for force in [[], ["--force"]] {
            let run = ToolRun(["template", "import", image, "--name", "t", "-o", scratch.path("t1")] + force)
            #expect(run.status == 64, "\(run.diagnostics)")
            #expect(run.diagnostics.contains("template.json' is a folder"), "\(run.diagnostics)")
            #expect(try scratch.bytes("t1/image.hex") == mine, "nothing written before the folder was found")
        }
        // t2: an image.hex and no template.json.
        _ = try FileManager.default.createDirectory(atPath: scratch.path("t2"), withIntermediateDirectories: false)
        _ = try scratch.write("t2/image.hex", "the user's own image\n")
        var run = ToolRun(["template", "import", image, "--name", "t", "-o", scratch.path("t2")])
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("already holds image.hex"), "\(run.diagnostics)")
        #expect(run.diagnostics.contains("hint: choose another -o DIR, or add --force to replace it"))
        #expect(try scratch.bytes("t2/image.hex") == mine)
        #expect(!FileManager.default.fileExists(atPath: scratch.path("t2/template.json")))
        run = ToolRun(["template", "import", image, "--name", "t", "-o", scratch.path("t2"), "--force"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(try scratch.bytes("t2/image.hex") == scratch.bytes("fw.hex"))
        // A template.json alone is a template too.
        _ = try FileManager.default.createDirectory(atPath: scratch.path("t3"), withIntermediateDirectories: false)
        _ = try scratch.write("t3/template.json", "{}")
        run = ToolRun(["template", "import", image, "--name", "t", "-o", scratch.path("t3")])
        #expect(run.status == 1 && run.diagnostics.contains("already holds a template"), "\(run.diagnostics)")
        #expect(try scratch.bytes("t3/template.json") == Array("{}".utf8))
        // -o naming a file is a usage error.
        run = ToolRun(["template", "import", image, "--name", "t", "-o", scratch.path("fw.hex")])
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("is not a folder"), "\(run.diagnostics)")
        #expect(try scratch.bytes("fw.hex") == Array(Self.firmware().utf8))
    }

    @Test func generateNeedsOneTemplateAndAValidIdentity() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let identity = ["--uuid", Self.uuid, "--major", "1", "--minor", "2", "-o", scratch.path("o.hex")]
        #expect(ToolRun(["generate"] + identity).status == 64)
        #expect(ToolRun(["generate", "--template", "cc2541-ibeacon", "--board", "hm10"] + identity).status == 64)
        let missing = ToolRun(["generate", "--template", "nope"] + identity)
        #expect(missing.status == 64)
        #expect(missing.diagnostics.contains("no template 'nope'"))
        #expect(missing.diagnostics.contains("see 'ccbeacon templates'"))
        let board = ToolRun(["generate", "--board", "hm10"] + identity)
        #expect(board.status == 0)
        #expect(board.output.contains("template 'cc2541-ibeacon'"))
        let badMinor = ToolRun([
            "generate", "--board", "hm10", "--uuid", Self.uuid, "--major", "1", "--minor", "x", "-o",
            scratch.path("p.hex"),
        ])
        #expect(badMinor.status == 65)
        #expect(!FileManager.default.fileExists(atPath: scratch.path("p.hex")))
        #expect(ToolRun(["generate", "--board", "nope"] + identity).status == 64)
    }

    /// A template or board that does not exist is a usage error (64) for every command that takes
    /// one, and the message lists those that do exist.
    @Test(arguments: ["generate", "batch", "inspect", "verify", "provision"], ["--template", "--board", "folder"])
    func unknownTemplatesAndBoardsAreUsageErrors(command: String, option: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let identity = ["--uuid", Self.uuid, "--major", "1", "--minor", "2"]
        let image = scratch.path("s.hex")
        try #require(
            ToolRun(["generate", "--template", "cc2541-ibeacon"] + identity + ["-o", image]).status == 0)
        let list = try scratch.write("stations.csv", "name,uuid,major,minor\nHall A,\(Self.uuid),1,1\n")
        let arguments: [String] =
            switch command {
            case "generate": identity + ["-o", scratch.path("o.hex")]
            case "batch": [list, "-o", scratch.path("out")]
            case "inspect": [image]
            case "verify": [image] + identity
            default: [list, "--ledger", scratch.path("l.sqlite"), "--yes"]
            }
        let selection =
            switch option {
            case "folder": ["--template", scratch.path("no-such-folder")]
            default: [option, "nosuch"]
            }
        let run = ToolRun([command] + arguments + selection)
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("usage: ccbeacon \(command) "), "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                option == "--board"
                    ? "the boards are cc2541-keyfob, cc2541-sensortag, hm10, smartrf05eb-cc2541em"
                    : "the templates are cc2541-ibeacon, cc2541-ibeacon-prewhitened"), "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("o.hex")))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out")))
    }

    /// verify checks the measured power only when --power is given, so neither its help nor its
    /// JSON claim an expected default; the JSON says what the image carries instead. generate keeps
    /// its default of -59 dBm.
    @Test(arguments: [nil, "-60", "-59"])
    func verifyClaimsNoDefaultPower(power: String?) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let identity = ["--uuid", Self.uuid, "--major", "1", "--minor", "2"]
        let image = scratch.path("s.hex")
        try #require(
            ToolRun(["generate", "--template", "cc2541-ibeacon"] + identity + ["--power", "-60", "-o", image])
                .status == 0)
        let run = ToolRun(["verify", image] + identity + (power.map { ["--power", $0] } ?? []) + ["--json"])
        #expect(run.status == (power == "-59" ? 1 : 0), "\(run.output)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let expected = try #require(root["expected"] as? [String: Any])
        #expect(expected["minor"] as? Int == 2)
        #expect(expected["power"] as? Int == power.flatMap { Int($0) }, "only a power that was given is expected")
        #expect(root["powerChecked"] as? Bool == (power != nil))
        #expect((root["found"] as? [String: Any])?["power"] as? Int == -60, "what the image carries")

        let verifyHelp = ToolRun(["verify", "--help"]).output
        #expect(!verifyHelp.contains("default -59"), "\(verifyHelp)")
        #expect(verifyHelp.contains("not checked without it"))
        // Help breaks long lines: the phrase is looked for with its line breaks folded.
        #expect(
            ToolRun.folded(ToolRun(["generate", "--help"]).output).contains(
                "(default: the board's at the TX power)"))
    }

    /// Any decimal spelling of a multiple of 0.625 ms is an interval; other values are refused with
    /// the two nearest allowed ones.
    @Test(arguments: [
        ("100.6250", nil), ("0100.625", nil), ("152.50", nil), ("20.6250000", nil),
        ("100.0625", "not a multiple of 0.625 ms; the nearest are 100 and 100.625"),
    ])
    func generateTakesEveryDecimalSpellingOfAnInterval(interval: String, refusal: String?) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = ToolRun([
            "generate", "--template", "cc2541-ibeacon", "--uuid", Self.uuid, "--major", "1", "--minor", "2",
            "--interval", interval, "-o", scratch.path("s.hex"),
        ])
        if let refusal {
            #expect(run.status == 64)
            #expect(run.diagnostics.contains(refusal), "\(run.diagnostics)")
        } else {
            #expect(run.status == 0, "\(run.diagnostics)")
        }
    }

    @Test func changedTemplateImageIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("fw.hex", Self.firmware())
        #expect(ToolRun(["template", "import", image, "--name", "lab", "-o", scratch.path("lab")]).status == 0)
        var text = try scratch.bytes("lab/image.hex")
        text.insert(contentsOf: Array("\r\n".utf8), at: 0)  // still valid HEX, but not the same file
        try Data(text).write(to: scratch.url.appendingPathComponent("lab/image.hex"))
        let run = ToolRun([
            "generate", "--template", scratch.path("lab"), "--uuid", Self.uuid, "--major", "1", "--minor", "2", "-o",
            scratch.path("o.hex"),
        ])
        #expect(run.status == 65)
        #expect(run.diagnostics.contains("has changed since the template was made"))
        #expect(run.diagnostics.contains("hint: the image was edited or replaced; re-import it"))
    }

    /// An image that is a link to the folder's own template.json is said to be that file, as a
    /// manifest naming template.json as its image is; it was "changed since the template was made".
    @Test func anImageLinkedToTheManifestIsSaidToBeIt() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("fw.hex", Self.firmware())
        #expect(ToolRun(["template", "import", image, "--name", "lab", "-o", scratch.path("lab")]).status == 0)
        try FileManager.default.removeItem(atPath: scratch.path("lab/image.hex"))
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("lab/image.hex"), withDestinationPath: "template.json")
        let run = ToolRun([
            "generate", "--template", scratch.path("lab"), "--uuid", Self.uuid, "--major", "1", "--minor", "2", "-o",
            scratch.path("o.hex"),
        ])
        #expect(run.status == 65, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "\(scratch.path("lab/image.hex")) is \(scratch.path("lab/template.json")) itself (a link to it), not a firmware image\nhint: put the firmware image there"
            ),
            "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("o.hex")))
    }

    @Test func batchChecksTheWholeListBeforeWritingAnything() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write(
            "s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\nb,\(Self.uuid),1,1\nc,\(Self.uuid),99999,1\n")
        let run = ToolRun(["batch", list, "--board", "hm10", "-o", scratch.path("out")])
        #expect(run.status == 65)
        #expect(run.diagnostics.contains("\(list) has 2 problems; nothing was written:\n"))
        #expect(
            run.diagnostics.contains(
                "\(list):3:3: uuid: station 'b' has the same UUID, major and minor as 'a' on line 2"))
        #expect(run.diagnostics.contains("\(list):4:40: major: '99999' is out of range"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out")))
        #expect(ToolRun(["batch", list, "--board", "hm10", "-o", scratch.path("out"), "--jobs", "0"]).status == 64)
    }

    @Test func batchWritesStationsAndTheRecord() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write(
            "s.json",
            "[{\"name\": \"Hall A\", \"uuid\": \"\(Self.uuid)\", \"major\": 1, \"minor\": 2}, {\"name\": \"Hall B\", \"uuid\": \"\(Self.uuid)\", \"major\": 1, \"minor\": 3, \"power\": -60}]"
        )
        let run = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out"), "--jobs", "2"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            run.output.contains(
                "2 stations from template 'cc2541-ibeacon' in \(scratch.path("out"))/: 2 written, 0 replaced, 0 unchanged"
            ))
        #expect(run.diagnostics.contains("generating: 2/2 (100%)"))
        #expect(
            ToolRun([
                "verify", scratch.path("out/Hall_B.hex"), "--uuid", Self.uuid, "--major", "1", "--minor", "3",
                "--power", "-60", "--template", "cc2541-ibeacon",
            ]).status == 0)
        let record = try #require(
            try JSONSerialization.jsonObject(with: Data(try scratch.bytes("out/stations.json"))) as? [String: Any])
        let stations = try #require(record["stations"] as? [[String: Any]])
        #expect(stations.map { $0["file"] as? String } == ["Hall_A.hex", "Hall_B.hex"])
        let again = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out")])
        #expect(again.output.contains("0 written, 0 replaced, 2 unchanged"))
    }

    /// --address, --interval and --tx-power on the bundled template: generate reports them, verify
    /// checks them, inspect lists them; values the spec or the chip does not allow are refused.
    @Test func generateAndVerifyTheAdvertisingSettings() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let identity = ["--uuid", Self.uuid, "--major", "1", "--minor", "2"]
        let station = scratch.path("s.hex")
        let settings = ["--address", "C0:FF:EE:12:34:56", "--interval", "152.5", "--tx-power", "-20"]
        let run = ToolRun(["generate", "--template", "cc2541-ibeacon"] + identity + settings + ["-o", station])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("\nadvertiser address C0:FF:EE:12:34:56 (random static)\n"))
        #expect(run.output.contains("\nadvertising interval 4995 ticks at 32753 Hz ≈ 152.5 ms\n"))
        #expect(run.output.contains("\nTX power -20 dBm (TXPOWER 0x41)\n"))
        let verify = ["verify", station, "--template", "cc2541-ibeacon"] + identity
        #expect(ToolRun(verify + settings).status == 0)
        let wrong = ToolRun(verify + ["--interval", "100", "--tx-power", "0"])
        #expect(wrong.status == 1)
        #expect(wrong.output.contains("  advertising interval: expected 100 ms (3276 ticks), found 4995 ticks\n"))
        #expect(wrong.output.contains("  TX power: expected 0 dBm, found register 0x41 (-20 dBm)\n"))
        #expect(
            ToolRun(["verify", station] + identity + ["--tx-power", "0"]).status == 64, "settings need a template")
        let fast = ToolRun(
            ["generate", "--template", "cc2541-ibeacon"] + identity + ["--interval", "20", "-o", scratch.path("f.hex")])
        #expect(fast.status == 0)
        #expect(fast.output.contains("note: 20 ms is below 100 ms, the Bluetooth 4.x minimum"))
        #expect(!run.output.contains("note:"), "152.5 ms needs no note")
        let inspect = ToolRun(["inspect", station, "--template", "cc2541-ibeacon"])
        #expect(inspect.output.contains("  advertiser address C0:FF:EE:12:34:56 (random static)\n"))
        let json = ToolRun(["inspect", station, "--template", "cc2541-ibeacon", "--json"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let found = try #require((root["template"] as? [String: Any])?["settings"] as? [String: Any])
        #expect(found["address"] as? String == "C0:FF:EE:12:34:56")
        #expect(found["intervalTicks"] as? Int == 4995 && found["tickHz"] as? Int == 32753)
        #expect(found["intervalMicroseconds"] as? Int == 152_505, "4995 ticks of 32.753 kHz")
        #expect(found["txPowerRegister"] as? String == "0x41" && found["txPowerDbm"] as? Int == -20)

        for (option, value, message) in [
            ("--address", "00:12:4B:00:25:41", "is not a random static address"),
            ("--address", "C0:FF:EE", "is not a device address"),
            ("--interval", "19", "outside the BLE range of 20 ms to 10240 ms"),
            ("--interval", "101", "not a multiple of 0.625 ms; the nearest are 100.625 and 101.25"),
            ("--tx-power", "-5", "-5 dBm is not a TX power step of the CC2541F256; its steps are 0, -2, -4"),
            ("--tx-power", "4", "4 dBm is not a TX power step"),
            ("--tx-power", "loud", "--tx-power 'loud' must be a whole number of dBm"),
        ] {
            let output = scratch.path("bad.hex")
            let bad = ToolRun(["generate", "--template", "cc2541-ibeacon"] + identity + [option, value, "-o", output])
            #expect(bad.status == 64, "\(option) \(value)")
            #expect(bad.diagnostics.contains(message), "\(bad.diagnostics)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    @Test func batchAppliesIntervalAndPowerAndGivesEachStationItsOwnAddress() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var csv = "name,uuid,major,minor\n"
        for minor in 1...20 { csv += "s\(minor),\(Self.uuid),7,\(minor)\n" }
        let list = try scratch.write("s.csv", csv)
        let run = ToolRun([
            "batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out"), "--interval", "1000",
            "--tx-power", "-8",
        ])
        #expect(run.status == 0, "\(run.diagnostics)")
        let record = try #require(
            try JSONSerialization.jsonObject(with: Data(try scratch.bytes("out/stations.json"))) as? [String: Any])
        let stations = try #require(record["stations"] as? [[String: Any]])
        #expect(stations.count == 20)
        #expect(stations.allSatisfy { $0["intervalTicks"] as? Int == 32753 && $0["txPower"] as? Int == -8 })
        let addresses = stations.compactMap { $0["address"] as? String }
        #expect(Set(addresses).count == 20, "every station its own address")
        for (index, station) in stations.enumerated() {
            let verify = ToolRun([
                "verify", scratch.path("out/s\(index + 1).hex"), "--template", "cc2541-ibeacon", "--uuid", Self.uuid,
                "--major", "7", "--minor", "\(index + 1)", "--address", addresses[index], "--interval", "1000",
                "--tx-power", "-8",
            ])
            #expect(verify.status == 0, "\(station) \(verify.output)")
        }
        let sameAddress = ToolRun([
            "batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("x"), "--address", "C0:00:00:00:00:01",
        ])
        #expect(sameAddress.status == 64, "one address for a whole batch is refused")
        #expect(
            sameAddress.diagnostics.contains("--address does not apply to batch: one address would go to every station")
        )
        #expect(sameAddress.diagnostics.contains("the list's address column"))
    }

    /// A list's address column: each station advertises as given; a clash with another station
    /// (given or derived) is refused before anything is written, naming both.
    @Test func batchTakesAddressesFromTheList() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let derivedForB = try #require(
            (try? BeaconPayload.IBeacon(uuid: Self.uuid, major: "1", minor: "2")).map {
                FirmwareTemplate.StationTemplate.derivedAddress(for: $0).description
            })
        let list = try scratch.write(
            "s.csv", "name,uuid,major,minor,address\nA,\(Self.uuid),1,1,C0:FF:EE:00:00:01\nB,\(Self.uuid),1,2,\n")
        let run = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out")])
        #expect(run.status == 0, "\(run.diagnostics)")
        let record = try #require(
            try JSONSerialization.jsonObject(with: Data(try scratch.bytes("out/stations.json"))) as? [String: Any])
        let stations = try #require(record["stations"] as? [[String: Any]])
        #expect(stations.map { $0["address"] as? String } == ["C0:FF:EE:00:00:01", derivedForB])

        let clash = try scratch.write(
            "c.csv", "name,uuid,major,minor,address\nA,\(Self.uuid),1,1,\(derivedForB)\nB,\(Self.uuid),1,2,\n")
        let refused = ToolRun(["batch", clash, "--template", "cc2541-ibeacon", "-o", scratch.path("clash")])
        #expect(refused.status == 65)
        #expect(
            refused.diagnostics.contains(
                "\(clash):3:1: stations 'A' (line 2) and 'B' would both advertise as \(derivedForB); give one of them another address"
            ))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("clash")))

        // A JSON list on one line: the stations are told apart by their elements, not their line,
        // and the message points at the second station's element.
        let first = #"[{"name":"A","uuid":"\#(Self.uuid)","major":1,"minor":1,"address":"\#(derivedForB)"},"#
        let oneLine = try scratch.write("c.json", first + #"{"name":"B","uuid":"\#(Self.uuid)","major":1,"minor":2}]"#)
        let refusedJSON = ToolRun(["batch", oneLine, "--template", "cc2541-ibeacon", "-o", scratch.path("clash")])
        #expect(refusedJSON.status == 65)
        #expect(
            refusedJSON.diagnostics.contains(
                "\n  \(oneLine):1:\(first.count + 1): [1]: stations 'A' (line 1 at [0]) and 'B' would both advertise as \(derivedForB); give one of them another address\n"
            ))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("clash")))
    }
}

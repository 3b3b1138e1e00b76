import Foundation
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI

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

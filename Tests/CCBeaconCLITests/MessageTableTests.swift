import Foundation
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// Where a message is the contract, it is checked whole: each command line with its exit status
/// and every byte it writes to standard error (`%` stands for a folder holding `bad.csv`,
/// and is taken out of the message again). A usage error's message is followed by the command's
/// usage block, which comes from its table (checked on its own in `CommandTableTests`).
struct MessageTableTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let status: Int32
        let message: String
        /// The message is a usage error's, followed by the command's usage.
        var withUsage: Bool { status == 64 }
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    static let cases: [Case] = [
        Case(
            arguments: ["encode"], status: 64,
            message: "ccbeacon encode: missing --uuid UUID: proximity UUID (8-4-4-4-12 or 32 hex digits)\n"),
        Case(
            arguments: ["encode", "--nope"], status: 64,
            message: "ccbeacon encode: unknown option '--nope' (did you mean '--type'?)\n"),
        Case(
            arguments: ["encode", "--uuid", uuid, "--major", "1", "--minor", "2", "--ledger"], status: 64,
            message: "ccbeacon encode: unknown option '--ledger'\n"),
        Case(
            arguments: ["flash", "x.hex", "--verify", "none2"], status: 64,
            message: "ccbeacon flash: --verify must be crc, read or none, not 'none2'\n"),
        Case(
            arguments: ["completions", "tcsh"], status: 64,
            message: "ccbeacon completions: no completion for 'tcsh'; give bash, zsh or fish\n"),
        Case(
            arguments: [
                "generate", "--board", "nope", "--uuid", uuid, "--major", "1", "--minor", "1", "-o", "%/o.hex",
            ], status: 64,
            message:
                "ccbeacon generate: no board 'nope'; the boards are cc2541-keyfob, cc2541-sensortag, hm10, smartrf05eb-cc2541em (see 'ccbeacon boards')\n"
        ),
        Case(
            arguments: [
                "generate", "--template", "cc2541-ibeacon", "--uuid", uuid, "--major", "1", "--minor", "2",
                "--interval", "101", "-o", "%/o.hex",
            ], status: 64,
            message:
                "ccbeacon generate: advertising interval 101 ms is not a multiple of 0.625 ms; the nearest are 100.625 and 101.25\n"
        ),
        // --templates only says where templates are looked for: where nothing looks, it is refused
        // rather than ignored.
        Case(
            arguments: ["inspect", "%/s.hex", "--templates", "%"], status: 64,
            message:
                "ccbeacon inspect: --templates DIR says where --template, --board or --battery look for templates; give one of them, or leave --templates out\n"
        ),
        Case(
            arguments: [
                "verify", "%/s.hex", "--uuid", uuid, "--major", "1", "--minor", "2", "--templates", "%",
            ], status: 64,
            message:
                "ccbeacon verify: --templates DIR says where --template or --board look for templates; give one of them, or leave --templates out\n"
        ),
        // --base places a .bin: beside a HEX image it is refused, in one wording, before the
        // image (here a file that does not exist) is read or a debugger opened.
        Case(
            arguments: ["inspect", "%/none.hex", "--base", "0x100"], status: 64,
            message: "ccbeacon inspect: --base applies to .bin images only; a HEX file carries its own addresses\n"),
        Case(
            arguments: ["flash", "%/none.hex", "--base", "0x100"], status: 64,
            message: "ccbeacon flash: --base applies to .bin images only; a HEX file carries its own addresses\n"),
        Case(
            arguments: ["verify", "%/none.hex", "--uuid", uuid, "--major", "1", "--minor", "2", "--base", "0"],
            status: 64,
            message: "ccbeacon verify: --base applies to .bin images only; a HEX file carries its own addresses\n"),
        Case(
            arguments: [
                "template", "import", "%/none.hex", "--name", "t", "--chip", "CC2541", "--base", "0", "-o", "%/t",
            ], status: 64,
            message:
                "ccbeacon template import: --base applies to .bin images only; a HEX file carries its own addresses\n"
        ),
        Case(
            arguments: ["convert", "%/none.hex", "-o", "%/o.bin", "--base", "0"], status: 64,
            message: "ccbeacon convert: --base applies to .bin images only; a HEX file carries its own addresses\n"),
        Case(
            arguments: ["encode", "--uuid", "x", "--major", "1", "--minor", "2"], status: 65,
            message:
                "ccbeacon encode: error: uuid: 'x' contains 'x' at position 1, which is not a hex digit; allowed: 8-4-4-4-12 hex digits (7634A485-1732-4B7D-AB44-D505D8A24C60) or 32 hex digits, any case\n"
        ),
        Case(
            arguments: ["encode", "--uuid", uuid, "--major", "70000", "--minor", "2"], status: 65,
            message:
                "ccbeacon encode: error: major: '70000' is out of range; allowed: 0…65535 (decimal) or 0x0000…0xFFFF (hex)\n"
        ),
        Case(
            arguments: ["ledger", "migrate", "--from", "%/l.sqlite", "--to", ""], status: 64,
            message: "ccbeacon ledger migrate: --to needs a file or a postgresql:// URL, not an empty text\n"),
        Case(
            arguments: ["ledger", "migrate", "--from", "%/l.sqlite", "--to", "%/bad.csv/copy.sqlite"], status: 1,
            message:
                "ccbeacon ledger migrate: error: cannot write 'bad.csv/copy.sqlite': 'bad.csv' is not a folder\nhint: choose another output path ('bad.csv' is a file of its own); nothing was written\n"
        ),
        // A path given as an empty text (`-o "$UNSET"`) names no file: said so, before anything.
        Case(
            arguments: ["ledger", "export", "--ledger", "%/l.sqlite", "-o", ""], status: 64,
            message: "ccbeacon ledger export: --output needs a path, not an empty text\n"),
        Case(
            arguments: ["batch", "%/bad.csv", "--board", "hm10", "-o", ""], status: 64,
            message: "ccbeacon batch: --output needs a path, not an empty text\n"),
        Case(
            arguments: ["batch", "", "--board", "hm10", "-o", "%/out"], status: 64,
            message: "ccbeacon batch: STATIONS file needs a path, not an empty text\n"),
        Case(
            arguments: ["check-app", "", "%/bad.csv"], status: 64,
            message: "ccbeacon check-app: REGIONS needs a path, not an empty text\n"),
        // An identity option other than --major or --minor names itself, not the field it fills.
        Case(
            arguments: [
                "plan", "%/bad.csv", "--uuid", uuid, "--major", "1", "--first-minor", "65536", "-o", "%/p.csv",
            ],
            status: 65,
            message:
                "ccbeacon plan: error: --first-minor: '65536' is out of range; allowed: 0…65535 (decimal) or 0x0000…0xFFFF (hex)\n"
        ),
        Case(
            arguments: ["batch", "%/bad.csv", "--board", "hm10", "-o", "%/out"], status: 65,
            message: """
                ccbeacon batch: error: bad.csv has 3 problems; nothing was written:
                  bad.csv:2:42: minor: '70000' is out of range; allowed: 0…65535 (decimal) or 0x0000…0xFFFF (hex)
                  bad.csv:3:3: uuid: 'not-a-uuid' contains 'n' at position 1, which is not a hex digit; allowed: 8-4-4-4-12 hex digits (7634A485-1732-4B7D-AB44-D505D8A24C60) or 32 hex digits, any case
                  bad.csv:4:1: name: holds U+200D (zero-width joiner) at character 3; names may hold no control character, line break or invisible character (bidirectional controls among them)
                hint: fix the list and run again

                """),
    ]

    @Test(arguments: cases)
    func theMessageIsExactly(_ entry: Case) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write(
            "bad.csv",
            "name,uuid,major,minor\nA,\(Self.uuid),1,70000\nB,not-a-uuid,1,2\nC \u{200D}x,\(Self.uuid),1,3\n")
        let folder = scratch.url.path
        let run = ToolRun(entry.arguments.map { $0.replacing("%", with: folder) })
        var expected = entry.message
        if entry.withUsage {
            // A command of two words (`template import`) is named by both.
            let spec = try #require(
                CommandLineTool.commands.first { $0.name == entry.arguments.prefix(2).joined(separator: " ") }
                    ?? CommandLineTool.commands.first { $0.name == entry.arguments[0] })
            // The usage block as help lays it out (checked against the table in CommandTableTests).
            let usage = try #require(CommandLineTool.usageLines(of: spec.name)).joined(separator: "\n")
            expected += "\(usage)\nrun 'ccbeacon help \(spec.name)' for details\n"
        }
        #expect(run.status == entry.status)
        #expect(run.diagnostics.replacing(folder + "/", with: "") == expected)
        #expect(run.output.isEmpty)
    }
}

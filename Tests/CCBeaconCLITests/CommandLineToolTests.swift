import BeaconScan
import CCDebugger
import Checksums
import Foundation
import Provisioning
import StationLedger
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit
@testable import IntelHex

/// Runs the tool in process with captured stdout and stderr.
struct ToolRun {
    /// `text` with every run of white space one space: a usage or a help's phrase as written,
    /// whatever lines help broke it into.
    static func folded(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    var status: Int32
    var output: String
    var diagnostics: String

    init(
        _ arguments: [String], debuggers: (any DebuggerProvider)? = nil, radios: (any HCIControllerProvider)? = nil
    ) {
        let output = Mutex("")
        let diagnostics = Mutex("")
        // A provision runs as a process of its own would: its run in the ledger names a process
        // that lives while it runs and is gone after, as a command's process is.
        let standIn = arguments.first == "provision" ? ProcessStandIn() : nil
        defer { standIn?.end() }
        status = CommandLineTool.run(
            arguments,
            console: Console(
                output: { text in output.withLock { $0 += text } },
                diagnostics: { text in diagnostics.withLock { $0 += text } }), debuggers: debuggers, radios: radios,
            process: standIn.map {
                RunIdentity(host: RunIdentity.current.host, process: Int($0.pid), machine: RunIdentity.current.machine)
            } ?? .current)
        self.output = output.withLock { $0 }
        self.diagnostics = diagnostics.withLock { $0 }
    }
}

/// A fresh temporary directory per test.
typealias Scratch = TemporaryFolder

struct EncodeCommandTests {
    static let seed = [
        "--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "1", "--minor", "2", "--power", "-51",
    ]

    @Test func encodesTheSeedExampleAsHex() {
        let run = ToolRun(["encode"] + Self.seed)
        #expect(run.status == 0)
        #expect(
            run.output == "02 01 06 1A FF 4C 00 02 15 76 34 A4 85 17 32 4B 7D AB 44 D5 05 D8 A2 4C 60 00 01 00 02 CD\n")
        #expect(run.diagnostics == "")
    }

    /// `--format air` prints the on-air packet of stackfree-ble.md §4.4 (AirLocate UUID, 1/2, -59 dBm).
    @Test func encodesTheOnAirPacket() {
        let identity = ["--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "1", "--minor", "2"]
        let all = ToolRun(["encode"] + identity + ["--format", "air", "--address", "C0:FF:EE:12:34:56"])
        #expect(all.status == 0, "\(all.diagnostics)")
        let lines = all.output.split(separator: "\n")
        #expect(lines.count == 5)
        #expect(lines.first?.hasPrefix("pdu  42 24 56 34 12 EE FF C0 02 01 06 1A FF 4C 00 02 15 E2 C5") == true)
        #expect(lines.dropFirst().first == "crc  32 0F 25")
        let one = ToolRun(
            ["encode"] + identity + ["--format", "air", "--address", "c0:ff:ee:12:34:56", "--channel", "39"])
        #expect(one.output.hasPrefix("5D 13 1C 6B 97 18 63 5A"))
        #expect(one.output.hasSuffix("A3 F8 95 69 95\n"))
        #expect(lines.last == "ch39 " + one.output.dropLast())
    }

    @Test(arguments: [
        (["--format", "air"], "--format air needs --address"),
        (["--format", "air", "--address", "00:FF:EE:12:34:56"], "is not a random static address"),
        (["--format", "air", "--address", "C0:FF:EE:12:34"], "write 6 bytes as XX:XX:XX:XX:XX:XX"),
        (["--format", "air", "--address", "FF:FF:FF:FF:FF:FF"], "its 46 random bits must not be all 0 or all 1"),
        (
            ["--format", "air", "--address", "C0:FF:EE:12:34:56", "--channel", "36"],
            "--channel must be 37, 38 or 39, not '36'"
        ),
        (["--channel", "37"], "--channel applies to --format air only"),
    ])
    func refusesBadAirOptions(extra: [String], message: String) {
        let run = ToolRun(["encode"] + Self.seed + extra)
        #expect(run.status == 64)
        #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
    }

    @Test func encodesAsCArray() {
        let run = ToolRun(["encode"] + Self.seed + ["--format", "c", "--flags", "0x04"])
        #expect(run.status == 0)
        #expect(
            run.output == """
                /* iBeacon 7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 2 power -51 dBm, 30 bytes (ccbeacon encode) */
                static uint8 advertData[30] =
                {
                  0x02, 0x01, 0x04, 0x1A, 0xFF, 0x4C, 0x00, 0x02,
                  0x15, 0x76, 0x34, 0xA4, 0x85, 0x17, 0x32, 0x4B,
                  0x7D, 0xAB, 0x44, 0xD5, 0x05, 0xD8, 0xA2, 0x4C,
                  0x60, 0x00, 0x01, 0x00, 0x02, 0xCD
                };

                """)
    }

    @Test func encodesAsJSON() throws {
        let run = ToolRun(["encode"] + Self.seed + ["--format=json"])
        #expect(run.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "ibeacon")
        #expect(object["uuid"] as? String == "7634A485-1732-4B7D-AB44-D505D8A24C60")
        #expect(object["major"] as? Int == 1)
        #expect(object["power"] as? Int == -51)
        #expect(object["length"] as? Int == 30)
        #expect(object["hex"] as? String == "0201061AFF4C0002157634A48517324B7DAB44D505D8A24C6000010002CD")
    }

    @Test func flagsNoneOmitsTheFlagsAD() {
        let run = ToolRun(["encode"] + Self.seed + ["--flags", "none"])
        #expect(run.output.hasPrefix("1A FF 4C 00 02 15"))
    }

    @Test func encodesSiblingFormats() {
        let alt = ToolRun(["encode", "--type", "altbeacon"] + Self.seed)
        #expect(
            alt.output
                == "02 01 06 1B FF 18 01 BE AC 76 34 A4 85 17 32 4B 7D AB 44 D5 05 D8 A2 4C 60 00 01 00 02 CD 00\n")
        let uid = ToolRun(
            [
                "encode", "--type", "eddystone-uid", "--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "1",
                "--minor", "2", "--power", "-10",
            ])
        #expect(
            uid.output
                == "02 01 06 03 03 AA FE 17 16 AA FE 00 F6 76 34 A4 85 D5 05 D8 A2 4C 60 00 00 00 01 00 02 00 00\n")
        let explicit = ToolRun(
            [
                "encode", "--type", "eddystone-uid", "--namespace", "7634A485D505D8A24C60", "--instance",
                "0x000000010002", "--power", "-10",
            ])
        #expect(explicit.output == uid.output)
        let url = ToolRun(["encode", "--type", "eddystone-url", "--url", "https://ti.com", "--power", "0"])
        #expect(url.output == "02 01 06 03 03 AA FE 09 16 AA FE 10 00 03 74 69 07\n")
    }

    @Test(arguments: [
        (
            ["--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "1", "--minor", "70000"], Int32(65),
            "ccbeacon encode: error: minor: '70000' is out of range; allowed: 0…65535 (decimal) or 0x0000…0xFFFF (hex)\n"
        ),
        (
            ["--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "1"], 64,
            "ccbeacon encode: missing --minor N: minor, 0…65535 or 0x hex\n"
        ),
        (
            ["--type", "ibeacon", "--url", "https://x.com"], 64,
            "ccbeacon encode: --url does not apply to --type ibeacon\n"
        ),
        (
            ["--type", "bluetooth"], 64,
            "ccbeacon encode: --type 'bluetooth' is not a beacon type; use ibeacon, altbeacon, eddystone-uid or eddystone-url\n"
        ),
        (["--format", "xml"], 64, "ccbeacon encode: --format must be hex, c, json or air, not 'xml'\n"),
        (
            ["--type", "eddystone-url", "--url", "https://example.com/a-very-long-path"], 65,
            "ccbeacon encode: error: cannot encode 'https://example.com/a-very-long-path' as an Eddystone-URL: it needs 24 bytes after compression, at most 17 fit; use a URL shortener\n"
        ),
        (
            ["--type", "eddystone-url", "--url", "https://x.com", "--power", "30"], 65,
            "ccbeacon encode: error: power: '30' is out of range; allowed: signed dBm -100…20, or a 0x byte (0xC5 = -59)\n"
        ),
        (
            [
                "--type", "eddystone-uid", "--namespace", "00112233445566778899", "--uuid",
                "7634A485-1732-4B7D-AB44-D505D8A24C60",
            ], 64,
            "ccbeacon encode: give either --namespace and --instance, or --uuid, --major and --minor\n"
        ),
    ])
    func rejectsBadInput(arguments: [String], status: Int32, firstLine: String) {
        let run = ToolRun(["encode"] + arguments)
        #expect(run.status == status)
        #expect(run.output == "")
        #expect(run.diagnostics.hasPrefix(firstLine))
        if status == 64 { #expect(run.diagnostics.contains("usage: ccbeacon encode")) }
    }
}

struct ConvertAndPatchCommandTests {
    static let sample =
        ":10010000000102030405060708090a0b0c0d0e0f77\r\n:10011000101112131415161718191a1b1c1d1e1f67\r\n:040000050000011dd9\r\n:00000001ff\r\n"

    /// One byte is counted as one: `1 data byte`, not `1 data bytes`.
    @Test func oneByteIsSaidInTheSingular() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let input = try scratch.write("one.hex", ":0100000042BD\n:00000001FF\n")
        let run = ToolRun(["convert", input, "-o", scratch.path("one.bin")])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output == "wrote \(scratch.path("one.bin")): 1 data byte in 1 segment, 0x00000-0x00000, 1 byte\n")
        let inspect = ToolRun(["inspect", input])
        #expect(inspect.output.hasPrefix("\(input): 1 data byte, 0x0-0x0\n"), "\(inspect.output)")
    }

    @Test func hexToBinToHexRoundTrip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let input = try scratch.write("in.hex", Self.sample)
        var run = ToolRun(["convert", input, "-o", scratch.path("out.bin")])
        #expect(run.status == 0)
        #expect(run.output.contains("32 data bytes in 1 segment, 0x00100-0x0011F"))
        #expect(try scratch.bytes("out.bin") == Array(0..<32))
        run = ToolRun([
            "convert", scratch.path("out.bin"), "--base", "0x100", "-o", scratch.path("back.hex"), "--record-length",
            "32",
        ])
        #expect(run.status == 0)
        let back = try IntelHexFile(text: try scratch.bytes("back.hex"))
        #expect(back.memory == (try IntelHexFile(string: Self.sample)).memory)
        #expect(back.records.count == 2)
    }

    @Test func rangeAndFill() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let input = try scratch.write("in.hex", Self.sample)
        #expect(
            ToolRun(["convert", input, "-o", scratch.path("r.bin"), "--range", "0xFE:0x102", "--fill", "0"]).status == 0
        )
        #expect(try scratch.bytes("r.bin") == [0, 0, 0, 1])
        #expect(
            ToolRun(["convert", input, "-o", scratch.path("f.hex"), "--range", "0x11E:0x124", "--fill", "0xEE"]).status
                == 0)
        let filled = try IntelHexFile(text: try scratch.bytes("f.hex"))
        #expect(filled.memory.contiguousBytes(in: 0x11E..<0x124) == [0x1E, 0x1F, 0xEE, 0xEE, 0xEE, 0xEE])
        #expect(filled.startAddress == .linear(0x11D))
    }

    @Test func malformedInputExits65WithFileLineColumn() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let input = try scratch.write("bad.hex", ":0401000000010203F5\n:0401000000010G03F5\n:00000001FF\n")
        let run = ToolRun(["convert", input, "-o", scratch.path("out.bin")])
        #expect(run.status == 65)
        #expect(
            run.diagnostics.hasPrefix(
                "ccbeacon convert: error: \(input):2:15: expected a hexadecimal digit (0-9, A-F, a-f), found 'G'\nhint: "
            ))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out.bin")))
    }

    @Test(arguments: [
        (
            ["convert", "in.hex", "-o", "out.txt"], Int32(64),
            "cannot tell the format of output 'out.txt' from its extension; use .hex (Intel HEX) or .bin"
        ),
        (["convert", "in.hex"], 64, "missing -o OUT: output file (.hex or .bin)"),
        (
            ["convert", "in.hex", "-o", "o.bin", "--range", "5:5"], 64,
            "--range '5:5' is empty; END is exclusive and must be greater than START"
        ),
        (
            ["convert", "in.hex", "-o", "o.bin", "--range", "0x10"], 64,
            "--range '0x10' is not a range; write START:END with END exclusive, e.g. 0:0x40000"
        ),
        (
            ["convert", "in.hex", "-o", "o.hex", "--record-length", "256"], 64,
            "--record-length '256' must be 1…255 (16 and 32 are usual)"
        ),
        (
            ["convert", "in.hex", "-o", "o.bin", "--record-length", "32"], 64,
            "--record-length applies to .hex output only"
        ),
        (
            ["convert", "in.hex", "-o", "o.bin", "--base", "0"], 64,
            "--base applies to .bin images only; a HEX file carries its own addresses"
        ),
        (
            ["convert", "in.hex", "-o", "o.bin", "--fill", "256"], 64,
            "--fill '256' is not a byte; use 0…255 or 0x00…0xFF"
        ),
        (
            ["patch", "in.hex", "-o", "o.hex", "--at", "0x100", "--bytes", "ABC"], 64,
            "--bytes 'ABC' must be a whole number of bytes (an even count of hex digits, at least 2)"
        ),
        (
            ["patch", "in.hex", "-o", "o.hex", "--at", "-1", "--bytes", "AB"], 64,
            "--at '-1' is not an address; use decimal or 0x hex from 0 to 0xFFFFFFFF"
        ),
    ])
    func usageErrors(arguments: [String], status: Int32, message: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("in.hex", Self.sample)
        let absolute = arguments.map { $0 == "in.hex" ? scratch.path($0) : $0 }
        let run = ToolRun(absolute)
        #expect(run.status == status)
        let firstLine = run.diagnostics.split(separator: "\n").first.map(String.init) ?? ""
        #expect(firstLine.hasSuffix(message), "\(run.diagnostics)")
    }

    @Test func hugeFillsAndExportsAreRefusedNotAttempted() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let input = try scratch.write("in.hex", Self.sample)
        let fill = ToolRun([
            "convert", input, "-o", scratch.path("o.hex"), "--range", "0:0x100000000", "--fill", "0xFF",
        ])
        #expect(fill.status == 65)
        #expect(fill.diagnostics.contains("--fill would add 4294967264 bytes, more than the limit of 67108864"))
        let bin = ToolRun(["convert", input, "-o", scratch.path("o.bin"), "--range", "0:0x100000000"])
        #expect(bin.status == 65)
        #expect(bin.diagnostics.contains("the binary would be 4294967296 bytes, more than the limit of 67108864 bytes"))
        let binInput = try scratch.write("in.bin", "0123456789abcdef")
        let high = ToolRun(["convert", binInput, "--base", "0xFFFFFFF8", "-o", scratch.path("o.hex")])
        #expect(high.status == 65)
        #expect(high.diagnostics.contains("do not fit below 4 GiB"))
    }

    @Test func missingInputFileIsAFailureWithAHint() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = ToolRun(["convert", scratch.path("nope.hex"), "-o", scratch.path("o.bin")])
        #expect(run.status == 1)
        #expect(
            run.diagnostics
                == "ccbeacon convert: error: cannot read '\(scratch.path("nope.hex"))': no such file\nhint: check the path\n"
        )
    }

    @Test func unwritableOutputIsAFailure() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let input = try scratch.write("in.hex", Self.sample)
        let run = ToolRun(["convert", input, "-o", scratch.path("no/such/dir/o.bin")])
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("cannot write"))
    }

    @Test func patchRewritesOnlyTheHoldingLines() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let input = try scratch.write("in.hex", Self.sample)
        let run = ToolRun(["patch", input, "--at", "0x10E", "--bytes", "AA BB CC DD", "-o", scratch.path("out.hex")])
        #expect(run.status == 0)
        #expect(run.output == "wrote \(scratch.path("out.hex")): rewrote lines 1, 2\n")
        let out = String(decoding: try scratch.bytes("out.hex"), as: UTF8.self)
        #expect(
            out
                == ":10010000000102030405060708090a0b0c0daabb2f\r\n:10011000ccdd12131415161718191a1b1c1d1e1fdf\r\n:040000050000011dd9\r\n:00000001ff\r\n"
        )
    }

    @Test func patchOutsideTheFileIsADataError() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let input = try scratch.write("in.hex", Self.sample)
        let run = ToolRun(["patch", input, "--at", "0x200", "--bytes", "AA", "-o", scratch.path("out.hex")])
        #expect(run.status == 65)
        #expect(run.diagnostics.contains("no record of the file holds address 0x0200"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out.hex")))
    }

    @Test func helpAndVersion() {
        let overview = ToolRun(["help"])
        #expect(overview.status == 0)
        for spec in CommandLineTool.commands {
            let name = spec.name
            #expect(overview.output.contains("  \(name) "))
            let help = ToolRun(name.split(separator: " ").map(String.init) + ["--help"])
            #expect(help.status == 0)
            #expect(help.output.hasPrefix("ccbeacon \(name): "))
            #expect(help.output.contains("options:"))
            #expect(help.output.contains("Example:") || help.output.contains("Examples:"))
            #expect(ToolRun(["help"] + name.split(separator: " ").map(String.init)).output == help.output)
        }
        #expect(ToolRun(["--version"]).output == "ccbeacon \(CommandLineTool.version)\n")
        let none = ToolRun([])
        #expect(none.status == 64)
        #expect(none.diagnostics.contains("run 'ccbeacon help'"))
    }

    /// A command group (`ledger`, `template`) has a help of its own that lists its subcommands;
    /// the group alone, or with a subcommand it does not have, is a usage error naming those that exist.
    @Test(arguments: [("ledger", ["show", "export", "check", "migrate"]), ("template", ["import"])])
    func commandGroupsHaveHelpAndUsage(group: String, subcommands: [String]) throws {
        let specs = try subcommands.map { sub in
            try #require(CommandLineTool.commands.first { $0.name == "\(group) \(sub)" })
        }
        let help = ToolRun(["help", group])
        #expect(help.status == 0, "\(help.diagnostics)")
        #expect(help.output.hasPrefix("ccbeacon \(group): "))
        for (sub, spec) in zip(subcommands, specs) {
            #expect(help.output.contains("\n  \(sub)  "), "\(help.output)")
            #expect(help.output.contains(spec.summary))
            // The usage as help lays it out: folded back, the table's.
            #expect(ToolRun.folded(help.output).contains(ToolRun.folded(spec.usage)))
        }
        #expect(ToolRun([group, "--help"]).output == help.output)
        #expect(ToolRun([group, "-h"]).output == help.output)

        for line in [[group], [group, "nosuch"]] {
            let run = ToolRun(line)
            #expect(run.status == 64)
            #expect(run.output == "")
            for spec in specs {
                #expect(ToolRun.folded(run.diagnostics).contains(ToolRun.folded(spec.usage)), "\(run.diagnostics)")
            }
            #expect(run.diagnostics.contains("run 'ccbeacon help \(group)'"), "\(run.diagnostics)")
        }
        #expect(
            ToolRun([group]).diagnostics.hasPrefix(
                "ccbeacon \(group): '\(group)' needs a subcommand: \(subcommands.joined(separator: ", "))\n"))
        #expect(ToolRun([group, "nosuch"]).diagnostics.contains("unknown subcommand '\(group) nosuch'"))
        #expect(ToolRun(["help", group, "nosuch"]).status == 64)
    }
}

/// `inspect` finds an OAD header by its structure and says whether its CRC still matches: a
/// header whose image changed after it was made is shown as such, never hidden or called valid.
struct InspectOADTests {
    /// A contiguous OAD image of 256 bytes at 0: header (CRC, shadow unset, version 0, 64 words,
    /// user ID "AAAA", reserved erased), then counting bytes.
    static func image() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 256)
        for index in 16..<256 { bytes[index] = UInt8(index & 0xFF) }
        bytes.replaceSubrange(
            2..<16, with: [0xFF, 0xFF, 0x00, 0x00, 64, 0x00] + Array("AAAA".utf8) + [0xFF, 0xFF, 0xFF, 0xFF])
        let crc = CRC16UMTS.checksum(bytes[4...])
        bytes[0] = UInt8(crc & 0xFF)
        bytes[1] = UInt8(crc >> 8)
        return bytes
    }

    @Test(arguments: [false, true])
    func theCRCStateIsReported(changed: Bool) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var bytes = Self.image()
        if changed { bytes[200] ^= 0x01 }
        let path = scratch.path("oad.bin")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let json = ToolRun(["inspect", path, "--json"])
        #expect(json.status == 0, "\(json.diagnostics)")
        #expect(json.output.contains("\"crcValid\": \(!changed)"), "\(json.output)")
        let text = ToolRun(["inspect", path])
        let computed = String(CRC16UMTS.checksum(bytes[4...]), radix: 16, uppercase: true)
        #expect(
            text.output.contains(
                changed
                    ? "does not match the image (computed 0x\(computed)): a boot image manager will not start it"
                    : "CRC 0x\(computed) valid"), "\(text.output)")
    }
}

import CommandLineKit
import IntelHex

/// `ccbeacon patch`: change bytes in a HEX file and keep every other line exactly.
enum PatchCommand {
    static let spec = CommandSpec(
        name: "patch", summary: "change bytes in a HEX file, rewriting only the records that hold them", manual: manual,
        table: CommandTable(
            details: """
                Writes the bytes at ADDR and rewrites only the records that hold a changed byte (their data
                digits and checksum). Everything else stays byte for byte: line endings, digit case, record
                order and lengths, blank lines, the start record. The bytes must already be in the file:
                a patch cannot add records. Prints the rewritten line numbers.

                --bytes takes hex digits, optionally 0x-prefixed, with spaces, ':' or '-' between bytes.

                Example:
                  ccbeacon patch template.hex --at 0x333 --bytes 7634A48517324B7DAB44D505D8A24C6000030004C5 -o station.hex
                """,
            options: [at.spec, bytes.spec, output.spec], positionals: [PositionalSpec("IN.hex", completion: .files)]))
    static let command = Command(spec, Arguments.self, run: run)

    static let output = Options.output("OUT.hex", help: "output HEX file").required
    static let at = Option<Int>("--at", value: "ADDR", help: "address of the first byte") {
        text throws(CommandFailure) in try Values.address(text, option: "--at")
    }.required
    static let bytes = Option<[UInt8]>("--bytes", value: "HEX", help: "the new bytes") { text throws(CommandFailure) in
        try Values.hexBytes(text, option: "--bytes")
    }.required

    /// What `patch` was asked.
    struct Arguments: CommandArguments {
        var input: String
        var output: String
        var address: Int
        var bytes: [UInt8]

        init(_ command: ParsedCommand) throws(CommandFailure) {
            input = command.positionals[0]
            output = try command.value(PatchCommand.output)
            guard try ImageFormat.of(input, role: "input") == .hex, try ImageFormat.of(output, role: "output") == .hex
            else {
                throw .usage("patch works on Intel HEX files (.hex); for .bin use 'convert' first")
            }
            address = try command.value(at)
            bytes = try command.value(PatchCommand.bytes)
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (input, output, address, bytes) = (arguments.input, arguments.output, arguments.address, arguments.bytes)
        try CommandSupport.checkOutputs([output], against: [CommandSupport.Input(role: "the input image", path: input)])
        let file = try ConvertCommand.parseHex(try FileAccess.read(input), path: input)
        let patched: PatchedHexFile
        do {
            patched = try file.patchingRecords([MemoryPatch(address: address, bytes: bytes)])
        } catch {
            throw .data(
                "\(input): \(error)",
                hint: "check --at against the file's address ranges ('ccbeacon convert' prints them)")
        }
        try FileAccess.writeAtomically(patched.file.text, to: output)
        let lines = patched.rewrittenLines
        let what =
            lines.isEmpty
            ? "no record changed (the bytes were already there)"
            : "rewrote line\(lines.count == 1 ? "" : "s") \(lines.map(String.init).joined(separator: ", "))"
        console.output(line: "wrote \(output): \(what)")
    }
}

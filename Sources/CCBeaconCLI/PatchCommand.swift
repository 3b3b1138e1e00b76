import IntelHex

/// `ccbeacon patch`: change bytes in a HEX file and keep every other line exactly.
enum PatchCommand {
    static let spec = CommandSpec(
        name: "patch",
        summary: "change bytes in a HEX file, rewriting only the records that hold them",
        usage: "ccbeacon patch IN.hex --at ADDR --bytes HEX -o OUT.hex",
        details: """
            Writes the bytes at ADDR and rewrites only the records that hold a changed byte (their data
            digits and checksum). Everything else stays byte for byte: line endings, digit case, record
            order and lengths, blank lines, the start record. The bytes must already be in the file:
            a patch cannot add records. Prints the rewritten line numbers.

            --bytes takes hex digits, optionally 0x-prefixed, with spaces, ':' or '-' between bytes.

            Example:
              ccbeacon patch template.hex --at 0x333 --bytes 7634A48517324B7DAB44D505D8A24C6000030004C5 -o station.hex
            """,
        options: [
            OptionSpec("--output", short: "-o", value: "OUT", help: "output HEX file"),
            OptionSpec("--at", value: "ADDR", help: "address of the first byte"),
            OptionSpec("--bytes", value: "HEX", help: "the new bytes"),
        ],
        positionalNames: ["IN.hex"], requiredPositionals: 1)

    static func run(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        let input = command.positionals[0]
        guard let output = command.values["--output"] else { throw .usage("missing -o OUT.hex (the output file)") }
        guard let at = command.values["--at"] else { throw .usage("missing --at ADDR") }
        guard let hex = command.values["--bytes"] else { throw .usage("missing --bytes HEX") }
        guard try ImageFormat.of(input, role: "input") == .hex, try ImageFormat.of(output, role: "output") == .hex
        else {
            throw .usage("patch works on Intel HEX files (.hex); for .bin use 'convert' first")
        }
        let address = try Values.address(at, option: "--at")
        let bytes = try Values.hexBytes(hex, option: "--bytes")
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
        console.output("wrote \(output): \(what)\n")
    }
}

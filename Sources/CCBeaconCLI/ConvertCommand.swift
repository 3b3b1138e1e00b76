import CommandLineKit
import HexText
import IntelHex
import StructuredText

/// `ccbeacon convert`: HEX ↔ .bin, and HEX re-emit with a chosen record length, range or fill.
enum ConvertCommand {
    static let spec = CommandSpec(
        name: "convert", summary: "convert between Intel HEX and .bin, crop, fill, re-emit", manual: manual,
        table: CommandTable(
            details: """
                Formats follow the file extensions (.hex, .ihx, .ihex for Intel HEX; .bin for raw binary).

                  HEX → .bin   the bytes from the lowest to the highest address (or --range), gaps filled
                               with --fill (default 0xFF, erased flash).
                  .bin → HEX   the file loaded at --base (default 0); records of --record-length bytes
                               (default 16), an 04 record per 64 KiB page when above 64 KiB.
                  HEX → HEX    re-emitted: aligned records, sorted, start address kept. To change bytes
                               and keep every other line, use 'ccbeacon patch' instead.

                --range START:END keeps only that part (END exclusive, e.g. 0:0x40000 for 256 KiB).
                --fill on HEX output fills the gaps inside the range (or between lowest and highest
                address) so the output has no holes.

                A malformed input stops with its file, line and column, and exit status 65.
                The output is written atomically: it is complete or not there at all.

                Example:
                  ccbeacon convert firmware.hex -o firmware.bin --range 0:0x40000
                """,
            options: [output.spec, Options.base.spec, range.spec, fill.spec, recordLength.spec],
            positionals: [PositionalSpec("IN file", usage: "IN.hex|IN.bin", completion: .files)]))
    static let command = Command(spec, Arguments.self, run: run)

    static let output = Options.output("OUT", help: "output file (.hex or .bin)").required
    static let range = Options.range(help: "keep only these addresses (END exclusive)")
    static let fill = Option<UInt8>("--fill", value: "0xNN", help: "byte for gaps (default 0xFF for .bin output)") {
        text throws(CommandFailure) in try Values.byte(text, option: "--fill")
    }
    static let recordLength = Options.count(
        "--record-length", help: "data bytes per HEX record, 1…255", in: 1...255
    ) { "--record-length '\($0)' must be 1…255 (16 and 32 are usual)" }.defaulting(to: 16)

    /// What `convert` was asked.
    struct Arguments: CommandArguments {
        var input: ImageArgument
        var output: String
        var outputFormat: ImageFormat
        var range: Range<Int>?
        /// `nil`: 0xFF for .bin output, no filling for HEX.
        var fill: UInt8?
        var recordLength: Int
        var recordLengthGiven: Bool

        init(_ command: ParsedCommand) throws(CommandFailure) {
            input = try ImageArgument(command.positionals[0], command, role: "input")
            output = try command.value(ConvertCommand.output)
            outputFormat = try ImageFormat.of(output, role: "output")
            range = try command.value(ConvertCommand.range)
            fill = try command.value(ConvertCommand.fill)
            recordLength = try command.value(ConvertCommand.recordLength)
            recordLengthGiven = command.isGiven(ConvertCommand.recordLength)
        }

        func validate() throws(CommandFailure) {
            if recordLengthGiven, outputFormat != .hex {
                throw .usage("--record-length applies to .hex output only")
            }
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (input, output, range, fill) = (arguments.input.path, arguments.output, arguments.range, arguments.fill)
        try CommandSupport.checkOutputs([output], against: [CommandSupport.Input(role: "the input image", path: input)])
        let loaded = try arguments.input.load()
        var memory = loaded.memory
        let start = loaded.startAddress
        if let range { memory = memory.cropped(to: range) }

        let bytes: [UInt8]
        switch arguments.outputFormat {
        case .bin:
            do {
                bytes = try memory.binary(range: range, fill: fill ?? 0xFF)
            } catch {
                throw .data("cannot make '\(output)': \(error)", hint: "give --range START:END")
            }
        case .hex:
            if let fill, let span = range ?? memory.lowestAddress.flatMap({ low in memory.endAddress.map { low..<$0 } })
            {
                let added = span.count - memory.cropped(to: span).byteCount
                guard added <= MemoryImage.defaultBinarySizeLimit else {
                    throw .data(
                        "--fill would add \(added) bytes, more than the limit of \(MemoryImage.defaultBinarySizeLimit)",
                        hint: "give a smaller --range")
                }
                try? memory.fillGaps(in: span, with: fill)  // span lies within 4 GiB by construction
            }
            bytes = HexWriter(recordLength: arguments.recordLength).text(for: memory, startAddress: start)
        }
        try FileAccess.writeAtomically(bytes, to: output)
        console.output(line: "wrote \(output): \(describe(memory)), \(bytes.count) byte\(bytes.count == 1 ? "" : "s")")
    }

    /// A HEX file with its lines and records, for patching it line by line.
    static func parseHex(_ bytes: [UInt8], path: String) throws(CommandFailure) -> IntelHexFile {
        do { return try IntelHexFile(text: bytes, fileName: path) } catch { throw malformed(error) }
    }

    /// A HEX file's memory only: for commands that do not patch lines, which so never hold a
    /// table of the records beside the data (a large file would be held several times over).
    static func readHexImage(_ bytes: [UInt8], path: String) throws(CommandFailure) -> HexImage {
        do { return try HexImage(text: bytes, fileName: path) } catch { throw malformed(error) }
    }

    static func malformed(_ error: HexReadError) -> CommandFailure {
        .data(
            error.description,
            hint: "the file is not valid Intel HEX at that spot; re-export it from the toolchain or fix the line")
    }

    static func describe(_ memory: MemoryImage) -> String {
        guard let low = memory.lowestAddress, let end = memory.endAddress else { return "no data" }
        let segments = memory.segments.count
        return
            "\(memory.byteCount) data byte\(memory.byteCount == 1 ? "" : "s") in \(segments) segment\(segments == 1 ? "" : "s"), "
            + "0x\(hexAddress(low))-0x\(hexAddress(end - 1))"
    }

    static func hexAddress(_ value: Int) -> String { HexText.digits(value, width: 5) }
}

import CommandLineKit
import Storage
import StructuredText

extension ExitCode {
    /// `provision` stopped with stations of the list left: pending (failed ones included) or held.
    static let stationsLeft = ExitCode(rawValue: 3)
}

extension CommandSpec {
    /// The usage line(s) of the command as ccbeacon's, without `usage: `.
    var usage: String { usage(of: "ccbeacon") }
}

extension CommandLineTool {
    /// ccbeacon's man pages and completions, made from the command registry.
    static let manual = Manual(
        ToolDescription(
            name: "ccbeacon", version: version,
            summary: "turn one CC2541 firmware image into a fleet of iBeacon stations",
            description: """
                ccbeacon encodes each station's iBeacon identity (UUID, major, minor, measured power), patches
                it into a CC2541 firmware template (Intel HEX), writes Intel HEX or .bin for any flasher, and
                burns each station itself through a TI CC Debugger \u{2014} verified, and recorded in a ledger so
                that no identity is burned twice.
                """,
            commands: commands, overviewSections: overviewSections,
            exitStatuses: [
                ManualEntry("0", "success"),
                ManualEntry("1", "the operation failed (a device, a file, a hook)"),
                ManualEntry("3", "provision only: it stopped with stations of the list left"),
                ManualEntry("64", "usage error"),
                ManualEntry("65", "bad input data (a list, a template, a ledger), with the file, line and column"),
            ],
            files: [
                ManualEntry("/usr/share/ccbeacon", "the bundled boards/ and firmware-templates/ (or CCBEACON_DATA)"),
                ManualEntry(
                    "/usr/lib/udev/rules.d/70-ccbeacon.rules", "access to CC Debuggers for the logged-in user"),
            ],
            seeAlso: ["cc-tool"], examples: overviewExamples))
}

/// `ccbeacon completions bash|zsh|fish`.
enum CompletionsCommand {
    static let spec = CommandSpec(
        name: "completions", summary: "print a shell completion script", manual: manual,
        table: CommandTable(
            details: """
                Prints the completion script for bash, zsh or fish, made from the same option tables as
                the parser and --help: commands, options, the values of options that take a fixed set
                (--verify crc|read), and files where files go. After --template and --board the scripts
                offer what `ccbeacon templates --names` and `ccbeacon boards --names` print (run when
                you press Tab, with $CCBEACON_TEMPLATES but not a --templates given on the line). Only
                names a shell passes on as they are are offered — letters and digits of any script and
                . _ - + @ % , : =, not beginning with -, ~ or = — and the scripts never run one as code. The
                packages install them; from a checkout:

                Example:
                  ccbeacon completions bash > ~/.local/share/bash-completion/completions/ccbeacon
                """,
            options: [],
            positionals: [
                PositionalSpec(
                    "SHELL", usage: shells.joined(separator: "|"), completion: .words(shells))
            ]))
    static let command = Command(spec, Arguments.self, run: run)

    /// The shells a script is made for, each with its maker.
    static let scripts: [(shell: String, make: @Sendable () -> String)] = [
        ("bash", CommandLineTool.manual.bash), ("zsh", CommandLineTool.manual.zsh),
        ("fish", CommandLineTool.manual.fish),
    ]
    static let shells = scripts.map(\.shell)

    /// What `completions` was asked: the shell's script.
    struct Arguments: CommandArguments {
        var make: @Sendable () -> String

        init(_ command: ParsedCommand) throws(CommandFailure) {
            guard let script = scripts.first(where: { $0.shell == command.positionals[0] }) else {
                throw .usage(
                    "no completion for '\(command.positionals[0])'; give \(Option<Int>.alternatives(shells))")
            }
            make = script.make
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        console.data(arguments.make())
    }
}

/// `ccbeacon man-pages -o DIR`.
enum ManPagesCommand {
    static let spec = CommandSpec(
        name: "man-pages", summary: "write the man pages into a folder", manual: manual,
        table: CommandTable(
            details: """
                Writes ccbeacon.1 and one page per command (ccbeacon-provision.1, ccbeacon-ledger-show.1,
                …) into the folder, made from the same option tables as the parser and --help. The
                packages install them (scripts/package runs this); each file is written whole. A page of the
                same name that ccbeacon did not write (one that does not begin with its "Generated by" note)
                is never replaced: the command refuses, naming it.

                Example:
                  ccbeacon man-pages -o man/
                """,
            options: [output.spec]))
    static let output = Option<String>(
        "--output", short: "-o", value: "DIR", help: "the folder for the pages (made if missing)", completion: .folders
    ).required
    static let command = Command(spec, Arguments.self, run: run)

    /// What `man-pages` was asked: the folder.
    struct Arguments: CommandArguments {
        var folder: String

        init(_ command: ParsedCommand) throws(CommandFailure) {
            folder = try command.value(output)
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let folder = arguments.folder
        let pages =
            [("ccbeacon.1", CommandLineTool.manual.overviewPage())]
            + CommandLineTool.manual.commands.map { spec in
                (CommandLineTool.manual.pageName(spec.name) + ".1", CommandLineTool.manual.page(spec))
            }
        // Every page's path is checked before the first is written (a folder too deep for the
        // longest used to fail after ten pages).
        try CommandSupport.checkOutputs(pages.map { Files.join(folder, $0.0) }, against: [], folder: .created)
        // A page of the same name that this tool did not write (the user's own, another
        // program's) is never replaced: only a missing or empty file, or one that begins with the note.
        let note = Array(CommandLineTool.manual.generatorNote.utf8)
        for (name, _) in pages {
            let path = Files.join(folder, name)
            // (A file that cannot be read was refused above, as one that may be a station list.)
            guard let start = Files.readStart(path, limit: note.count), !start.isEmpty, start != note else { continue }
            throw .usage(
                "'\(path)' is a page ccbeacon did not write (it does not begin with \"Generated by 'ccbeacon man-pages'\"); it would be replaced: move it away, or give another folder"
            )
        }
        do { if !Files.isDirectory(folder) { try Files.createDirectory(folder) } } catch {
            throw CommandFailure(.failure, "\(error)", hint: "give -o a folder this user may write")
        }
        let files = OutputSet(clearingLeftovers: true)  // every page new, or none replaced
        for (name, text) in pages { try FileAccess.stage(Array(text.utf8), as: Files.join(folder, name), in: files) }
        try FileAccess.commit(files)
        console.output(line: "wrote \(pages.count) man pages into \(folder)")
    }
}

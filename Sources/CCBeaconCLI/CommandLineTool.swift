public import BeaconScan
public import CCDebugger
public import CommandLineKit
import Provisioning
public import StationLedger
import StructuredText

/// The `ccbeacon` command line: parses argv, runs a command, turns every error into a message, a
/// hint and an exit status. `main.swift` only calls `run`.
public enum CommandLineTool {
    /// The version `--version` prints: the package's VERSION file (compiled in by the
    /// VersionFile plugin).
    public static let version = packageVersion

    /// Every command, in the order `help` lists them: the one registry the parser, help and
    /// dispatch read.
    static let registry: [Command] = [
        EncodeCommand.command, GenerateCommand.command, BatchCommand.command, InspectCommand.command,
        VerifyCommand.command, ScanCommand.command, CalibrateCommand.command, ConvertCommand.command,
        PatchCommand.command,
        TemplateImportCommand.command,
        TemplatesCommand.command, BoardsCommand.command, DevicesCommand.command, InfoCommand.command,
        FlashCommand.command, ReadCommand.command, EraseCommand.command, ProvisionCommand.command,
        LedgerCommand.show, LedgerCommand.export, LedgerCommand.check, LedgerMigrateCommand.command,
        LabelsCommand.command, PlanCommand.command, CheckAppCommand.command, CompletionsCommand.command,
        ManPagesCommand.command,
        DoctorCommand.command,
    ]

    /// The commands' tables, in registry order.
    static let commands: [CommandSpec] = registry.map(\.spec)

    /// Runs `arguments` (argv without the program name) and returns the exit status. `debuggers`
    /// supplies the CC Debuggers (libusb in the tool, emulated ones in tests), `radios` the
    /// Bluetooth controllers (BlueZ's HCI socket in the tool, scripted ones in tests).
    /// A result that did not reach standard output (`console.outputFailure`) turns success into
    /// exit 1 with a message; a command that failed on its own keeps its status. `process`: where
    /// the command says it runs in a ledger's runs (a test running several commands in one
    /// process gives each its own).
    public static func run(
        _ arguments: [String], console: Console, debuggers: (any DebuggerProvider)? = nil,
        radios: (any HCIControllerProvider)? = nil, process: RunIdentity = .current
    ) -> Int32 {
        let invocation = ArgumentParser.parse(arguments, commands: commands)
        let status = run(
            invocation, console: console, hardware: Hardware(debuggers: debuggers, radios: radios, process: process))
        guard let failure = console.outputFailure else { return status }
        var name: String?
        if case .success(.run(let command)) = invocation { name = command.command }
        console.diagnostics(line: "ccbeacon\(name.map { " " + $0 } ?? ""): error: \(failure)")
        return status == ExitCode.success.rawValue ? ExitCode.failure.rawValue : status
    }

    static func run(
        _ invocation: Result<Invocation, UsageError>, console: Console, hardware: Hardware
    ) -> Int32 {
        switch invocation {
        case .failure(let error):
            console.diagnostics(lines: usageMessage(error))
            return ExitCode.usage.rawValue
        case .success(.version):
            console.output(line: "ccbeacon \(version)")
            return ExitCode.success.rawValue
        case .success(.help(let name)):
            console.output(composed: name.map(help(for:)) ?? overview())
            return ExitCode.success.rawValue
        case .success(.run(let command)):
            do {
                try execute(command, console: console, hardware: hardware)
                return ExitCode.success.rawValue
            } catch {
                // A message may quote what a list, a ledger or an argument holds: it is one line,
                // made visible whole (a line feed in a value cannot start a line), and so is each
                // detail under it.
                let message = error.message
                if error.exitCode == .usage {
                    console.diagnostics(lines: usageMessage(UsageError(message, command: command.command)))
                } else {
                    console.diagnostics(line: "ccbeacon \(command.command): error: \(message)")
                }
                for detail in error.details { console.diagnostics(line: "  " + detail) }
                if let hint = error.hint { console.diagnostics(line: "hint: \(hint)") }
                for line in error.hintLines { console.diagnostics(line: "  " + line) }
                return error.exitCode.rawValue
            }
        }
    }

    static func execute(_ command: ParsedCommand, console: Console, hardware: Hardware) throws(CommandFailure) {
        guard let entry = registry.first(where: { $0.spec.name == command.command }) else {
            throw .usage("unknown command '\(command.command)'")
        }
        // Every value given is converted before the command runs: a usage error leaves every
        // file, ledger and device as it was, wherever the command reads that option.
        for option in entry.spec.table.options {
            if let text = command.values[option.name], let check = option.check { try check(text) }
        }
        let tracePath = command.values[Options.trace.spec.name]
        if let tracePath {
            let others = command.positionals + command.values.filter { $0.key != Options.trace.spec.name }.map(\.value)
            try TraceFile.refuseArgument(
                naming: tracePath, shownAs: tracePath, option: Options.trace.spec.name, arguments: others)
        }
        let prepared = try entry.prepare(command)
        guard let path = tracePath, let debuggers = hardware.debuggers else {
            return try prepared(console, hardware)
        }
        // Every debugger the command reaches is traced, whatever it does with it; the trace is
        // a diagnosis, so a trace that cannot be written is said but changes no outcome.
        let file = try TraceFile(path: path)
        var traced = hardware
        traced.debuggers = TracingProvider(debuggers, trace: file.trace)
        var succeeded = false
        defer {
            file.finish(succeeded: succeeded)
            if let failure = file.trace.failure {
                console.diagnostics(
                    line:
                        "ccbeacon \(command.command): warning: the trace \(path) stopped after \(file.trace.records) records: \(failure)"
                )
            }
        }
        try prepared(console, traced)
        succeeded = true
    }

    /// `ccbeacon CMD: message`, the usage, and where to read more, as lines: the console makes
    /// each visible whole, so a line feed in a quoted argument stays on the message's line.
    static func usageMessage(_ error: UsageError) -> [String] {
        guard let name = error.command, let usage = usageLines(of: name) else {
            return [
                "ccbeacon: \(error.message)", "usage: ccbeacon COMMAND [OPTIONS]",
                "run 'ccbeacon help' for the commands",
            ]
        }
        return ["ccbeacon \(name): \(error.message)"]
            + usage + ["run 'ccbeacon help \(name)' for details"]
    }

    /// `usage: ` and the forms of command `name` (or of each subcommand of group `name`), one
    /// under the other, laid out for the help's width: a form's continuation lines stand under
    /// its first term after the command's name. `nil` for a name that is neither.
    static func usageLines(of name: String) -> [String]? {
        let specs =
            commands.first { $0.name == name }.map { [$0] } ?? ArgumentParser.subcommands(of: name, in: commands)
        guard !specs.isEmpty else { return nil }
        let forms = specs.flatMap { spec in spec.usageForms(of: "ccbeacon").map { (spec.name, $0) } }
        return forms.enumerated().flatMap { index, form in
            let line = (index == 0 ? "usage: " : "       ") + form.1
            return HelpLayout.wrap(line, indent: "usage: ccbeacon \(form.0) ".count, keepingGroups: true)
        }
    }

    /// The help of a command, or of a group: the group's subcommands with their summaries, and
    /// their usage.
    static func help(for name: String) -> String {
        if let spec = commands.first(where: { $0.name == name }) { return help(for: spec) }
        let group = ArgumentParser.subcommands(of: name, in: commands)
        let names = group.map { String($0.name.dropFirst(name.count + 1)) }
        let width = names.map(\.count).max() ?? 0
        let list = zip(names, group).map { sub, spec in "  \(padded(sub, to: width + 2))\(spec.summary)" }
        return HelpLayout.wrap(
            text: """
                ccbeacon \(name): subcommands \(names.joined(separator: ", "))

                \(usageLines(of: name)?.joined(separator: "\n") ?? "")

                subcommands:
                \(list.joined(separator: "\n"))

                'ccbeacon help \(name) SUBCOMMAND' (or 'ccbeacon \(name) SUBCOMMAND --help') shows its options.

                """)
    }

    static func overview() -> String {
        let width = commands.map(\.name.count).max() ?? 0
        let list = commands.map {
            "  \(padded($0.name, to: width + 2))\($0.summary)"
        }
        return """
            ccbeacon \(version): turn one CC2541 firmware image into a fleet of iBeacon stations

            usage: ccbeacon COMMAND [OPTIONS]

            commands:
            \(list.joined(separator: "\n"))

            'ccbeacon help COMMAND' or 'ccbeacon COMMAND --help' shows a command's options.
            Exit status: 0 success, 1 operation failed, 3 provision stopped with stations left, 64 usage error,
            65 bad input data.

            """
    }

    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    static func help(for spec: CommandSpec) -> String {
        let labels = spec.options.map { option in
            [option.short, option.name].compactMap { $0 }.joined(separator: ", ")
                + (option.valueName.map { " \($0)" } ?? "")
        }
        let helpLabel = "-h, --help"
        let width = ((labels + [helpLabel]).map(\.count).max() ?? 0) + 2
        let options =
            zip(labels, spec.options).map { label, option in "  " + padded(label, to: width) + option.help }
            + ["  " + padded(helpLabel, to: width) + "show this help"]
        return """
            ccbeacon \(spec.name): \(spec.summary)

            \(usageLines(of: spec.name)?.joined(separator: "\n") ?? "")

            \(HelpLayout.wrap(text: spec.details))

            options:
            \(options.flatMap { HelpLayout.wrap($0, indent: 2 + width) }.joined(separator: "\n"))

            the whole reference, with examples: man \(manual.pageName(spec.name))

            """
    }
}

/// A command of the registry: its table, how its arguments are decoded, and what runs it.
struct Command: Sendable {
    /// What runs a command once its arguments are decoded and checked.
    typealias Prepared = @Sendable (Console, Hardware) throws(CommandFailure) -> Void

    /// The grammar and help.
    let spec: CommandSpec
    /// Decodes a command line the parser accepted against `spec` into the command's arguments
    /// and checks them (`CommandArguments`), before anything is opened (a trace included).
    let prepare: @Sendable (ParsedCommand) throws(CommandFailure) -> Prepared

    /// A command that decodes its `Arguments` and runs on them, with the hardware it may reach.
    init<Arguments: CommandArguments>(
        _ spec: CommandSpec, _ arguments: Arguments.Type,
        run: @escaping @Sendable (Arguments, Console, Hardware) throws(CommandFailure) -> Void
    ) {
        self.spec = spec
        prepare = { command throws(CommandFailure) in
            let decoded = try Arguments(command)
            try decoded.validate()
            return { console, hardware throws(CommandFailure) in try run(decoded, console, hardware) }
        }
    }

    /// A command that decodes its `Arguments` and needs no hardware.
    init<Arguments: CommandArguments>(
        _ spec: CommandSpec, _ arguments: Arguments.Type,
        run: @escaping @Sendable (Arguments, Console) throws(CommandFailure) -> Void
    ) {
        self.init(spec, arguments) { decoded, console, _ throws(CommandFailure) in try run(decoded, console) }
    }
}

/// The hardware a command may reach, as the program (or a test) supplies it.
struct Hardware: Sendable {
    /// CC Debuggers.
    var debuggers: (any DebuggerProvider)?
    /// Bluetooth controllers.
    var radios: (any HCIControllerProvider)?
    /// Where this command runs, as a ledger's runs record it.
    var process: RunIdentity = .current
}

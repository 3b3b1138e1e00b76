public import CCDebugger

/// The `ccbeacon` command line: parses argv, runs a command, turns every error into a message, a
/// hint and an exit status. `main.swift` only calls `run`.
public enum CommandLineTool {
    /// The version `--version` prints.
    public static let version = "0.1.0"

    /// Every command, in the order `help` lists them.
    static let commands: [CommandSpec] = [
        EncodeCommand.spec, GenerateCommand.spec, BatchCommand.spec, InspectCommand.spec, VerifyCommand.spec,
        ConvertCommand.spec, PatchCommand.spec, TemplateImportCommand.spec, TemplatesCommand.spec, BoardsCommand.spec,
        DevicesCommand.spec, InfoCommand.spec, FlashCommand.spec, ReadCommand.spec, EraseCommand.spec,
        ProvisionCommand.spec, LedgerCommand.showSpec, LedgerCommand.exportSpec, LedgerCommand.checkSpec,
    ]

    /// Runs `arguments` (argv without the program name) and returns the exit status. `debuggers`
    /// supplies the CC Debuggers (libusb in the tool, emulated ones in tests).
    /// A result that did not reach standard output (`console.outputFailure`) turns success into
    /// exit 1 with a message; a command that failed on its own keeps its status.
    public static func run(_ arguments: [String], console: Console, debuggers: (any DebuggerProvider)? = nil) -> Int32 {
        let invocation = ArgumentParser.parse(arguments, commands: commands)
        let status = run(invocation, console: console, debuggers: debuggers)
        guard let failure = console.outputFailure else { return status }
        var name: String?
        if case .success(.run(let command)) = invocation { name = command.command }
        console.diagnostics("ccbeacon\(name.map { " " + $0 } ?? ""): error: \(failure)\n")
        return status == ExitCode.success.rawValue ? ExitCode.failure.rawValue : status
    }

    static func run(
        _ invocation: Result<Invocation, UsageError>, console: Console, debuggers: (any DebuggerProvider)?
    ) -> Int32 {
        switch invocation {
        case .failure(let error):
            console.diagnostics(usageMessage(error))
            return ExitCode.usage.rawValue
        case .success(.version):
            console.output("ccbeacon \(version)\n")
            return ExitCode.success.rawValue
        case .success(.help(let name)):
            console.output(name.map(help(for:)) ?? overview())
            return ExitCode.success.rawValue
        case .success(.run(let command)):
            do {
                try execute(command, console: console, debuggers: debuggers)
                return ExitCode.success.rawValue
            } catch {
                if error.exitCode == .usage {
                    console.diagnostics(usageMessage(UsageError(error.message, command: command.command)))
                } else {
                    console.diagnostics("ccbeacon \(command.command): error: \(error.message)\n")
                    if let hint = error.hint { console.diagnostics("hint: \(hint)\n") }
                }
                return error.exitCode.rawValue
            }
        }
    }

    static func execute(_ command: ParsedCommand, console: Console, debuggers: (any DebuggerProvider)?)
        throws(CommandFailure)
    {
        switch command.command {
        case EncodeCommand.spec.name: try EncodeCommand.run(command, console: console)
        case ConvertCommand.spec.name: try ConvertCommand.run(command, console: console)
        case PatchCommand.spec.name: try PatchCommand.run(command, console: console)
        case GenerateCommand.spec.name: try GenerateCommand.run(command, console: console)
        case BatchCommand.spec.name: try BatchCommand.run(command, console: console)
        case InspectCommand.spec.name: try InspectCommand.run(command, console: console)
        case VerifyCommand.spec.name: try VerifyCommand.run(command, console: console)
        case TemplateImportCommand.spec.name: try TemplateImportCommand.run(command, console: console)
        case TemplatesCommand.spec.name: try TemplatesCommand.run(command, console: console)
        case BoardsCommand.spec.name: try BoardsCommand.run(command, console: console)
        case DevicesCommand.spec.name: try DevicesCommand.run(command, console: console, debuggers: debuggers)
        case InfoCommand.spec.name: try InfoCommand.run(command, console: console, debuggers: debuggers)
        case FlashCommand.spec.name: try FlashCommand.run(command, console: console, debuggers: debuggers)
        case ReadCommand.spec.name: try ReadCommand.run(command, console: console, debuggers: debuggers)
        case EraseCommand.spec.name: try EraseCommand.run(command, console: console, debuggers: debuggers)
        case ProvisionCommand.spec.name: try ProvisionCommand.run(command, console: console, debuggers: debuggers)
        case LedgerCommand.showSpec.name: try LedgerCommand.show(command, console: console)
        case LedgerCommand.exportSpec.name: try LedgerCommand.export(command, console: console)
        case LedgerCommand.checkSpec.name: try LedgerCommand.check(command, console: console)
        default: throw .usage("unknown command '\(command.command)'")
        }
    }

    /// `ccbeacon CMD: message`, the usage, and where to read more.
    static func usageMessage(_ error: UsageError) -> String {
        guard let name = error.command, let usage = usage(of: name) else {
            return
                "ccbeacon: \(error.message)\nusage: ccbeacon COMMAND [OPTIONS]\nrun 'ccbeacon help' for the commands\n"
        }
        return "ccbeacon \(name): \(error.message)\nusage: \(usage)\nrun 'ccbeacon help \(name)' for details\n"
    }

    /// The usage of a command, or of every subcommand of a group one under the other; `nil` for
    /// a name that is neither.
    static func usage(of name: String) -> String? {
        if let spec = commands.first(where: { $0.name == name }) { return spec.usage }
        let group = ArgumentParser.subcommands(of: name, in: commands)
        return group.isEmpty ? nil : group.map(\.usage).joined(separator: "\n       ")
    }

    /// The help of a command, or of a group: the group's subcommands with their summaries, and
    /// their usage.
    static func help(for name: String) -> String {
        if let spec = commands.first(where: { $0.name == name }) { return help(for: spec) }
        let group = ArgumentParser.subcommands(of: name, in: commands)
        let names = group.map { String($0.name.dropFirst(name.count + 1)) }
        let width = names.map(\.count).max() ?? 0
        let list = zip(names, group).map { sub, spec in "  \(padded(sub, to: width + 2))\(spec.summary)" }
        return """
            ccbeacon \(name): subcommands \(names.joined(separator: ", "))

            usage: \(usage(of: name) ?? "")

            subcommands:
            \(list.joined(separator: "\n"))

            'ccbeacon help \(name) SUBCOMMAND' or 'ccbeacon \(name) SUBCOMMAND --help' shows a subcommand's options.

            """
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
            Exit status: 0 success, 1 operation failed, 64 usage error, 65 bad input data.

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
        let width = (labels.map(\.count).max() ?? 0) + 2
        let options = zip(labels, spec.options).map { label, option in
            "  " + padded(label, to: width) + option.help
        }
        return """
            ccbeacon \(spec.name): \(spec.summary)

            usage: \(spec.usage)

            \(spec.details)

            options:
            \(options.joined(separator: "\n"))
              -h, --help\(String(repeating: " ", count: max(2, width - 10)))show this help

            """
    }
}

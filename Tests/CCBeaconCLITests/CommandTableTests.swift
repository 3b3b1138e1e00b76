import Provisioning
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// The registry's tables are what the parser, `--help` and the usage lines read: these checks keep
/// each table whole, so that no option can be accepted yet missing from the usage, or named twice.
struct CommandTableTests {
    static let specs = CommandLineTool.commands

    @Test(arguments: specs.map(\.name))
    func everyOptionIsNamedOnceAndAppearsInTheUsage(name: String) throws {
        let spec = try #require(Self.specs.first { $0.name == name })
        let names = spec.options.map(\.name)
        #expect(Set(names).count == names.count, "\(name) declares an option twice: \(names)")
        let shorts = spec.options.compactMap(\.short)
        #expect(Set(shorts).count == shorts.count)
        let words = Set(spec.usage.split(whereSeparator: { " []()|\n".contains($0) }).map(String.init))
        for option in spec.options {
            #expect(words.contains(option.short ?? option.name), "\(name)'s usage lacks \(option.name): \(spec.usage)")
            #expect(!option.help.isEmpty, "\(name) \(option.name) has no help")
        }
        for group in spec.groups {
            for member in group.names { #expect(names.contains(member), "\(name)'s group names \(member)") }
        }
        for refused in spec.refusedOptions.keys { #expect(!names.contains(refused)) }
    }

    @Test func commandNamesAreUniqueAndDispatchToTheirOwnEntry() {
        let names = Self.specs.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(CommandLineTool.registry.map(\.spec.name) == names)
    }

    /// What `help COMMAND` prints holds the generated usage, each form on its own line with its
    /// continuation lines indented under it (folded back, the forms as generated), and no line of
    /// it wider than the help's width.
    @Test func helpShowsTheGeneratedUsage() {
        for spec in Self.specs {
            let help = CommandLineTool.help(for: spec).split(separator: "\n", omittingEmptySubsequences: false)
            let start = help.firstIndex { $0.hasPrefix("usage: ") }!
            let block = help[start...].prefix { !$0.isEmpty }
            var forms: [String] = []
            for line in block {
                let text = line.dropFirst(line.hasPrefix("usage: ") ? 7 : 0)
                if text.hasPrefix("ccbeacon ") || text.hasPrefix("       ccbeacon ") {
                    forms.append(text.trimmingCharacters(in: .whitespaces))
                } else {
                    forms[forms.count - 1] += " " + text.trimmingCharacters(in: .whitespaces)
                }
            }
            #expect(forms.joined(separator: "\n       ") == spec.usage, "\(spec.name)")
            #expect(block.allSatisfy { $0.count <= HelpLayout.width }, "\(spec.name)")
        }
    }

    /// Each of encode's usage lines names every option its beacon type takes (the line of
    /// `--type X`, or the first line for iBeacon), and --format: a reader of one line sees all.
    @Test(arguments: EncodeCommand.BeaconType.allCases)
    func encodesUsageLineForEachTypeIsComplete(type: EncodeCommand.BeaconType) throws {
        let lines = EncodeCommand.spec.usage.components(separatedBy: "\n")
        let line = try #require(
            type == .ibeacon ? lines.first : lines.first { $0.contains("--type \(type.rawValue) ") })
        for option in (EncodeCommand.optionsByType[type] ?? []) + [EncodeCommand.format.spec] {
            #expect(line.contains(option.name + " "), "\(type.rawValue): \(option.name) missing from \(line)")
        }
    }

    /// Help lines up every option's text in one column, help included.
    @Test func helpColumnsLineUp() {
        for spec in Self.specs {
            let text = CommandLineTool.help(for: spec)
            let options = text.components(separatedBy: "options:\n").last ?? ""
            let starts = Set(
                options.split(separator: "\n").compactMap { line -> Int? in
                    guard
                        let range = line.range(
                            of: "  ", options: [], range: line.index(line.startIndex, offsetBy: 2)..<line.endIndex)
                    else { return nil }
                    var index = range.upperBound
                    while index < line.endIndex, line[index] == " " { index = line.index(after: index) }
                    return line.distance(from: line.startIndex, to: index)
                })
            #expect(starts.count == 1, "\(spec.name): help starts at columns \(starts.sorted())")
        }
    }

    /// Values the options' converters refuse, each a usage error before anything is read or
    /// touched (found by a review: these were taken, or silently ignored).
    @Test(arguments: [
        (["templates", "--templates", "/nonexistent-ccbeacon-folder"], "is not a folder"),
        (
            ["provision", "l.csv", "--template", "t", "--wait", "0x10"],
            "--wait '0x10' must be a number of seconds"
        ),
        (
            ["provision", "l.csv", "--template", "t", "--wait", "inf"],
            "--wait 'inf' must be a number of seconds"
        ),
        (["provision", "l.csv", "--template", "t", "--wait", "86401"], "0…86400"),
        // The example a refusal gives is one the option takes (it offered 0.5 for 1…3600).
        (
            ["provision", "l.csv", "--template", "t", "--lease", "0.5"],
            "1…3600 (decimal, e.g. 10 or 1.5)"
        ),
        (
            ["provision", "l.csv", "--template", "t", "--lease", "nan"],
            "--lease 'nan' must be a number of seconds"
        ),
        (
            ["provision", "l.csv", "--template", "t", "--server-wait", "-1"],
            "--server-wait '-1' must be a number"
        ),
        (["flash", "x.hex", "--mac", "FF:FF:FF:FF:FF:FF"], "all 00 and all FF (an erased page) are refused"),
        (["flash", "x.hex", "--mac", "00:00:00:00:00:00"], "all 00 and all FF (an erased page) are refused"),
    ])
    func refusedValues(arguments: [String], message: String) {
        let run = ToolRun(arguments)
        #expect(run.status == 64, "\(arguments): \(run.diagnostics)")
        #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
    }
}

/// A choice option is declared once: its placeholder, help, completion and the message for any
/// other word come from the one list, and each message is exactly this.
struct ChoiceOptionTests {
    @Test(arguments: [
        (["encode", "--format", "xml"], "ccbeacon encode: --format must be hex, c, json or air, not 'xml'"),
        (["flash", "x.hex", "--verify", "all"], "ccbeacon flash: --verify must be crc, read or none, not 'all'"),
        (
            ["provision", "l.csv", "--template", "cc2541-ibeacon", "--verify", "none"],
            "ccbeacon provision: --verify must be crc or read, not 'none'"
        ),
        (
            ["provision", "l.csv", "--template", "cc2541-ibeacon", "--chip-id", "ieee"],
            "ccbeacon provision: --chip-id must be primary or secondary, not 'ieee'"
        ),
        (
            ["provision", "l.csv", "--template", "cc2541-ibeacon", "--address-mode", "primary"],
            "ccbeacon provision: --address-mode must be template or secondary, not 'primary'"
        ),
        (
            ["ledger", "export", "--format", "xml"],
            "ccbeacon ledger export: --format must be csv, json or ios-regions, not 'xml'"
        ),
        (
            ["flash", "x.hex", "--usb-framing", "fast"],
            "ccbeacon flash: --usb-framing must be proven or packed, not 'fast'"
        ),
    ])
    func anyOtherWordIsRefusedNamingTheChoices(arguments: [String], message: String) {
        let run = ToolRun(arguments)
        #expect(run.status == 64)
        #expect(run.diagnostics.split(separator: "\n").first.map(String.init) == message, "\(run.diagnostics)")
    }

    @Test func everyChoiceOptionSpellsItsWordsOnce() {
        let options = CommandLineTool.commands.flatMap(\.options).filter { $0.choices != nil }
        #expect(options.count >= 8)
        for option in options {
            let words = option.choices ?? []
            #expect(option.valueName == words.joined(separator: "|"))
            let listed = words.map { $0 == option.defaultValue ? "\($0) (default)" : $0 }
            #expect(option.help.hasSuffix(": " + Option<Int>.alternatives(listed)), "\(option.help)")
            #expect(option.completion == .words(words))
        }
    }
}

/// A default is declared once, with its option: the help says it once, and a command left
/// without the option runs with exactly that value.
struct OptionDefaultTests {
    @Test func aDefaultedOptionSaysItsDefaultAndStandsForIt() throws {
        let count = Option<Int>("--count", value: "N", help: "how many") { text throws(CommandFailure) in
            guard let value = Int(text) else { throw .usage("--count '\(text)' is not a number") }
            return value
        }.defaulting(to: 16)
        #expect(count.spec.help == "how many (default 16)")
        #expect(count.spec.defaultValue == "16")
        #expect(try ParsedCommand(command: "x").value(count) == 16)
        #expect(try ParsedCommand(command: "x", values: ["--count": "3"]).value(count) == 3)
        #expect(throws: CommandFailure.self) { try ParsedCommand(command: "x", values: ["--count": "y"]).value(count) }
    }

    /// No help states a default twice, or states one the declaration does not hold.
    @Test func everyDeclaredDefaultIsSaidOnce() {
        let defaulted = CommandLineTool.commands.flatMap(\.options).filter { $0.defaultValue != nil }
        #expect(defaulted.count >= 15, "\(defaulted.map(\.name))")
        for option in defaulted {
            #expect(option.help.components(separatedBy: "default").count == 2, "\(option.name): \(option.help)")
        }
    }

    /// The run's own defaults are what the options say.
    @Test(arguments: [
        ("--retries", "1"), ("--wait", "600"), ("--scan-seconds", "5"), ("--hook-timeout", "30"), ("--lease", "90"),
        ("--verify", "crc"), ("--chip-id", "primary"), ("--address-mode", "template"), ("--usb-framing", "proven"),
    ])
    func provisionSaysItsDefault(option: String, shown: String) throws {
        let spec = try #require(ProvisionCommand.spec.options.first { $0.name == option })
        #expect(spec.defaultValue == shown)
    }

    @Test func provisionWithoutOptionsRunsWithTheRunsDefaults() throws {
        let options = try ProvisionCommand.runOptions(ParsedCommand(command: "provision", positionals: ["s.csv"]))
        let run = ProvisionOptions()
        #expect(options.retries == run.retries && options.targetTimeoutSeconds == run.targetTimeoutSeconds)
        #expect(options.scanSeconds == run.scanSeconds && options.verify == run.verify)
        #expect(options.chipIdentity == run.chipIdentity && options.usbFraming == .proven)
        #expect((run.retries, run.targetTimeoutSeconds, run.scanSeconds) == (1, 600, 5))
    }
}

/// Completion is declared with each option, not guessed from its placeholder: every value that
/// names a path completes files (the guess once missed `--from CAPTURE`), and nothing else does.
struct CompletionDeclarationTests {
    static let pathWords = ["FILE", "DIR", "CAPTURE", "OUT", "IMAGE", "STATIONS", "IN", "REGIONS", "PLACES"]

    @Test func everyPathValueCompletesFilesAndOnlyThose() {
        for spec in CommandLineTool.commands {
            for option in spec.options where option.valueName != nil {
                let namesAPath =
                    Self.pathWords.contains { option.valueName!.contains($0) } || option.valueName!.contains(".")
                // A folder's value completes folders; any other path, files.
                let expected: ValueCompletion? =
                    option.valueName == "DIR" ? .folders : namesAPath ? .files : nil
                #expect(
                    expected.map { option.completion == $0 } ?? ![.files, .folders].contains(option.completion),
                    "\(spec.name) \(option.name) \(option.valueName!)")
            }
            for positional in spec.positionals {
                let namesAPath = Self.pathWords.contains { positional.placeholder.contains($0) }
                #expect((positional.completion == .files) == namesAPath, "\(spec.name) \(positional.name)")
            }
        }
    }

    @Test func aFolderCompletesFoldersInEveryShell() {
        #expect(
            CommandLineTool.manual.bash().contains(
                #"--report) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;"#))
        #expect(CommandLineTool.manual.zsh().contains("DIR:_files -/"))
        #expect(CommandLineTool.manual.fish().contains("-l report -x -a '(__fish_complete_directories)'"))
    }

    @Test func aCaptureCompletesFilesInEveryShell() {
        #expect(
            CommandLineTool.manual.bash().contains(
                #"--from) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;"#))
        #expect(CommandLineTool.manual.zsh().contains("CAPTURE:_files"))
        #expect(CommandLineTool.manual.fish().contains("-l from -r -F"))
    }
}

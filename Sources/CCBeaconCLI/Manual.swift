import HexText
import Storage
import StructuredText

/// The man pages and shell completions, made from the very option tables the parser and `--help`
/// read: a command, an option or a fixed set of values is written once, in its table, and every
/// one of these follows.
enum Manual {
    /// The commands with a page and a completion: the registry's, plus the group words
    /// (`ledger`, `template`) whose subcommands they are.
    static var commands: [CommandSpec] { CommandLineTool.commands }

    /// The groups (`ledger`) and their subcommands' names (`show`, `export`, …).
    static var groups: [(name: String, subcommands: [String])] {
        var result: [(String, [String])] = []
        for spec in commands where spec.name.contains(" ") {
            let parts = spec.name.split(separator: " ", maxSplits: 1).map(String.init)
            if let index = result.firstIndex(where: { $0.0 == parts[0] }) {
                result[index].1.append(parts[1])
            } else {
                result.append((parts[0], [parts[1]]))
            }
        }
        return result
    }

    /// The words that may follow `ccbeacon`: the commands without a group, the groups, `help`.
    static var firstWords: [String] {
        var words: [String] = []
        for spec in commands {
            let first = String(spec.name.split(separator: " ")[0])
            if !words.contains(first) { words.append(first) }
        }
        return words + ["help"]
    }

    /// What a first word does: a command's summary, a group's subcommands, or `help`'s.
    static func summary(of word: String) -> String {
        if let spec = commands.first(where: { $0.name == word }) { return spec.summary }
        if let group = groups.first(where: { $0.name == word }) {
            return "subcommands: " + group.subcommands.joined(separator: ", ")
        }
        return "a command's help"
    }

    // MARK: - Man pages

    /// The page of `ccbeacon` itself: every command with its summary.
    static func overviewPage() -> String {
        var page = header(
            title: "CCBEACON", name: "ccbeacon",
            summary: "turn one CC2541 firmware image into a fleet of iBeacon stations")
        page += ".SH SYNOPSIS\n.B ccbeacon\n.I COMMAND\n[\\fIOPTIONS\\fR]\n"
        page += ".br\n.B ccbeacon help\n.I COMMAND\n.br\n.B ccbeacon \\-\\-version\n"
        page += ".SH DESCRIPTION\n"
        page += paragraphs(
            """
            ccbeacon encodes each station's iBeacon identity (UUID, major, minor, measured power), patches
            it into a CC2541 firmware template (Intel HEX), writes Intel HEX or .bin for any flasher, and
            burns each station itself through a TI CC Debugger \u{2014} verified, and recorded in a ledger so
            that no identity is burned twice.
            """)
        page += ".SH COMMANDS\n"
        for spec in commands {
            page +=
                ".TP\n.B " + text(spec.name) + "\n" + text(spec.summary) + " (see \\fB" + text(pageName(spec.name))
                + "\\fR(1))\n"
        }
        page += sections(overviewSections)
        page += exitStatus + files + seeAlso(except: "ccbeacon")
        return page
    }

    /// The page of one command: usage, the details of its help, every option.
    static func page(_ spec: CommandSpec) -> String {
        var page = header(
            title: pageName(spec.name).uppercased(), name: pageName(spec.name), summary: spec.summary)
        page += ".SH SYNOPSIS\n"
        for (index, line) in spec.usage.split(separator: "\n").enumerated() {
            if index > 0 { page += ".br\n" }
            page += text(line.trimmingLeadingSpaces()) + "\n"
        }
        page += ".SH DESCRIPTION\n" + paragraphs(spec.details)
        page += ".SH OPTIONS\n"
        for option in spec.options {
            let names = [option.short, option.name].compactMap { $0 }.map { "\\fB" + text($0) + "\\fR" }
            page +=
                ".TP\n" + names.joined(separator: ", ")
                + (option.valueName.map { " \\fI" + text($0) + "\\fR" } ?? "") + "\n"
            page += text(option.help) + (option.isRequired ? " (required)" : "") + "\n"
        }
        page += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow the help\n"
        page += sections(spec.manual.sections) + exitStatus
        if !spec.manual.examples.isEmpty { page += ".SH EXAMPLES\n" + roff(markdown: spec.manual.examples) }
        page += seeAlso(except: pageName(spec.name))
        return page
    }

    /// Reference sections as roff, each under its upper-case heading.
    static func sections(_ sections: [ManualSection]) -> String {
        sections.map { ".SH " + text($0.title.uppercased()) + "\n" + roff(markdown: $0.text) }.joined()
    }

    /// `ledger show` → `ccbeacon-ledger-show`.
    static func pageName(_ command: String) -> String {
        "ccbeacon-" + command.replacing(" ", with: "-")
    }

    static func header(title: String, name: String, summary: String) -> String {
        ".\\\" Generated by 'ccbeacon man-pages' from the option tables; do not edit.\n"
            + ".TH \(text(title)) 1 \"\" \"ccbeacon \(CommandLineTool.version)\" \"ccbeacon manual\"\n"
            + ".SH NAME\n\(text(name)) \\- \(text(summary))\n"
    }

    static let exitStatus = """
        .SH EXIT STATUS
        .TP
        .B 0
        success
        .TP
        .B 1
        the operation failed (a device, a file, a hook)
        .TP
        .B 3
        provision only: it stopped with stations of the list left
        .TP
        .B 64
        usage error
        .TP
        .B 65
        bad input data (a list, a template, a ledger), with the file, line and column

        """

    static let files = """
        .SH FILES
        .TP
        .I /usr/share/ccbeacon
        the bundled boards/ and firmware\\-templates/ (or \\fBCCBEACON_DATA\\fR)
        .TP
        .I /usr/lib/udev/rules.d/70\\-ccbeacon.rules
        access to CC Debuggers for the logged\\-in user

        """

    static func seeAlso(except: String) -> String {
        let others = (["ccbeacon"] + commands.map { pageName($0.name) }).filter { $0 != except }
        return ".SH SEE ALSO\n" + others.map { "\\fB\(text($0))\\fR(1)" }.joined(separator: ",\n")
            + ",\n\\fBcc\\-tool\\fR(1)\n"
    }

    /// A help text's paragraphs as roff: blank lines part paragraphs; indented lines (examples,
    /// lists) are kept as they are, without filling.
    static func paragraphs(_ details: String) -> String {
        var result = ".PP\n"
        var literal = false
        for line in details.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy(\.isWhitespace) {
                if literal {
                    result += ".RE\n.fi\n"
                    literal = false
                }
                result += ".PP\n"
            } else if line.hasPrefix("  ") {
                if !literal {
                    result += ".nf\n.RS 2\n"
                    literal = true
                }
                // The block's own indentation (a table's hanging lines) is kept; the first two
                // spaces are the .RS.
                result += text(line.dropFirst(2)) + "\n"
            } else {
                if literal {
                    result += ".RE\n.fi\n"
                    literal = false
                }
                result += text(line) + "\n"
            }
        }
        if literal { result += ".RE\n.fi\n" }
        return result
    }

    /// `line` as roff text: backslashes and dashes escaped, a leading `.` or `'` kept from being
    /// read as a request, and every character beyond ASCII written as `\[uXXXX]` (so the page is
    /// ASCII and reads the same whatever the reader's locale).
    static func text<S: StringProtocol>(_ line: S) -> String {
        var result = ""
        for scalar in line.unicodeScalars {
            switch scalar {
            case "\\": result += "\\e"
            case "-": result += "\\-"
            case " "..."~": result.unicodeScalars.append(scalar)
            case "\t": result += " "
            default: result += "\\[u" + HexText.digits(scalar.value, width: 4) + "]"
            }
        }
        if result.hasPrefix(".") || result.hasPrefix("'") { result = "\\&" + result }
        return result
    }

    // MARK: - Completions

    /// The bash completion: one function that completes the command (and a group's subcommand),
    /// then options, the values of options with a fixed set, and files where files go.
    static func bash() -> String {
        var script = """
            # bash completion for ccbeacon \(CommandLineTool.version), made by 'ccbeacon completions bash' from its option tables.
            _ccbeacon() {
                local cur prev command offset
                COMPREPLY=()
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                if [ "$COMP_CWORD" -eq 1 ]; then
                    COMPREPLY=($(compgen -W "\(firstWords.joined(separator: " ")) --help --version" -- "$cur"))
                    return
                fi
                command="${COMP_WORDS[1]}"
                offset=2
                case "$command" in

            """
        for group in groups {
            script += """
                        \(group.name))
                            if [ "$COMP_CWORD" -eq 2 ]; then
                                COMPREPLY=($(compgen -W "\(group.subcommands.joined(separator: " "))" -- "$cur"))
                                return
                            fi
                            command="\(group.name) ${COMP_WORDS[2]}"
                            offset=3
                            ;;

                """
        }
        script += """
                    help)
                        COMPREPLY=($(compgen -W "\(firstWords.filter { $0 != "help" }.joined(separator: " "))" -- "$cur"))
                        return
                        ;;
                esac
                case "$command" in

            """
        for spec in commands {
            var values = ""
            var freeValues: [String] = []
            for option in spec.options {
                let names = [option.name] + (option.short.map { [$0] } ?? [])
                switch option.completion {
                case .words(let choices):
                    values +=
                        "                    \(names.joined(separator: "|"))) COMPREPLY=($(compgen -W \"\(choices.joined(separator: " "))\" -- \"$cur\")); return ;;\n"
                case .files:
                    values +=
                        "                    \(names.joined(separator: "|"))) mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return ;;\n"
                case .folders:
                    values +=
                        "                    \(names.joined(separator: "|"))) mapfile -t COMPREPLY < <(compgen -d -- \"$cur\"); return ;;\n"
                case .anything:
                    if option.valueName != nil { freeValues += names }
                }
            }
            if !freeValues.isEmpty {
                values += "                    \(freeValues.joined(separator: "|"))) return ;;\n"
            }
            let options = spec.options.flatMap { [$0.name] + ($0.short.map { [$0] } ?? []) } + ["--help"]
            // What a word that is not an option completes to: the positional's fixed words, or
            // files (whole, spaces and all).
            let positional: String
            switch spec.positionals.first?.completion ?? .anything {
            case .words(let choices):
                positional = "COMPREPLY=($(compgen -W \"\(choices.joined(separator: " "))\" -- \"$cur\"))"
            case .files, .folders, .anything:
                positional = spec.positionals.isEmpty ? "" : "mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")"
            }
            script += """
                        "\(spec.name)")
                            case "$prev" in
                \(values)                esac
                            if [[ "$cur" == -* ]]; then
                                COMPREPLY=($(compgen -W "\(options.joined(separator: " "))" -- "$cur"))
                            \(positional.isEmpty ? "" : "else\n                    \(positional)\n                ")fi
                            ;;

                """
        }
        script += """
                esac
                : "$offset"
            }
            complete -o filenames -o bashdefault -F _ccbeacon ccbeacon

            """
        return script
    }

    /// The zsh completion (`#compdef ccbeacon`): `_arguments` per command, with each option's help.
    static func zsh() -> String {
        func quoted(_ text: String) -> String { "'" + text.replacing("'", with: "'\\''") + "'" }
        func escaped(_ text: String) -> String {
            text.replacing("\\", with: "\\\\").replacing("[", with: "\\[").replacing("]", with: "\\]")
                .replacing(":", with: "\\:")
        }
        func arguments(_ spec: CommandSpec) -> String {
            var specs: [String] = []
            for option in spec.options {
                let names = [option.name] + (option.short.map { [$0] } ?? [])
                let action: String
                switch option.completion {
                case .words(let choices):
                    action = ":\(escaped(option.valueName ?? "value")):(\(choices.joined(separator: " ")))"
                case .files: action = ":\(escaped(option.valueName ?? "file")):_files"
                case .folders: action = ":\(escaped(option.valueName ?? "folder")):_files -/"
                case .anything: action = option.valueName.map { ":\(escaped($0)): " } ?? ""
                }
                for name in names { specs.append(quoted("\(name)[\(escaped(option.help))]\(action)")) }
            }
            specs.append(quoted("(- *)--help[show the help]"))
            switch spec.positionals.first?.completion ?? .anything {
            case .words(let choices):
                specs.append(quoted("1:\(escaped(spec.positionals[0].name)):(\(choices.joined(separator: " ")))"))
            case .files, .folders, .anything: if !spec.positionals.isEmpty { specs.append(quoted("*:file:_files")) }
            }
            return "_arguments -s " + specs.joined(separator: " \\\n                ")
        }
        var script = """
            #compdef ccbeacon
            # zsh completion for ccbeacon \(CommandLineTool.version), made by 'ccbeacon completions zsh' from its option tables.
            _ccbeacon() {
                local -a commands
                commands=(

            """
        for word in firstWords {
            let summary = summary(of: word)
            script += "        " + quoted("\(word.replacing(":", with: "\\:")):\(summary)") + "\n"
        }
        script += """
                )
                if (( CURRENT == 2 )); then
                    _describe 'command' commands
                    return
                fi
                local command=$words[2]
                case $command in

            """
        for group in groups {
            script += """
                        \(group.name))
                            if (( CURRENT == 3 )); then
                                _values 'subcommand' \(group.subcommands.joined(separator: " "))
                                return
                            fi
                            command="\(group.name) $words[3]"
                            shift words
                            (( CURRENT-- ))
                            ;;

                """
        }
        script += """
                esac
                shift words
                (( CURRENT-- ))
                case $command in

            """
        for spec in commands {
            script += "        \(quoted(spec.name)))\n            \(arguments(spec))\n            ;;\n"
        }
        script += """
                    help) _values 'command' \(firstWords.filter { $0 != "help" }.joined(separator: " ")) ;;
                esac
            }
            _ccbeacon "$@"

            """
        return script
    }

    /// The fish completion: `complete` lines per command and option.
    static func fish() -> String {
        func quoted(_ text: String) -> String {
            "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
        }
        let groupNames = groups.map(\.name).joined(separator: " ")
        var script = """
            # fish completion for ccbeacon \(CommandLineTool.version), made by 'ccbeacon completions fish' from its option tables.
            # The command is the word after ccbeacon (and a group's subcommand the next one): an
            # option's value that happens to be a command's name is not taken for one.
            function __ccbeacon_command
                set -l tokens (commandline -opc)
                test (count $tokens) -ge 2; or return
                if contains -- $tokens[2] \(groupNames); and test (count $tokens) -ge 3
                    echo "$tokens[2] $tokens[3]"
                else
                    echo $tokens[2]
                end
            end
            function __ccbeacon_is
                test "$(__ccbeacon_command)" = "$argv"
            end
            function __ccbeacon_needs_command
                test (count (commandline -opc)) -eq 1
            end
            complete -c ccbeacon -f

            """
        for word in firstWords {
            let summary = summary(of: word)
            script += "complete -c ccbeacon -n '__ccbeacon_needs_command' -a \(quoted(word)) -d \(quoted(summary))\n"
        }
        for group in groups {
            let subs = group.subcommands.joined(separator: " ")
            script += "complete -c ccbeacon -n '__ccbeacon_is \(group.name)' -a \(quoted(subs))\n"
        }
        script +=
            "complete -c ccbeacon -n '__ccbeacon_is help' -a \(quoted(firstWords.filter { $0 != "help" }.joined(separator: " ")))\n"
        for spec in commands {
            let parts = spec.name.split(separator: " ").map(String.init)
            let condition = "__ccbeacon_is \(parts.joined(separator: " "))"
            for option in spec.options {
                var line = "complete -c ccbeacon -n \(quoted(condition)) -l \(option.name.dropFirst(2))"
                if let short = option.short { line += " -s \(short.dropFirst())" }
                switch option.completion {
                case .words(let choices): line += " -x -a \(quoted(choices.joined(separator: " ")))"
                case .files: line += " -r -F"
                case .folders: line += " -x -a '(__fish_complete_directories)'"
                case .anything: if option.valueName != nil { line += " -x" }
                }
                script += line + " -d \(quoted(option.help))\n"
            }
            if case .words(let choices) = spec.positionals.first?.completion {
                script += "complete -c ccbeacon -n \(quoted(condition)) -a \(quoted(choices.joined(separator: " ")))\n"
            } else if !spec.positionals.isEmpty {
                script += "complete -c ccbeacon -n \(quoted(condition)) -F\n"
            }
        }
        return script
    }
}

extension StringProtocol {
    /// The text without its leading spaces.
    func trimmingLeadingSpaces() -> String { String(drop { $0 == " " }) }
}

/// `ccbeacon completions bash|zsh|fish`.
enum CompletionsCommand {
    static let spec = CommandSpec(name: "completions", summary: "print a shell completion script", manual: manual) {
        table
    }
    static let table = CommandTable(
        details: """
            Prints the completion script for bash, zsh or fish, made from the same option tables as
            the parser and --help: commands, options, the values of options that take a fixed set
            (--verify crc|read), and files where files go. The packages install them; from a
            checkout:

            Example:
              ccbeacon completions bash > ~/.local/share/bash-completion/completions/ccbeacon
            """,
        options: [],
        positionals: [
            PositionalSpec(
                "SHELL", usage: shells.joined(separator: "|"), completion: .words(shells))
        ])
    static let command = Command(spec, run: run)

    /// The shells a script is made for, each with its maker.
    static let scripts: [(shell: String, make: @Sendable () -> String)] = [
        ("bash", Manual.bash), ("zsh", Manual.zsh), ("fish", Manual.fish),
    ]
    static let shells = scripts.map(\.shell)

    static func run(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        guard let script = scripts.first(where: { $0.shell == command.positionals[0] }) else {
            throw .usage(
                "no completion for '\(visible: command.positionals[0])'; give \(Option<Int>.alternatives(shells))")
        }
        console.data(script.make())
    }
}

/// `ccbeacon man-pages -o DIR`.
enum ManPagesCommand {
    static let spec = CommandSpec(name: "man-pages", summary: "write the man pages into a folder", manual: manual) {
        table
    }
    static let table = CommandTable(
        details: """
            Writes ccbeacon.1 and one page per command (ccbeacon-provision.1, ccbeacon-ledger-show.1,
            …) into the folder, made from the same option tables as the parser and --help. The
            packages install them (scripts/package runs this); each file is written whole.

            Example:
              ccbeacon man-pages -o man/
            """,
        options: [output.spec])
    static let output = Option<String>(
        "--output", short: "-o", value: "DIR", help: "the folder for the pages (made if missing)", completion: .folders
    ).required
    static let command = Command(spec, run: run)

    static func run(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        let folder = try command.value(output)
        do {
            if !Files.isDirectory(folder) { try Files.createDirectory(folder) }
            var written = 0
            try Files.writeAtomically(Array(Manual.overviewPage().utf8), to: Files.join(folder, "ccbeacon.1"))
            written += 1
            for spec in Manual.commands {
                try Files.writeAtomically(
                    Array(Manual.page(spec).utf8), to: Files.join(folder, Manual.pageName(spec.name) + ".1"))
                written += 1
            }
            console.output(line: "wrote \(written) man pages into \(folder)")
        } catch {
            throw CommandFailure(.failure, "\(error)", hint: "give -o a folder this user may write")
        }
    }
}

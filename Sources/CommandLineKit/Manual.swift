/// A tool as its manual describes it: its name (letters and digits: it names shell functions),
/// version, one-line summary, description, commands, and what its overview page says of all
/// of them.
public struct ToolDescription: Sendable {
    /// The program's name, as typed.
    public var name: String
    /// The version the pages and scripts carry.
    public var version: String
    /// One line, for the overview page's NAME.
    public var summary: String
    /// The overview page's DESCRIPTION, in the help's paragraphs.
    public var description: String
    /// Every command, in the order the overview lists them.
    public var commands: [CommandSpec]
    /// The overview page's sections that hold for every command (Markdown).
    public var overviewSections: [ManualSection]
    /// Every page's EXIT STATUS.
    public var exitStatuses: [ManualEntry]
    /// The overview page's FILES.
    public var files: [ManualEntry]
    /// Other programs' pages every page points to.
    public var seeAlso: [String]
    /// The overview page's EXAMPLES (Markdown, console blocks).
    public var examples: String

    /// A tool's description.
    public init(
        name: String, version: String, summary: String, description: String, commands: [CommandSpec],
        overviewSections: [ManualSection] = [], exitStatuses: [ManualEntry] = [], files: [ManualEntry] = [],
        seeAlso: [String] = [], examples: String = ""
    ) {
        self.name = name
        self.version = version
        self.summary = summary
        self.description = description
        self.commands = commands
        self.overviewSections = overviewSections
        self.exitStatuses = exitStatuses
        self.files = files
        self.seeAlso = seeAlso
        self.examples = examples
    }
}

/// A term and what it means: an exit status, a file.
public struct ManualEntry: Sendable {
    /// The status or path.
    public var term: String
    /// One line.
    public var meaning: String

    /// An entry.
    public init(_ term: String, _ meaning: String) {
        self.term = term
        self.meaning = meaning
    }
}

/// The man pages and shell completions, made from the very option tables the parser and `--help`
/// read: a command, an option or a fixed set of values is written once, in its table, and every
/// one of these follows.
public struct Manual: Sendable {
    /// The tool the pages and scripts are of.
    public let tool: ToolDescription

    /// The manual of `tool`.
    public init(_ tool: ToolDescription) { self.tool = tool }

    /// The commands with a page and a completion.
    public var commands: [CommandSpec] { tool.commands }

    /// The groups (`ledger`) and their subcommands' names (`show`, `export`, …).
    public var groups: [(name: String, subcommands: [String])] {
        ArgumentParser.groups(in: commands).map { group in
            (
                group,
                ArgumentParser.subcommands(of: group, in: commands).map { String($0.name.dropFirst(group.count + 1)) }
            )
        }
    }

    /// The words that may follow `ccbeacon`: the commands without a group, the groups, `help`.
    public var firstWords: [String] {
        var words: [String] = []
        for spec in commands {
            let first = String(spec.name.split(separator: " ")[0])
            if !words.contains(first) { words.append(first) }
        }
        return words + ["help"]
    }

    /// What a first word does: a command's summary, a group's subcommands, or `help`'s.
    public func summary(of word: String) -> String {
        if let spec = commands.first(where: { $0.name == word }) { return spec.summary }
        if let group = groups.first(where: { $0.name == word }) {
            return "subcommands: " + group.subcommands.joined(separator: ", ")
        }
        return "a command's help"
    }

    // MARK: - Man pages

    /// The page of the tool itself: its description, every command with its summary, and the
    /// sections that hold for every command.
    public func overviewPage() -> String {
        let name = Self.text(tool.name)
        var page = header(title: tool.name.uppercased(), name: tool.name, summary: tool.summary)
        page += ".SH SYNOPSIS\n.B \(name)\n.I COMMAND\n[\\fIOPTIONS\\fR]\n"
        page += ".br\n.B \(name) help\n.I COMMAND\n.br\n.B \(name) \\-\\-version\n"
        page += ".SH DESCRIPTION\n" + Self.paragraphs(tool.description)
        page += ".SH COMMANDS\n"
        for spec in commands {
            page +=
                ".TP\n.B " + Self.text(spec.name) + "\n" + Self.text(spec.summary) + " (see \\fB"
                + Self.text(pageName(spec.name))
                + "\\fR(1))\n"
        }
        page += Self.sections(tool.overviewSections)
        page += exitStatus + Self.entries("FILES", tool.files, tag: "I")
        if !tool.examples.isEmpty { page += ".SH EXAMPLES\n" + Self.roff(markdown: tool.examples) }
        page += seeAlso(except: tool.name)
        return page
    }

    /// The page of one command: usage, the details of its help, every option.
    public func page(_ spec: CommandSpec) -> String {
        var page = header(
            title: pageName(spec.name).uppercased(), name: pageName(spec.name), summary: spec.summary)
        page += ".SH SYNOPSIS\n"
        for (index, line) in spec.usageForms(of: tool.name).enumerated() {
            if index > 0 { page += ".br\n" }
            page += Self.text(line) + "\n"
        }
        page += ".SH DESCRIPTION\n" + Self.paragraphs(spec.details)
        page += ".SH OPTIONS\n"
        for option in spec.options {
            let names = [option.short, option.name].compactMap { $0 }.map { "\\fB" + Self.text($0) + "\\fR" }
            page +=
                ".TP\n" + names.joined(separator: ", ")
                + (option.valueName.map { " \\fI" + Self.text($0) + "\\fR" } ?? "") + "\n"
            page += Self.text(option.help) + (option.isRequired ? " (required)" : "") + "\n"
        }
        page += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow the help\n"
        page += Self.sections(spec.manual.sections) + exitStatus
        if !spec.manual.examples.isEmpty { page += ".SH EXAMPLES\n" + Self.roff(markdown: spec.manual.examples) }
        page += seeAlso(except: pageName(spec.name))
        return page
    }

    /// Reference sections as roff, each under its upper-case heading.
    package static func sections(_ sections: [ManualSection]) -> String {
        sections.map { ".SH " + Self.text($0.title.uppercased()) + "\n" + Self.roff(markdown: $0.text) }.joined()
    }

    /// `ledger show` → `ccbeacon-ledger-show`.
    public func pageName(_ command: String) -> String {
        tool.name + "-" + command.replacing(" ", with: "-")
    }

    /// The generator's note every page begins with: what tells a page this tool wrote, to be
    /// replaced, from a page of the user's.
    public var generatorNote: String {
        ".\\\" Generated by '\(tool.name) man-pages' from the option tables; do not edit.\n"
    }

    /// The page's first lines: the generator's note, .TH and NAME.
    package func header(title: String, name: String, summary: String) -> String {
        generatorNote
            + ".TH \(Self.text(title)) 1 \"\" \"\(Self.text(tool.name)) \(Self.text(tool.version))\" \"\(Self.text(tool.name)) manual\"\n"
            + ".SH NAME\n\(Self.text(name)) \\- \(Self.text(summary))\n"
    }

    /// The EXIT STATUS section, the same on every page.
    package var exitStatus: String { Self.entries("EXIT STATUS", tool.exitStatuses, tag: "B") }

    /// A section of tagged paragraphs: each tag in bold (`B`) or italics (`I`), its meaning below.
    package static func entries(_ title: String, _ entries: [ManualEntry], tag: String) -> String {
        guard !entries.isEmpty else { return "" }
        return ".SH " + Self.text(title) + "\n"
            + entries.map { ".TP\n.\(tag) " + Self.text($0.term) + "\n" + Self.text($0.meaning) + "\n" }.joined()
    }

    /// SEE ALSO: every other page of the tool, and the other programs' pages.
    package func seeAlso(except: String) -> String {
        let others = ([tool.name] + commands.map { pageName($0.name) }).filter { $0 != except } + tool.seeAlso
        return ".SH SEE ALSO\n" + others.map { "\\fB\(Self.text($0))\\fR(1)" }.joined(separator: ",\n") + "\n"
    }

    /// A help text's paragraphs as roff: blank lines part paragraphs; indented lines (examples,
    /// lists) are kept as they are, without filling.
    package static func paragraphs(_ details: String) -> String {
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
                result += Self.text(line.dropFirst(2)) + "\n"
            } else {
                if literal {
                    result += ".RE\n.fi\n"
                    literal = false
                }
                result += Self.text(line) + "\n"
            }
        }
        if literal { result += ".RE\n.fi\n" }
        return result
    }

    /// `line` as roff text: backslashes and dashes escaped, a leading `.` or `'` kept from being
    /// read as a request, and every character beyond ASCII written as `\[uXXXX]` (so the page is
    /// ASCII and reads the same whatever the reader's locale).
    package static func text<S: StringProtocol>(_ line: S) -> String {
        var result = ""
        for scalar in line.unicodeScalars {
            switch scalar {
            case "\\": result += "\\e"
            case "-": result += "\\-"
            case " "..."~": result.unicodeScalars.append(scalar)
            case "\t": result += " "
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        if result.hasPrefix(".") || result.hasPrefix("'") { result = "\\&" + result }
        return result
    }

    // MARK: - Completions

    /// The bash completion: one function that completes the command (and a group's subcommand),
    /// then options, the values of options with a fixed set, and files where files go.
    public func bash() -> String {
        var script = """
            # bash completion for \(tool.name) \(tool.version), made by '\(tool.name) completions bash' from its option tables.
            _\(tool.name)() {
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
                        if [ "$COMP_CWORD" -eq 2 ]; then
                            COMPREPLY=($(compgen -W "\(firstWords.filter { $0 != "help" }.joined(separator: " "))" -- "$cur"))
                        elif [ "$COMP_CWORD" -eq 3 ]; then
                            case "${COMP_WORDS[2]}" in

            """
        for group in groups {
            script += """
                                \(group.name)) COMPREPLY=($(compgen -W "\(group.subcommands.joined(separator: " "))" -- "$cur")) ;;

                """
        }
        script += """
                            esac
                        fi
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
                case .listed(let arguments, let orFolders):
                    // Read as lines and compared, never through compgen -W, which expands its words.
                    values +=
                        "                    \(names.joined(separator: "|"))) while IFS= read -r word; do [[ \"$word\" == \"$cur\"* ]] && COMPREPLY+=(\"$word\"); done < <(\(tool.name) \(arguments.joined(separator: " ")) 2>/dev/null)"
                        + (orFolders
                            ? "; mapfile -t -O \"${#COMPREPLY[@]}\" COMPREPLY < <(compgen -d -- \"$cur\")" : "")
                        + "; return ;;\n"
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
            case .files, .folders, .anything, .listed:
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
            complete -o filenames -o bashdefault -F _\(tool.name) \(tool.name)

            """
        return script
    }

    /// The zsh completion (`#compdef \(tool.name)`): `_arguments` per command, with each option's help.
    public func zsh() -> String {
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
                case .listed(let arguments, let orFolders):
                    action =
                        ":\(escaped(option.valueName ?? "value")):{compadd -- ${(f)\"$(\(tool.name) \(arguments.joined(separator: " ")) 2>/dev/null)\"}\(orFolders ? "; _files -/" : "")}"
                }
                for name in names { specs.append(quoted("\(name)[\(escaped(option.help))]\(action)")) }
            }
            specs.append(quoted("(- *)--help[show the help]"))
            switch spec.positionals.first?.completion ?? .anything {
            case .words(let choices):
                specs.append(quoted("1:\(escaped(spec.positionals[0].name)):(\(choices.joined(separator: " ")))"))
            case .files, .folders, .anything, .listed:
                if !spec.positionals.isEmpty { specs.append(quoted("*:file:_files")) }
            }
            return "_arguments -s " + specs.joined(separator: " \\\n                ")
        }
        var script = """
            #compdef \(tool.name)
            # zsh completion for \(tool.name) \(tool.version), made by '\(tool.name) completions zsh' from its option tables.
            _\(tool.name)() {
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
                    help)
                        if (( CURRENT == 2 )); then
                            _values 'command' \(firstWords.filter { $0 != "help" }.joined(separator: " "))
                        elif (( CURRENT == 3 )); then
                            case $words[2] in

            """
        for group in groups {
            script +=
                "                \(group.name)) _values 'subcommand' \(group.subcommands.joined(separator: " ")) ;;\n"
        }
        script += """
                            esac
                        fi
                        ;;
                esac
            }
            _\(tool.name) "$@"

            """
        return script
    }

    /// The fish completion: `complete` lines per command and option.
    public func fish() -> String {
        func quoted(_ text: String) -> String {
            "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
        }
        let groupNames = groups.map(\.name).joined(separator: " ")
        var script = """
            # fish completion for \(tool.name) \(tool.version), made by '\(tool.name) completions fish' from its option tables.
            # The command is the word after \(tool.name) (and a group's subcommand the next one): an
            # option's value that happens to be a command's name is not taken for one.
            function __\(tool.name)_command
                set -l tokens (commandline -opc)
                test (count $tokens) -ge 2; or return
                if contains -- $tokens[2] \(groupNames); and test (count $tokens) -ge 3
                    echo "$tokens[2] $tokens[3]"
                else
                    echo $tokens[2]
                end
            end
            function __\(tool.name)_is
                test "$(__\(tool.name)_command)" = "$argv"
            end
            function __\(tool.name)_needs_command
                test (count (commandline -opc)) -eq 1
            end
            complete -c \(tool.name) -f

            """
        for word in firstWords {
            let summary = summary(of: word)
            script +=
                "complete -c \(tool.name) -n '__\(tool.name)_needs_command' -a \(quoted(word)) -d \(quoted(summary))\n"
        }
        for group in groups {
            let subs = group.subcommands.joined(separator: " ")
            script += "complete -c \(tool.name) -n '__\(tool.name)_is \(group.name)' -a \(quoted(subs))\n"
        }
        // After help: a command, and after a group's name its subcommands (help's own tokens,
        // not __\(tool.name)_command's, which takes the word after help for nothing).
        script +=
            "complete -c \(tool.name) -n 'test (count (commandline -opc)) -eq 2; and test (commandline -opc)[2] = help' -a \(quoted(firstWords.filter { $0 != "help" }.joined(separator: " ")))\n"
        for group in groups {
            script +=
                "complete -c \(tool.name) -n 'test (count (commandline -opc)) -eq 3; and test (commandline -opc)[2] = help; and test (commandline -opc)[3] = \(group.name)' -a \(quoted(group.subcommands.joined(separator: " ")))\n"
        }
        for spec in commands {
            let parts = spec.name.split(separator: " ").map(String.init)
            let condition = "__\(tool.name)_is \(parts.joined(separator: " "))"
            for option in spec.options {
                var line = "complete -c \(tool.name) -n \(quoted(condition)) -l \(option.name.dropFirst(2))"
                if let short = option.short { line += " -s \(short.dropFirst())" }
                switch option.completion {
                case .words(let choices): line += " -x -a \(quoted(choices.joined(separator: " ")))"
                case .files: line += " -r -F"
                case .folders: line += " -x -a '(__fish_complete_directories)'"
                case .anything: if option.valueName != nil { line += " -x" }
                case .listed(let arguments, let orFolders):
                    line +=
                        " -x -a \(quoted("(\(tool.name) \(arguments.joined(separator: " ")) 2>/dev/null)" + (orFolders ? " (__fish_complete_directories)" : "")))"
                }
                script += line + " -d \(quoted(option.help))\n"
            }
            if case .words(let choices) = spec.positionals.first?.completion {
                script +=
                    "complete -c \(tool.name) -n \(quoted(condition)) -a \(quoted(choices.joined(separator: " ")))\n"
            } else if !spec.positionals.isEmpty {
                script += "complete -c \(tool.name) -n \(quoted(condition)) -F\n"
            }
        }
        return script
    }
}

/// One option a command accepts.
public struct OptionSpec: Sendable, Equatable {
    /// Long name with dashes, e.g. `--uuid`.
    public var name: String
    /// Optional short name with one dash, e.g. `-o`.
    public var short: String?
    /// Placeholder for the value (`UUID`, `N`); `nil` for a flag that takes none.
    public var valueName: String?
    /// One line of help.
    public var help: String

    /// Creates an option.
    public init(_ name: String, short: String? = nil, value valueName: String? = nil, help: String) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.help = help
    }
}

/// A command's grammar and help text.
public struct CommandSpec: Sendable {
    /// The word after `ccbeacon`.
    public var name: String
    /// One line for the command list.
    public var summary: String
    /// The usage line(s) after `usage: `.
    public var usage: String
    /// Longer help shown by `help COMMAND` and `COMMAND --help`.
    public var details: String
    /// Options.
    public var options: [OptionSpec]
    /// Names of the positional arguments, in order (for messages).
    public var positionalNames: [String]
    /// How many positional arguments are required.
    public var requiredPositionals: Int
    /// Options other commands have that this one refuses on purpose, with what to do instead
    /// (say, `--address` for a whole batch).
    public var refusedOptions: [String: String]

    /// Creates a command spec.
    public init(
        name: String, summary: String, usage: String, details: String, options: [OptionSpec],
        positionalNames: [String] = [], requiredPositionals: Int = 0, refusedOptions: [String: String] = [:]
    ) {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.details = details
        self.options = options
        self.positionalNames = positionalNames
        self.requiredPositionals = requiredPositionals
        self.refusedOptions = refusedOptions
    }
}

/// A syntactically valid command line.
public struct ParsedCommand: Sendable, Equatable {
    /// The command name.
    public var command: String
    /// Option values keyed by long name (`--uuid`).
    public var values: [String: String]
    /// Flags present, by long name.
    public var flags: Set<String>
    /// Positional arguments.
    public var positionals: [String]

    /// Creates a parsed command.
    public init(command: String, values: [String: String] = [:], flags: Set<String> = [], positionals: [String] = []) {
        self.command = command
        self.values = values
        self.flags = flags
        self.positionals = positionals
    }
}

/// What the command line asks for.
public enum Invocation: Sendable, Equatable {
    /// Run a command.
    case run(ParsedCommand)
    /// Show help: for one command or command group, or the overview when `nil`.
    case help(command: String?)
    /// Show the version.
    case version
}

/// A command line that does not parse: the message and the command it concerns (for its usage).
public struct UsageError: Error, Sendable, Equatable {
    /// What is wrong, in one line.
    public var message: String
    /// The command (or command group) whose usage should be shown, if known.
    public var command: String?

    /// Creates a usage error.
    public init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }
}

/// Pure argument parsing: argv (without the program name) in, an `Invocation` or a `UsageError` out.
public enum ArgumentParser {
    /// Parses `arguments` against `commands`.
    public static func parse(_ arguments: [String], commands: [CommandSpec]) -> Result<Invocation, UsageError> {
        guard let first = arguments.first else {
            return .failure(UsageError("no command given"))
        }
        switch first {
        case "-h", "--help": return .success(.help(command: nil))
        case "--version", "-V": return .success(.version)
        case "help":
            guard arguments.count <= 3 else { return .failure(UsageError("help takes at most one command name")) }
            guard arguments.count > 1 else { return .success(.help(command: nil)) }
            let topic = arguments.dropFirst().joined(separator: " ")
            // A group ("ledger") is a topic too: its help lists the subcommands.
            let topics = commands.map(\.name) + groups(in: commands)
            guard topics.contains(topic) else {
                return .failure(UsageError("no command named '\(topic)'\(suggestion(topic, among: topics))"))
            }
            return .success(.help(command: topic))
        default: break
        }
        if first.hasPrefix("-") {
            return .failure(UsageError("unknown option '\(first)'; options come after the command"))
        }
        // Two-word commands ("template import"): the first word names a group.
        let group = subcommands(of: first, in: commands)
        if !group.isEmpty {
            let subcommands = group.map { String($0.name.dropFirst(first.count + 1)) }
            guard arguments.count > 1, !arguments[1].hasPrefix("-") else {
                if arguments.count > 1, arguments[1] == "-h" || arguments[1] == "--help" {
                    return .success(.help(command: first))
                }
                return .failure(
                    UsageError("'\(first)' needs a subcommand: \(subcommands.joined(separator: ", "))", command: first))
            }
            guard let spec = group.first(where: { $0.name == first + " " + arguments[1] }) else {
                return .failure(
                    UsageError(
                        "unknown subcommand '\(first) \(arguments[1])'\(suggestion(arguments[1], among: subcommands)); use \(subcommands.map { "'\(first) \($0)'" }.joined(separator: ", "))",
                        command: first))
            }
            return parseCommand(spec, Array(arguments.dropFirst(2)))
        }
        guard let spec = commands.first(where: { $0.name == first }) else {
            return .failure(UsageError("unknown command '\(first)'\(suggestion(first, among: commands.map(\.name)))"))
        }
        return parseCommand(spec, Array(arguments.dropFirst()))
    }

    /// The first words of the two-word commands (`ledger`, `template`), in command order.
    static func groups(in commands: [CommandSpec]) -> [String] {
        var seen: [String] = []
        for spec in commands {
            guard let space = spec.name.firstIndex(of: " ") else { continue }
            let group = String(spec.name[..<space])
            if !seen.contains(group) { seen.append(group) }
        }
        return seen
    }

    /// The commands of `group` ("ledger show", "ledger export" for "ledger"); empty for a word
    /// that names no group.
    static func subcommands(of group: String, in commands: [CommandSpec]) -> [CommandSpec] {
        commands.filter { $0.name.hasPrefix(group + " ") }
    }

    static func parseCommand(_ spec: CommandSpec, _ arguments: [String]) -> Result<Invocation, UsageError> {
        var parsed = ParsedCommand(command: spec.name)
        var index = 0
        var optionsEnded = false
        func fail(_ message: String) -> Result<Invocation, UsageError> {
            .failure(UsageError(message, command: spec.name))
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" || argument == "--help" { return .success(.help(command: spec.name)) }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = spec.options.first(where: { $0.name == name || $0.short == name }) else {
                if let instead = spec.refusedOptions[name] {
                    return fail("\(name) does not apply to \(spec.name): \(instead)")
                }
                let names = spec.options.map(\.name) + ["--help"]
                return fail("unknown option '\(name)'\(suggestion(name, among: names))")
            }
            guard parsed.values[option.name] == nil, !parsed.flags.contains(option.name) else {
                return fail("option '\(option.name)' is given more than once")
            }
            if let valueName = option.valueName {
                if let inlineValue {
                    parsed.values[option.name] = inlineValue
                } else if index < arguments.count {
                    // The next word is the value even if it starts with '-' (e.g. --power -59).
                    parsed.values[option.name] = arguments[index]
                    index += 1
                } else {
                    return fail("option '\(name)' needs a value (\(option.name) \(valueName))")
                }
            } else {
                if inlineValue != nil { return fail("option '\(option.name)' takes no value") }
                parsed.flags.insert(option.name)
            }
        }
        if parsed.positionals.count < spec.requiredPositionals {
            let missing = spec.positionalNames[parsed.positionals.count]
            return fail("missing \(missing)")
        }
        if parsed.positionals.count > spec.positionalNames.count {
            return fail("unexpected argument '\(parsed.positionals[spec.positionalNames.count])'")
        }
        return .success(.run(parsed))
    }

    /// ` (did you mean 'x'?)` when one candidate is within two edits, else empty.
    static func suggestion(_ word: String, among candidates: [String]) -> String {
        let scored = candidates.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= 2 }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return "" }
        return " (did you mean '\(best.0)'?)"
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

import StructuredText

/// One option a command accepts, as the parser, `--help` and the usage line see it. Commands do
/// not build these by hand: they declare an `Option`, a `RequiredOption` or a `Flag`, whose `spec`
/// this is.
public struct OptionSpec: Sendable, Equatable {
    /// Long name with dashes, e.g. `--uuid`.
    public var name: String
    /// Optional short name with one dash, e.g. `-o`.
    public var short: String?
    /// Placeholder for the value (`UUID`, `N`); `nil` for a flag that takes none.
    public var valueName: String?
    /// One line of help.
    public var help: String
    /// Whether the command line must give it (the parser says "missing …" otherwise).
    public var isRequired: Bool
    /// The words a choice option takes (`Option(_:choosing:default:help:)`), which completion
    /// offers; nil for any other option.
    public var choices: [String]?
    /// The default, where the option has one the declaration states.
    public var defaultValue: String?
    /// What its value completes to (nothing for a flag).
    public var completion: ValueCompletion = .anything
    /// Converts a given value and throws what is wrong with it (the declaration's `convert`), so
    /// that every value is checked before a command touches a file, a ledger or a device; nil for
    /// a flag.
    package var check: (@Sendable (String) throws(CommandFailure) -> Void)? = nil

    /// Creates an option.
    public init(
        _ name: String, short: String? = nil, value valueName: String? = nil, help: String, required: Bool = false
    ) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.help = help
        self.isRequired = required
    }

    /// Equal when the parser, help and usage see the same option (`check` is the declaration's).
    public static func == (left: OptionSpec, right: OptionSpec) -> Bool {
        left.name == right.name && left.short == right.short && left.valueName == right.valueName
            && left.help == right.help && left.isRequired == right.isRequired
    }

    /// How the usage line writes it: `-o OUT.hex`, `--uuid UUID`, `--json`.
    package var usageText: String {
        (short ?? name) + (valueName.map { " " + $0 } ?? "")
    }

    /// The message for a command line that lacks it: `missing -o OUT: output file (.hex or .bin)`.
    package var missingMessage: String { "missing \(usageText): \(help)" }
}

/// An option that takes a value and may be left out: its table entry and how its text becomes a
/// `Value`. Commands read it with `ParsedCommand.value(_:)`, which runs `convert`, so a bad value
/// is reported in the same words wherever the option is used.
package struct Option<Value: Sendable>: Sendable {
    /// The table entry (names, placeholder, help).
    package let spec: OptionSpec
    /// Turns the text given on the command line into the value, or says what is wrong with it.
    package let convert: @Sendable (String) throws(CommandFailure) -> Value

    /// Declares an option whose value `convert` makes from the text.
    package init(
        _ name: String, short: String? = nil, value valueName: String, help: String,
        completion: ValueCompletion = .anything,
        convert: @escaping @Sendable (String) throws(CommandFailure) -> Value
    ) {
        var spec = OptionSpec(name, short: short, value: valueName, help: help)
        spec.completion = completion
        spec.check = { text throws(CommandFailure) in _ = try convert(text) }
        self.spec = spec
        self.convert = convert
    }

    /// The same option, required: the parser refuses a command line without it.
    package var required: RequiredOption<Value> { RequiredOption(self) }

    /// `value`, read with `ParsedCommand.value(_:)`, of an option a command needs only in some of its
    /// forms: refused as missing, in the words of a required option, when it was left out.
    package func needed(_ value: Value?) throws(CommandFailure) -> Value {
        guard let value else { throw .usage(spec.missingMessage) }
        return value
    }

    /// An option of `spec` that `convert` converts (the converter already checks through `spec`).
    package init(spec: OptionSpec, convert: @escaping @Sendable (String) throws(CommandFailure) -> Value) {
        self.spec = spec
        self.convert = convert
    }
}

extension Option where Value == String {
    /// Declares an option whose value is its text as given (a path, a name). A path (completed as
    /// files or folders) is never empty: `-o "$UNSET"` names no file, and is refused as such.
    package init(
        _ name: String, short: String? = nil, value valueName: String, help: String,
        completion: ValueCompletion = .anything
    ) {
        let isPath = completion.isPath
        self.init(name, short: short, value: valueName, help: help, completion: completion) {
            text throws(CommandFailure) in
            if isPath, text.isEmpty { throw .usage("\(name) needs a path, not an empty text") }
            return text
        }
    }
}

/// A value of a choice option: the word that names it on the command line.
package protocol OptionChoice: Sendable, Equatable {
    /// The word (`crc`, `packed`).
    var word: String { get }
}

extension OptionChoice where Self: RawRepresentable, RawValue == String {
    /// The raw value.
    package var word: String { rawValue }
}

extension Option where Value: OptionChoice {
    /// An option whose value is one of `choices`, declared once: the placeholder (`crc|read`),
    /// the help's list ("crc (default) or read" after `help`), the completion and the message for
    /// any other word all come from the list.
    package init(_ name: String, choosing choices: [Value], default defaultChoice: Value? = nil, help: String) {
        let words = choices.map(\.word)
        let listed = words.map { $0 == defaultChoice?.word ? "\($0) (default)" : $0 }
        self.init(name, value: words.joined(separator: "|"), help: "\(help): \(Self.alternatives(listed))") {
            text throws(CommandFailure) in
            guard let choice = choices.first(where: { $0.word == text }) else {
                throw .usage("\(name) must be \(Self.alternatives(words)), not '\(text)'")
            }
            return choice
        }
        var spec = self.spec
        spec.choices = words
        spec.completion = .words(words)
        spec.defaultValue = defaultChoice?.word
        self = Option(spec: spec, convert: convert)
    }

    /// `a`, `a or b`, `a, b or c`.
    package static func alternatives(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words.last!
    }
}

/// An option the command line must give (see `Option`).
package struct RequiredOption<Value: Sendable>: Sendable {
    /// The table entry, marked required.
    package let spec: OptionSpec
    /// See `Option.convert`.
    package let convert: @Sendable (String) throws(CommandFailure) -> Value

    /// The required form of `option`.
    package init(_ option: Option<Value>) {
        var spec = option.spec
        spec.isRequired = true
        self.spec = spec
        convert = option.convert
    }
}

/// An option without a value: present or not.
package struct Flag: Sendable {
    /// The table entry.
    package let spec: OptionSpec

    /// Declares a flag.
    package init(_ name: String, help: String) {
        spec = OptionSpec(name, help: help)
    }
}

/// Options of which the command line may give at most one (`--template` or `--board`); when
/// `required`, exactly one, and `missing` says what to give.
public struct OptionGroup: Sendable, Equatable {
    /// Long names of the members, in the order messages and usage lines name them.
    public var names: [String]
    /// Whether one member must be given.
    public var isRequired: Bool
    /// The message when a required group has no member given.
    public var missing: String

    /// Creates a group of `names`.
    public init(_ names: [String], required: Bool = false, missing: String? = nil) {
        self.names = names
        self.isRequired = required
        self.missing = missing ?? "give " + names.joined(separator: " or ")
    }
}

/// What a value completes to in the shells: fixed words, files, or anything (no completion).
/// Each option and positional says it where it is declared, never guessed from its placeholder.
public enum ValueCompletion: Sendable, Equatable {
    /// These words (a choice option's, or the fixed words of a value that also takes others).
    case words([String])
    /// Paths (files and folders).
    case files
    /// Folders only.
    case folders
    /// Anything: the shell offers nothing.
    case anything
    /// The lines the tool itself prints when run with these arguments (`templates --names`): names
    /// that depend on the machine; and folders too `orFolders` (a value that is a name or a
    /// folder). The shells take the lines as words, never as code.
    case listed(by: [String], orFolders: Bool)

    /// Whether the value is a path (files or folders), which is never empty.
    public var isPath: Bool { self == .files || self == .folders }
}

/// A positional argument: how messages name it (`IMAGE`) and how the usage line shows it
/// (`IMAGE.hex|IMAGE.bin`).
public struct PositionalSpec: Sendable, Equatable {
    /// The name in messages ("missing IMAGE").
    public var name: String
    /// The placeholder in the usage line.
    public var placeholder: String
    /// Whether it must be given (the required ones come first).
    public var isRequired: Bool
    /// What it completes to.
    public var completion: ValueCompletion

    /// Creates a positional argument.
    public init(
        _ name: String, usage placeholder: String? = nil, required: Bool = true, completion: ValueCompletion
    ) {
        self.name = name
        self.placeholder = placeholder ?? name
        self.isRequired = required
        self.completion = completion
    }
}

/// One piece of a hand-arranged usage line (see `CommandSpec.forms`): the words are still the
/// option table's, only their arrangement is chosen.
public enum UsageTerm: Sendable, Equatable {
    /// An option as the table writes it, bracketed when `optional`.
    case option(OptionSpec, optional: Bool)
    /// A fixed value for an option (`--type altbeacon`).
    case fixed(OptionSpec, String)
    /// Alternatives, each a sequence of terms: `(a | b)`, or `[a | b]` when `optional`.
    case choice([[UsageTerm]], optional: Bool)
    /// The rest of another form (`…`).
    case ellipsis
}

/// A command's grammar and help text: the table the parser, `--help` and the usage lines all read.
public struct CommandTable: Sendable {
    /// Longer help shown by `help COMMAND` and `COMMAND --help`.
    public var details: String
    /// Options, in the order help and the usage line list them.
    public var options: [OptionSpec]
    /// Positional arguments, in order.
    public var positionals: [PositionalSpec]
    /// Options of which at most one may be given.
    public var groups: [OptionGroup]
    /// Usage lines arranged by hand from table terms, for a command whose options depend on each
    /// other (encode's beacon types); empty for the line generated from the table.
    public var forms: [[UsageTerm]]
    /// Options other commands have that this one refuses on purpose, with what to do instead
    /// (say, `--address` for a whole batch).
    public var refusedOptions: [String: String]

    /// Creates a table.
    public init(
        details: String, options: [OptionSpec], positionals: [PositionalSpec] = [], groups: [OptionGroup] = [],
        forms: [[UsageTerm]] = [], refusedOptions: [String: String] = [:]
    ) {
        self.details = details
        self.options = options
        self.positionals = positionals
        self.groups = groups
        self.forms = forms
        self.refusedOptions = refusedOptions
    }
}

/// A command's name and summary, and its table, which is built the first time something needs it
/// (the parser, `--help`, the usage line): a run builds only its own command's table.
public struct CommandSpec: Sendable {
    /// The word after `ccbeacon`.
    public var name: String
    /// One line for the command list.
    public var summary: String
    /// The options, positionals and help, made on first use (a command's `static let` table).
    package let makeTable: @Sendable () -> CommandTable
    /// The man page's examples and reference, made on first use (only the manual reads them).
    package let makeManual: @Sendable () -> ManualPage

    /// A command whose table is `table`, and whose man page adds `manual`: both made when first
    /// needed (a command's `static let`s), so a run builds only its own command's table.
    public init(
        name: String, summary: String, manual: @autoclosure @escaping @Sendable () -> ManualPage = ManualPage(),
        table: @autoclosure @escaping @Sendable () -> CommandTable
    ) {
        self.name = name
        self.summary = summary
        makeTable = table
        makeManual = manual
    }

    /// A command with its table given at once.
    public init(
        name: String, summary: String, details: String, options: [OptionSpec],
        positionals: [PositionalSpec] = [], groups: [OptionGroup] = [], forms: [[UsageTerm]] = [],
        refusedOptions: [String: String] = [:]
    ) {
        let table = CommandTable(
            details: details, options: options, positionals: positionals, groups: groups, forms: forms,
            refusedOptions: refusedOptions)
        self.init(name: name, summary: summary, table: table)
    }

    /// The table.
    public var table: CommandTable { makeTable() }
    /// The man page's examples and reference sections beyond the help.
    public var manual: ManualPage { makeManual() }
    /// Longer help shown by `help COMMAND` and `COMMAND --help`.
    public var details: String { table.details }
    /// Options, in the order help and the usage line list them.
    public var options: [OptionSpec] { table.options }
    /// Positional arguments, in order.
    public var positionals: [PositionalSpec] { table.positionals }
    /// Options of which at most one may be given.
    public var groups: [OptionGroup] { table.groups }
    /// Hand-arranged usage lines (see `CommandTable.forms`).
    public var forms: [[UsageTerm]] { table.forms }
    /// Options refused on purpose (see `CommandTable.refusedOptions`).
    public var refusedOptions: [String: String] { table.refusedOptions }

    /// How many positional arguments must be given.
    package var requiredPositionals: Int { positionals.filter(\.isRequired).count }

    /// The usage line(s) of the command as `program NAME …`, without `usage: `, generated from the
    /// table: positionals, then the options in table order, optional ones bracketed, a group
    /// where its first member stands.
    public func usage(of program: String) -> String {
        usageForms(of: program).joined(separator: "\n       ")
    }

    /// The usage forms of `usage(of:)`, one `program NAME …` each, for a layout of their own.
    public func usageForms(of program: String) -> [String] {
        let lines = forms.isEmpty ? [generatedForm] : forms.map { $0.map(Self.render) }
        return lines.map { ([program, name] + $0).joined(separator: " ") }
    }

    /// The usage terms for the table as it is.
    package var generatedForm: [String] {
        var words = positionals.map { $0.isRequired ? $0.placeholder : "[\($0.placeholder)]" }
        var placedGroups: Set<Int> = []
        for option in options {
            if let index = groups.firstIndex(where: { $0.names.contains(option.name) }) {
                guard placedGroups.insert(index).inserted else { continue }
                let group = groups[index]
                let members = group.names.compactMap { name in options.first { $0.name == name }?.usageText }
                let inner = members.joined(separator: " | ")
                words.append(group.isRequired ? "(\(inner))" : "[\(inner)]")
            } else {
                words.append(option.isRequired ? option.usageText : "[\(option.usageText)]")
            }
        }
        return words
    }

    package static func render(_ term: UsageTerm) -> String {
        switch term {
        case .option(let option, let optional): return optional ? "[\(option.usageText)]" : option.usageText
        case .fixed(let option, let value): return "\(option.short ?? option.name) \(value)"
        case .choice(let alternatives, let optional):
            let inner = alternatives.map { $0.map(render).joined(separator: " ") }.joined(separator: " | ")
            return optional ? "[\(inner)]" : "(\(inner))"
        case .ellipsis: return "…"
        }
    }
}

/// A syntactically valid command line.
public struct ParsedCommand: Sendable, Equatable {
    /// The command name.
    public var command: String
    /// Option values keyed by long name (`--uuid`).
    public var values: [String: String] = [:]
    /// Flags present, by long name.
    public var flags: Set<String> = []
    /// Positional arguments.
    public var positionals: [String] = []

    /// The value of `option`, converted by its declaration; `nil` when it was not given.
    package func value<Value>(_ option: Option<Value>) throws(CommandFailure) -> Value? {
        guard let text = values[option.spec.name] else { return nil }
        return try option.convert(text)
    }

    /// The value of a required `option` (the parser has refused a command line without it).
    package func value<Value>(_ option: RequiredOption<Value>) throws(CommandFailure) -> Value {
        guard let text = values[option.spec.name] else { throw .usage(option.spec.missingMessage) }
        return try option.convert(text)
    }

    /// Whether `option` was given, whatever its value.
    package func isGiven<Value>(_ option: Option<Value>) -> Bool { values[option.spec.name] != nil }

    /// Whether `flag` was given.
    package func isSet(_ flag: Flag) -> Bool { flags.contains(flag.spec.name) }

    /// The long names of every option and flag given, sorted (for checks of which options go
    /// together).
    package var givenOptionNames: [String] { (Array(values.keys) + flags).sorted() }
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
                    UsageError(
                        "'\(first)' needs a subcommand: \(subcommands.joined(separator: ", "))", command: first
                    ))
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
            return .failure(
                UsageError("unknown command '\(first)'\(suggestion(first, among: commands.map(\.name)))"))
        }
        return parseCommand(spec, Array(arguments.dropFirst()))
    }

    /// The first words of the two-word commands (`ledger`, `template`), in command order.
    package static func groups(in commands: [CommandSpec]) -> [String] {
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
    package static func subcommands(of group: String, in commands: [CommandSpec]) -> [CommandSpec] {
        commands.filter { $0.name.hasPrefix(group + " ") }
    }

    package static func parseCommand(_ spec: CommandSpec, _ arguments: [String]) -> Result<Invocation, UsageError> {
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
            if argument.hasPrefix("--help=") { return fail("option '--help' takes no value") }
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
                    // The next word is the value when it cannot be an option: `--power -59` and
                    // `-o -` are values, `--ledger --yes` or `--ledger --jsno` forgot the ledger's
                    // name (taking the next word for it would open another ledger).
                    let next = arguments[index]
                    if looksLikeAnOption(next) {
                        let what = isOption(next, of: spec) ? "is an option" : "looks like an option"
                        return fail(
                            "option '\(name)' needs a value (\(option.name) \(valueName)), and '\(next)' \(what); to give that text as the value, write \(option.name)=\(next)"
                        )
                    }
                    parsed.values[option.name] = next
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
            return fail("missing \(spec.positionals[parsed.positionals.count].name)")
        }
        if parsed.positionals.count > spec.positionals.count {
            return fail("unexpected argument '\(parsed.positionals[spec.positionals.count])'")
        }
        // A path is never empty, as a path option's value (`ccbeacon batch "$UNSET"`).
        for (positional, text) in zip(spec.positionals, parsed.positionals)
        where text.isEmpty && positional.completion.isPath {
            return fail("\(positional.name) needs a path, not an empty text")
        }
        let given = Set(parsed.values.keys).union(parsed.flags)
        if let missing = spec.options.first(where: { $0.isRequired && !given.contains($0.name) }) {
            return fail(missing.missingMessage)
        }
        for group in spec.groups {
            let present = group.names.filter(given.contains)
            if present.count > 1 { return fail("give \(present.joined(separator: " or ")), not both") }
            if present.isEmpty, group.isRequired { return fail(group.missing) }
        }
        return .success(.run(parsed))
    }

    /// Whether `word` would be read as an option rather than a value: anything starting with `-`
    /// except `-` itself and a negative number (`-59`, `-0.5`).
    package static func looksLikeAnOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word != "-" else { return false }
        let rest = word.dropFirst()
        return !(rest.first.map { $0.isASCII && ($0.isNumber || $0 == ".") } ?? false)
    }

    /// Whether `word` names one of `spec`'s options or help (`--name`, `-o`, `--name=…`).
    package static func isOption(_ word: String, of spec: CommandSpec) -> Bool {
        guard word.hasPrefix("-"), word != "-" else { return false }
        let name = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        if word == "-h" || name == "--help" { return true }
        return spec.options.contains { $0.name == name || $0.short == word }
    }

    /// ` (did you mean 'x'?)` when one candidate is within two edits, else empty.
    package static func suggestion(_ word: String, among candidates: [String]) -> String {
        let scored = candidates.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= 2 }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return "" }
        return " (did you mean '\(best.0)'?)"
    }

    package static func editDistance(_ a: String, _ b: String) -> Int {
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

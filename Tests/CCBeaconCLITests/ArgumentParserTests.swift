import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

struct ArgumentParserTests {
    static let demo = CommandSpec(
        name: "demo", summary: "s", details: "d",
        options: [
            OptionSpec("--uuid", value: "UUID", help: ""), OptionSpec("--power", value: "DBM", help: ""),
            OptionSpec("--output", short: "-o", value: "OUT", help: ""), OptionSpec("--bin", help: ""),
        ],
        positionals: [
            PositionalSpec("IN file", completion: .files),
            PositionalSpec("EXTRA", required: false, completion: .anything),
        ])
    static let commands = [
        demo, CommandSpec(name: "other", summary: "", details: "", options: []),
        CommandSpec(
            name: "group add", summary: "", details: "", options: [],
            positionals: [PositionalSpec("X", completion: .anything)]),
        CommandSpec(name: "group remove", summary: "", details: "", options: []),
        CommandSpec(
            name: "needs", summary: "", details: "",
            options: [
                OptionSpec("--at", value: "ADDR", help: "where", required: true),
                OptionSpec("--template", value: "T", help: ""), OptionSpec("--board", value: "B", help: ""),
                OptionSpec("--mac", value: "XX", help: ""), OptionSpec("--keep", help: ""),
            ],
            groups: [
                OptionGroup(["--template", "--board"], required: true, missing: "give --template or --board"),
                OptionGroup(["--mac", "--keep"]),
            ]),
    ]

    static func parse(_ line: String) -> Result<Invocation, UsageError> {
        ArgumentParser.parse(line.isEmpty ? [] : line.split(separator: " ").map(String.init), commands: commands)
    }

    @Test(arguments: [
        ("demo in.hex", ParsedCommand(command: "demo", positionals: ["in.hex"])),
        ("demo in.hex --uuid U", ParsedCommand(command: "demo", values: ["--uuid": "U"], positionals: ["in.hex"])),
        ("demo --uuid=U in.hex", ParsedCommand(command: "demo", values: ["--uuid": "U"], positionals: ["in.hex"])),
        ("demo --uuid= in.hex", ParsedCommand(command: "demo", values: ["--uuid": ""], positionals: ["in.hex"])),
        (
            "demo in.hex --power -59",
            ParsedCommand(command: "demo", values: ["--power": "-59"], positionals: ["in.hex"])
        ),
        (
            "demo in.hex -o out.bin --bin",
            ParsedCommand(command: "demo", values: ["--output": "out.bin"], flags: ["--bin"], positionals: ["in.hex"])
        ),
        ("demo -- -weird.hex", ParsedCommand(command: "demo", positionals: ["-weird.hex"])),
        ("demo - x", ParsedCommand(command: "demo", positionals: ["-", "x"])),
        ("demo in.hex --uuid a=b", ParsedCommand(command: "demo", values: ["--uuid": "a=b"], positionals: ["in.hex"])),
        ("demo in.hex -o -", ParsedCommand(command: "demo", values: ["--output": "-"], positionals: ["in.hex"])),
        (
            "demo in.hex --power -0.5",
            ParsedCommand(command: "demo", values: ["--power": "-0.5"], positionals: ["in.hex"])
        ),
        (
            "demo in.hex --uuid=--bin",
            ParsedCommand(command: "demo", values: ["--uuid": "--bin"], positionals: ["in.hex"])
        ),
        ("group add thing", ParsedCommand(command: "group add", positionals: ["thing"])),
    ])
    func parsesValidCommandLines(line: String, expected: ParsedCommand) {
        #expect(Self.parse(line) == .success(.run(expected)))
    }

    @Test(arguments: [
        ("--help", Invocation.help(command: nil)), ("-h", .help(command: nil)), ("help", .help(command: nil)),
        ("help demo", .help(command: "demo")), ("demo --help", .help(command: "demo")),
        ("demo in.hex --bogus -h", .help(command: "demo")), ("--version", .version), ("-V", .version),
        ("help group add", .help(command: "group add")), ("group add --help", .help(command: "group add")),
        ("group -h", .help(command: "group")), ("help group", .help(command: "group")),
        ("group --help", .help(command: "group")), ("help group remove", .help(command: "group remove")),
    ])
    func recognisesHelpAndVersion(line: String, expected: Invocation) {
        // Help wins over errors that come before it only when it is reached first; here -h follows
        // an unknown option, so the unknown option is reported instead.
        let result = Self.parse(line)
        if line == "demo in.hex --bogus -h" {
            #expect(result == .failure(UsageError("unknown option '--bogus'", command: "demo")))
        } else {
            #expect(result == .success(expected))
        }
    }

    @Test(arguments: [
        ("", UsageError("no command given")),
        ("frobnicate", UsageError("unknown command 'frobnicate'")),
        ("dem", UsageError("unknown command 'dem' (did you mean 'demo'?)")),
        ("--uuid x", UsageError("unknown option '--uuid'; options come after the command")),
        ("help nothing", UsageError("no command named 'nothing'")),
        ("help demo other more", UsageError("help takes at most one command name")),
        ("help demo other", UsageError("no command named 'demo other'")),
        ("group", UsageError("'group' needs a subcommand: add, remove", command: "group")),
        ("group --x", UsageError("'group' needs a subcommand: add, remove", command: "group")),
        (
            "group ad",
            UsageError(
                "unknown subcommand 'group ad' (did you mean 'add'?); use 'group add', 'group remove'", command: "group"
            )
        ),
        ("help group ad", UsageError("no command named 'group ad' (did you mean 'group add'?)")),
        ("help grou", UsageError("no command named 'grou' (did you mean 'group'?)")),
        ("demo", UsageError("missing IN file", command: "demo")),
        ("demo a b c", UsageError("unexpected argument 'c'", command: "demo")),
        ("demo in.hex --uid x", UsageError("unknown option '--uid' (did you mean '--uuid'?)", command: "demo")),
        ("demo in.hex --uuid", UsageError("option '--uuid' needs a value (--uuid UUID)", command: "demo")),
        ("demo in.hex -o", UsageError("option '-o' needs a value (--output OUT)", command: "demo")),
        ("demo in.hex --uuid a --uuid b", UsageError("option '--uuid' is given more than once", command: "demo")),
        ("demo in.hex -o a --output b", UsageError("option '--output' is given more than once", command: "demo")),
        ("demo in.hex --bin=yes", UsageError("option '--bin' takes no value", command: "demo")),
        ("demo in.hex -x", UsageError("unknown option '-x'", command: "demo")),
        (
            "demo in.hex --uuid --bin",
            UsageError(
                "option '--uuid' needs a value (--uuid UUID), and '--bin' is an option; to give that text as the value, write --uuid=--bin",
                command: "demo")
        ),
        (
            "demo in.hex -o --power=3",
            UsageError(
                "option '-o' needs a value (--output OUT), and '--power=3' is an option; to give that text as the value, write --output=--power=3",
                command: "demo")
        ),
        (
            "demo in.hex --uuid -h",
            UsageError(
                "option '--uuid' needs a value (--uuid UUID), and '-h' is an option; to give that text as the value, write --uuid=-h",
                command: "demo")
        ),
        ("demo in.hex --help=1", UsageError("option '--help' takes no value", command: "demo")),
        (
            "demo in.hex --uuid --jsno",
            UsageError(
                "option '--uuid' needs a value (--uuid UUID), and '--jsno' looks like an option; to give that text as the value, write --uuid=--jsno",
                command: "demo")
        ),
        (
            "demo in.hex -o -x.hex",
            UsageError(
                "option '-o' needs a value (--output OUT), and '-x.hex' looks like an option; to give that text as the value, write --output=-x.hex",
                command: "demo")
        ),
        ("needs --board b", UsageError("missing --at ADDR: where", command: "needs")),
        ("needs --at 1", UsageError("give --template or --board", command: "needs")),
        ("needs --at 1 --board b --template t", UsageError("give --template or --board, not both", command: "needs")),
        ("needs --at 1 --board b --keep --mac x", UsageError("give --mac or --keep, not both", command: "needs")),
    ])
    func reportsExactUsageErrors(line: String, expected: UsageError) {
        #expect(Self.parse(line) == .failure(expected))
    }

    @Test func aRequiredOptionAndAGroupMemberAreEnough() {
        #expect(
            Self.parse("needs --at 1 --board b")
                == .success(.run(ParsedCommand(command: "needs", values: ["--at": "1", "--board": "b"]))))
    }

    /// The usage line is generated from the table: positionals, then options in table order, the
    /// optional ones bracketed, a group (required in parentheses) where its first member stands.
    @Test func usageLinesAreGeneratedFromTheTable() {
        #expect(Self.demo.usage == "ccbeacon demo IN file [EXTRA] [--uuid UUID] [--power DBM] [-o OUT] [--bin]")
        #expect(
            Self.commands[4].usage
                == "ccbeacon needs --at ADDR (--template T | --board B) [--mac XX | --keep]")
    }

    /// Hand-arranged forms use the table's words too.
    @Test func formsRenderTableTerms() {
        let type = OptionSpec("--type", value: "TYPE", help: "")
        let url = OptionSpec("--url", value: "URL", help: "")
        let spec = CommandSpec(
            name: "x", summary: "", details: "", options: [type, url],
            forms: [
                [.fixed(type, "a"), .choice([[.option(url, optional: false)], [.ellipsis]], optional: true)],
                [.option(url, optional: true)],
            ])
        #expect(spec.usage == "ccbeacon x --type a [--url URL | …]\n       ccbeacon x [--url URL]")
    }

    /// A typed option converts when read, with its declaration's conversion and messages.
    @Test func typedOptionsConvertWhenRead() throws {
        let count = Option<Int>("--count", value: "N", help: "how many") { text throws(CommandFailure) in
            guard let value = Int(text) else { throw .usage("--count '\(text)' is not a number") }
            return value
        }
        let flag = Flag("--all", help: "")
        let given = ParsedCommand(command: "c", values: ["--count": "7"], flags: ["--all"])
        #expect(try given.value(count) == 7)
        #expect(try given.value(count.required) == 7)
        #expect(given.isGiven(count) && given.isSet(flag))
        let absent = ParsedCommand(command: "c")
        #expect(try absent.value(count) == nil)
        #expect(!absent.isGiven(count) && !absent.isSet(flag))
        #expect(throws: CommandFailure.self) { try absent.value(count.required) }
        do {
            _ = try ParsedCommand(command: "c", values: ["--count": "x"]).value(count)
            Issue.record("a bad value converted")
        } catch {
            #expect(error.message == "--count 'x' is not a number" && error.exitCode == .usage)
        }
    }

    @Test func editDistanceSuggestsOnlyCloseNames() {
        #expect(ArgumentParser.suggestion("--majr", among: ["--major", "--minor"]) == " (did you mean '--major'?)")
        #expect(ArgumentParser.suggestion("--zzzzzz", among: ["--major", "--minor"]) == "")
        #expect(ArgumentParser.editDistance("", "abc") == 3)
    }
}

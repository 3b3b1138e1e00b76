import Testing

@testable import CCBeaconCLI

struct ArgumentParserTests {
    static let demo = CommandSpec(
        name: "demo", summary: "s", usage: "u", details: "d",
        options: [
            OptionSpec("--uuid", value: "UUID", help: ""), OptionSpec("--power", value: "DBM", help: ""),
            OptionSpec("--output", short: "-o", value: "OUT", help: ""), OptionSpec("--bin", help: ""),
        ], positionalNames: ["IN file", "EXTRA"], requiredPositionals: 1)
    static let commands = [
        demo, CommandSpec(name: "other", summary: "", usage: "", details: "", options: []),
        CommandSpec(
            name: "group add", summary: "", usage: "", details: "", options: [], positionalNames: ["X"],
            requiredPositionals: 1),
        CommandSpec(name: "group remove", summary: "", usage: "", details: "", options: []),
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
    ])
    func reportsExactUsageErrors(line: String, expected: UsageError) {
        #expect(Self.parse(line) == .failure(expected))
    }

    @Test func editDistanceSuggestsOnlyCloseNames() {
        #expect(ArgumentParser.suggestion("--majr", among: ["--major", "--minor"]) == " (did you mean '--major'?)")
        #expect(ArgumentParser.suggestion("--zzzzzz", among: ["--major", "--minor"]) == "")
        #expect(ArgumentParser.editDistance("", "abc") == 3)
    }
}

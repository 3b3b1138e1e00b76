/// The `$ COMMAND` lines of Markdown ` ```console ` blocks (a README, a man page's text) with the
/// lines shown under each, and the rule by which a shown line matches what a command printed:
/// one reading for every test that runs documented examples.
public struct ConsoleExample: Sendable {
    /// The command line as written, `sudo ` dropped.
    public let command: String
    /// The lines shown under it.
    public let shown: [String]

    /// An example of `command` showing `shown`.
    public init(command: String, shown: [String]) {
        self.command = command
        self.shown = shown
    }

    /// The examples of `text` whose command starts with one of `programs` (`"ccbeacon "`).
    public static func all(in text: String, running programs: [String]) -> [ConsoleExample] {
        var result: [ConsoleExample] = []
        var inConsole = false
        var current: ConsoleExample?
        func flush() {
            if let current { result.append(current) }
            current = nil
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                flush()
                inConsole = line == "```console"
                continue
            }
            guard inConsole else { continue }
            if line.hasPrefix("$ ") {
                flush()
                var command = String(line.dropFirst(2))
                if command.hasPrefix("sudo ") { command = String(command.dropFirst(5)) }
                guard programs.contains(where: command.hasPrefix) else { continue }
                current = ConsoleExample(command: command, shown: [])
            } else if let example = current {
                current = ConsoleExample(command: example.command, shown: example.shown + [line])
            }
        }
        flush()
        return result
    }

    /// Whether `given`, a line a command printed, is the shown line `shown`: `…` stands for any
    /// text, and a path written `./NAME` (as a command run there prints it) is `NAME`.
    public static func matches(_ given: String, shown: String) -> Bool {
        let line = given.replacing(" ./", with: " ")
        let shown = shown.replacing(" ./", with: " ")
        let pieces = shown.components(separatedBy: "…")
        guard pieces.count > 1 else { return line == shown }
        guard line.hasPrefix(pieces[0]), line.hasSuffix(pieces[pieces.count - 1]) else { return false }
        var rest = line.dropFirst(pieces[0].count)
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let range = rest.range(of: piece) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.count >= pieces[pieces.count - 1].count
    }

    /// Whether `output`'s lines hold every non-empty shown line, in order; the first one missing
    /// otherwise.
    public func firstMissing(in output: String) -> String? {
        let actual = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var next = 0
        for line in shown where !line.isEmpty {
            guard let found = actual[next...].firstIndex(where: { Self.matches($0, shown: line) }) else { return line }
            next = found + 1
        }
        return nil
    }
}

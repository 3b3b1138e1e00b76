import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// Help is laid out for 100 columns: long lines break at spaces, their continuation indented;
/// short ones stay as written.
struct HelpLayoutTests {
    @Test(
        arguments: [
            // (line, width, indent, lines)
            ("short enough", 20, nil, ["short enough"]),
            ("one two three four", 9, nil, ["one two", "three", "four"]),
            (
                "  --x N    the help text here", 16, 11,
                ["  --x N    the", "           help", "           text", "           here"]
            ),
            ("    indented words go on", 12, nil, ["    indented", "    words go", "    on"]),
            ("averyveryverylongword and more", 10, nil, ["averyveryverylongword", "and more"]),
            ("a b", 1, nil, ["a", "b"]),
            ("      ", 2, nil, ["      "]),
        ] as [(String, Int, Int?, [String])])
    func breaksAtSpaces(line: String, width: Int, indent: Int?, expected: [String]) {
        #expect(HelpLayout.wrap(line, width: width, indent: indent) == expected)
    }

    /// Every line of every command's help fits, but for a word that alone is wider; and the
    /// words are the table's, in order.
    @Test func everyHelpFitsItsWidth() {
        let names = CommandLineTool.commands.map(\.name) + ["template", "ledger"]
        for name in names {
            let help = CommandLineTool.help(for: name)
            for line in help.split(separator: "\n") where line.count > HelpLayout.width {
                #expect(!line.trimmingPrefix(while: { $0 == " " }).contains(" "), "\(name): \(line)")
            }
        }
        #expect(CommandLineTool.overview().split(separator: "\n").allSatisfy { $0.count <= HelpLayout.width })
        let flash = CommandLineTool.help(for: "flash")
        let words = { (text: String) in text.split(whereSeparator: \.isWhitespace) }
        let spec = CommandLineTool.commands.first { $0.name == "flash" }!
        #expect(words(flash).starts(with: words("ccbeacon flash: \(spec.summary)\n\nusage: \(spec.usage)")))
    }
}

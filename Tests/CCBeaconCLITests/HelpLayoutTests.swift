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

    /// A usage line breaks between its terms only: never inside brackets, never between an
    /// option and its value.
    @Test(
        arguments: [
            ("usage: x --minor N [--a b] -o F", 16, ["usage: x", "  --minor N", "  [--a b] -o F"]),
            ("usage: x [--verify crc|read|none] --y", 20, ["usage: x", "  [--verify crc|read|none]", "  --y"]),
            ("usage: x (--t T | --b B) --z", 14, ["usage: x", "  (--t T | --b B)", "  --z"]),
        ] as [(String, Int, [String])])
    func usageBreaksBetweenTerms(line: String, width: Int, expected: [String]) {
        #expect(HelpLayout.wrap(line, width: width, indent: 2, keepingGroups: true) == expected)
    }

    /// An example command line in the details stays whole (it is copied); prose around it wraps.
    @Test func examplesStayWhole() {
        let example = "  ccbeacon patch a.hex --at 0x333 --bytes 00 -o b.hex"
        let text = "Some prose that is long enough to wrap.\n" + example + "\n$ ccbeacon x y z"
        #expect(
            HelpLayout.wrap(text: text, width: 20)
                == "Some prose that is\nlong enough to wrap.\n\(example)\n$ ccbeacon x y z")
    }

    /// Every line of every command's help fits, but for a word that alone is wider or an example
    /// command line; and the words are the table's, in order.
    @Test func everyHelpFitsItsWidth() {
        let names = CommandLineTool.commands.map(\.name) + ["template", "ledger"]
        for name in names {
            let help = CommandLineTool.help(for: name)
            for line in help.split(separator: "\n") where line.count > HelpLayout.width {
                let content = line.trimmingPrefix(while: { $0 == " " })
                #expect(!content.contains(" ") || content.hasPrefix("ccbeacon "), "\(name): \(line)")
            }
        }
        #expect(CommandLineTool.overview().split(separator: "\n").allSatisfy { $0.count <= HelpLayout.width })
        let flash = CommandLineTool.help(for: "flash")
        let words = { (text: String) in text.split(whereSeparator: \.isWhitespace) }
        let spec = CommandLineTool.commands.first { $0.name == "flash" }!
        #expect(words(flash).starts(with: words("ccbeacon flash: \(spec.summary)\n\nusage: \(spec.usage)")))
    }
}

import Synchronization
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

struct ProgressTests {
    static func render(terminal: Bool, total: Int) -> String {
        let text = Mutex("")
        let console = Console(
            output: { _ in }, diagnostics: { line in text.withLock { $0 += line } }, diagnosticsIsTerminal: terminal)
        let reporter = ProgressReporter(console: console, label: "generating")
        for done in 1...total { reporter.update(done: done, total: total) }
        return text.withLock { $0 }
    }

    @Test func terminalRedrawsOneBarInPlace() {
        let text = Self.render(terminal: true, total: 200)
        #expect(
            text.hasPrefix(
                "\rgenerating [...............................] 1/200".replacingOccurrences(
                    of: "...............................", with: String(repeating: ".", count: 30))))
        #expect(text.hasSuffix("\rgenerating [\(String(repeating: "#", count: 30))] 200/200\n"))
        #expect(text.filter { $0 == "\n" }.count == 1, "only the final line ends")
        #expect(text.components(separatedBy: "\r").count - 1 <= 101, "at most one redraw per percent")
    }

    @Test func pipedPrintsALinePerTenPercent() {
        let lines = Self.render(terminal: false, total: 1000).split(separator: "\n")
        #expect(lines.count == 10)
        #expect(lines.first == "generating: 100/1000 (10%)")
        #expect(lines.last == "generating: 1000/1000 (100%)")
    }

    /// Piped, a line is printed each time another tenth is done (and at the end), and the number
    /// in it is the true whole percentage, not the tenth it passed.
    @Test(arguments: [
        (7, ["1/7 (14%)", "2/7 (28%)", "3/7 (42%)", "4/7 (57%)", "5/7 (71%)", "6/7 (85%)", "7/7 (100%)"]),
        (3, ["1/3 (33%)", "2/3 (66%)", "3/3 (100%)"]),
        (1, ["1/1 (100%)"]),
        (
            15,
            [
                "2/15 (13%)", "3/15 (20%)", "5/15 (33%)", "6/15 (40%)", "8/15 (53%)", "9/15 (60%)", "11/15 (73%)",
                "12/15 (80%)", "14/15 (93%)", "15/15 (100%)",
            ]
        ),
    ])
    func pipedLinesShowTheTruePercentage(total: Int, expected: [String]) {
        let lines = Self.render(terminal: false, total: total).split(separator: "\n").map(String.init)
        #expect(lines == expected.map { "generating: " + $0 })
    }
}

import Synchronization
import Testing

@testable import CCBeaconCLI

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
}

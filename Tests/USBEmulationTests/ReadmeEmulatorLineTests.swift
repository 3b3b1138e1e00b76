import Foundation
import TestSupport
import Testing

/// The README's `$ cc-debugger-emulator … -- ccbeacon …` lines run as written: the real emulator
/// with the line's own options, through umockdev and libusb, in a folder holding the README's
/// station list; the exit status must be 0 and every line shown under it must appear in order.
/// (`ReadmeExampleTests` runs their ccbeacon part in process; this runs the whole line.)
@Suite(
    .serialized, .enabled(if: Tools.available, "needs umockdev (scripts/test installs it) and the built executables"))
struct ReadmeEmulatorLineTests {
    /// The README's emulator lines, each with the lines shown under it.
    static let lines: [ConsoleExample] = ConsoleExample.all(
        in: (try? String(contentsOf: SharedFixtures.checkout.appendingPathComponent("README.md"), encoding: .utf8))
            ?? "",
        running: ["cc-debugger-emulator "])

    @Test func theReadmeHasAnEmulatorLine() {
        #expect(!Self.lines.isEmpty)
    }

    @Test(arguments: lines.indices)
    func runsAsWritten(index: Int) throws {
        let example = Self.lines[index]
        let work = try Workspace()
        defer { work.remove() }
        try FileManager.default.copyItem(
            at: SharedFixtures.checkout.appendingPathComponent("Tests/CCBeaconCLITests/Fixtures/readme/stations.csv"),
            to: work.url.appendingPathComponent("stations.csv"))
        var words = example.command.split(separator: " ").map(String.init)
        words.removeFirst()  // cc-debugger-emulator
        let separator = try #require(words.firstIndex(of: "--"))
        #expect(words[separator + 1] == "ccbeacon")
        words[separator + 1] = Tools.ccbeacon
        let run = try ChildProcess.run(Tools.emulator, words, in: work.url)
        #expect(run.status == 0, "\(run.output)\n\(run.errors)")
        // Standard error first: the log lines come before the summary, as a terminal shows them.
        if let missing = example.firstMissing(in: run.errors + run.output) {
            Issue.record("not in the output: \(missing)\n\(run.errors)\n\(run.output)")
        }
    }
}

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
    static let lines: [(line: String, shown: [String])] = {
        let readme =
            (try? String(contentsOf: SharedFixtures.checkout.appendingPathComponent("README.md"), encoding: .utf8))
            ?? ""
        var result: [(String, [String])] = []
        var inConsole = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                inConsole = line == "```console"
            } else if inConsole, line.hasPrefix("$ ") {
                result.append((String(line.dropFirst(2)), []))
            } else if inConsole, !result.isEmpty {
                result[result.count - 1].1.append(line)
            }
        }
        return result.filter { $0.0.hasPrefix("cc-debugger-emulator ") }
    }()

    @Test func theReadmeHasAnEmulatorLine() {
        #expect(!Self.lines.isEmpty)
    }

    @Test(arguments: lines.indices)
    func runsAsWritten(index: Int) throws {
        let (line, shown) = Self.lines[index]
        let work = try Workspace()
        defer { work.remove() }
        try FileManager.default.copyItem(
            at: SharedFixtures.checkout.appendingPathComponent("Tests/CCBeaconCLITests/Fixtures/readme/stations.csv"),
            to: work.url.appendingPathComponent("stations.csv"))
        var words = line.split(separator: " ").map(String.init)
        words.removeFirst()  // cc-debugger-emulator
        let separator = try #require(words.firstIndex(of: "--"))
        #expect(words[separator + 1] == "ccbeacon")
        words[separator + 1] = Tools.ccbeacon
        let run = try ChildProcess.run(Tools.emulator, words, in: work.url)
        #expect(run.status == 0, "\(run.output)\n\(run.errors)")
        let actual = (run.errors + run.output).split(separator: "\n").map(String.init)
        var next = 0
        for expected in shown where !expected.isEmpty && expected != "…" {
            let pieces = expected.components(separatedBy: "…")
            guard
                let found = actual[next...].firstIndex(where: { candidate in
                    var rest = Substring(candidate)
                    for (position, piece) in pieces.enumerated() where !piece.isEmpty {
                        guard let range = rest.range(of: piece) else { return false }
                        if position == 0, range.lowerBound != rest.startIndex { return false }
                        rest = rest[range.upperBound...]
                    }
                    return true
                })
            else {
                Issue.record("not in the output: \(expected)\n\(run.errors)\n\(run.output)")
                break
            }
            next = found + 1
        }
    }
}

import Foundation
import Provisioning
import Stations
import StructuredText
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// Issue 17, first part: names a list can no longer bring in (escape sequences, bidirectional
/// overrides, formula prefixes) may still sit in an old or hand-edited ledger. Whatever it holds,
/// the terminal never gets the raw characters, the CSV never a cell a spreadsheet runs, the JSON
/// always parses.
struct UntrustedOutputTests {
    /// `=evil<ESC>[2J<RLO>x`: a formula, a clear-screen and a right-to-left override.
    static let hostile = "'=evil' || char(27) || '[2J' || char(8238) || 'x'"

    static func ledger(_ scratch: Scratch) throws -> String {
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        try LedgerFiles.alter(
            path,
            [
                "UPDATE attempts SET station = \(hostile), debugger = '+' || char(27) || ']0;title' || char(7) WHERE station = 'a'",
                "UPDATE stations SET name = \(hostile) WHERE name = 'a'",
                "UPDATE stations SET name = '@b' || char(8238) WHERE name = 'b'",
            ])
        return path
    }

    @Test func ledgerShowPrintsNoRawControlOrBidiCharacter() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = try Self.ledger(scratch)
        let show = ToolRun(["ledger", "show", "--ledger", path])
        #expect(show.status == 0, "\(show.diagnostics)")
        #expect(!show.output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" || $0 == "\u{07}" })
        #expect(show.output.contains(#"=evil\x1b[2J\u{202E}x"#), "\(show.output)")
        #expect(show.output.contains(#"@b\u{202E}"#))
    }

    /// CSV read back with a CSV reader: no text cell begins with a formula character; numbers
    /// stay numbers (a negative power is not prefixed).
    @Test func theCSVExportNeverHoldsAFormula() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = try Self.ledger(scratch)
        let export = ToolRun(["ledger", "export", "--ledger", path, "--format", "csv"])
        #expect(export.status == 0, "\(export.diagnostics)")
        let rows = try CSVTable.parse(Array(export.output.utf8), file: "export.csv")
        #expect(rows.count == 2)
        let header = rows[0].map(\.text)
        let numeric: Set<String> = ["major", "minor", "power", "rssiCount", "rssiMedian"]
        for row in rows.dropFirst() {
            for (column, field) in zip(header, row) where !numeric.contains(column) {
                #expect(
                    !(field.text.first.map { "=+-@\t\r".contains($0) } ?? false),
                    "\(column): \(field.text.debugDescription)")
            }
            #expect(row[0].text.hasPrefix("'=evil"))
            #expect(row[header.firstIndex(of: "debugger")!].text.hasPrefix("'+"))
            #expect(Int(row[header.firstIndex(of: "power")!].text) != nil, "numbers stay numbers")
        }
    }

    @Test func theJSONExportParsesAndEscapesControlCharacters() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = try Self.ledger(scratch)
        let export = ToolRun(["ledger", "export", "--ledger", path, "--format", "json"])
        #expect(export.status == 0)
        #expect(!export.output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" })
        #expect(export.output.contains("\\u001b"))
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [[String: Any]])
        #expect(rows.first?["name"] as? String == "=evil\u{1B}[2J\u{202E}x", "the data itself kept whole")
    }

    @Test(arguments: [
        ("=1+1", "'=1+1"), ("+x", "'+x"), ("-2", "'-2"), ("@sum", "'@sum"), ("\tx", "\"'\tx\""), ("a,b", "\"a,b\""),
        ("say \"hi\"", "\"say \"\"hi\"\"\""), ("=a,b", "\"'=a,b\""), ("line\nbreak", "\"line\nbreak\""),
        ("plain", "plain"),
    ])
    func theCSVCellEncoder(text: String, cell: String) {
        #expect(CSVCell.text(text) == cell)
        #expect(CSVCell.number(-59) == "-59")
    }

    @Test(arguments: [
        ("plain", "plain"), ("a\u{1B}[31m", #"a\x1b[31m"#), ("x\u{202E}y", #"x\u{202E}y"#), ("n\u{85}", #"n\u{0085}"#),
        ("z\u{200B}", #"z\u{200B}"#), ("Küche 東京", "Küche 東京"), ("tab\there", #"tab\x09here"#),
    ])
    func whatWouldNotShowIsEscaped(text: String, shown: String) {
        #expect(VisibleText.escaped(text) == shown)
        #expect(VisibleText.escaped(VisibleText.escaped(text)) == shown, "twice changes nothing")
        #expect(VisibleText.escapedLines(text + "\n" + text + "\n") == shown + "\n" + shown + "\n", "lines kept")
    }
}

/// The one JSON writer escapes every control character (C0, DEL, C1) and the line and paragraph
/// separators; what it writes parses back to the same text.
@Test func theJSONWriterEscapesEveryControlCharacter() throws {
    let text = String(
        String.UnicodeScalarView((0..<0xA0).compactMap(Unicode.Scalar.init) + ["\u{2028}", "\u{2029}", "\u{202E}"]))
    let json = JSONValue.array([.string(text)]).compact()
    #expect(!json.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{2028}" })
    #expect(
        json.contains("\\u001b") && json.contains("\\u007f") && json.contains("\\u0085") && json.contains("\\u2028"))
    let back = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String])
    #expect(back == [text])
}

/// Found by a review of the first part: messages quoting what a list or an old ledger holds
/// carried it raw; a combining mark hid a formula start; `;` split a CSV cell in some locales.
struct UntrustedOutputReviewTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    @Test func anErrorMessageQuotingABadCellShowsItVisibly() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write(
            "l.csv", "name,uuid,major,minor,x\u{1B}[2J\nok,\(Self.uuid)\u{1B}[2J\u{9B}1m\u{202E},1,2,\n")
        let run = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out")])
        #expect(run.status == 65)
        #expect(!run.diagnostics.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{9B}" || $0 == "\u{202E}" })
        #expect(run.diagnostics.contains(#"\x1b[2J"#), "\(run.diagnostics)")
    }

    @Test func provisionShowsAnOldLedgersInterruptedStationVisibly() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.soundRenaming(
            path, "'ok' || char(27) || '[2J' || char(8238)",
            first: [
                "UPDATE attempts SET outcome = 'in-progress', finished_at = NULL, debugger = 'd' || char(155) || '1m' WHERE station = 'a'"
            ])
        let list = try scratch.write("c.csv", "name,uuid,major,minor\nc,\(Self.uuid),9,9\n")
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.2", "--ledger", path],
            debuggers: ProductionLineTests.Bench(first: 0xA0, chips: 2).provider)
        #expect(run.diagnostics.contains(#"interrupted earlier: station 'ok\x1b[2J\u{202E}'"#), "\(run.diagnostics)")
        #expect(!run.diagnostics.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{9B}" || $0 == "\u{202E}" })
    }

    @Test func aFormulaStartBehindACombiningMarkIsRefused() {
        for name in ["=\u{301}HYPERLINK(\"x\")", "-\u{301} 2+3"] {
            let json =
                "[{\"name\": " + JSONValue.string(name).compact()
                + ", \"uuid\": \"\(Self.uuid)\", \"major\": 1, \"minor\": 2}]"
            #expect(throws: StationListProblems.self) { try StationListReader.read(Array(json.utf8), file: "l.json") }
        }
    }

    @Test func aSemicolonOrTabIsQuoted() {
        #expect(CSVCell.text("x;=1+1;y") == "\"x;=1+1;y\"")
        #expect(CSVCell.text("a\t=b") == "\"a\t=b\"")
    }
}

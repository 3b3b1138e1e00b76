import BeaconLabels
import CCDebugger
import CCDebuggerEmulator
import Foundation
import Provisioning
import StationLedger
import Stations
import Storage
import StructuredText
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Issue 17's table of hostile text, through every reader and every output: refused with its
/// position, or written escaped (terminal), quoted and neutralised (CSV), escaped (JSON, XML) —
/// never raw. The checks here are independent of the encoders: they name the characters that
/// must not arrive raw themselves.
struct HostileTextTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// The characters of `text` that must never reach a terminal raw (line feeds apart): controls,
    /// line and paragraph separators, bidirectional controls, zero-width characters and joiners,
    /// variation selectors, other blank characters, private-use and tag characters — a list of
    /// its own, not the rule's code.
    static func raw(_ text: String) -> [String] {
        text.unicodeScalars.filter { scalar in
            let value = scalar.value
            if value == 0x0A { return false }
            return value < 0x20 || (0x7F...0x9F).contains(value) || (0x200B...0x200F).contains(value)
                || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
                || [0x2028, 0x2029, 0x2060, 0xFEFF, 0x3164, 0x2800, 0xAD, 0x34F, 0x115F, 0x1160, 0xFFA0].contains(value)
                || (0xFE00...0xFE0F).contains(value) || (0xE0100...0xE01EF).contains(value)
                || (0xE000...0xF8FF).contains(value) || (0xE0000...0xE0FFF).contains(value)
        }.map { "U+" + String($0.value, radix: 16, uppercase: true) }
    }

    /// A JSON station list with one station per name (and note).
    static func jsonList(_ scratch: Scratch, _ stations: [(name: String, note: String?)], file: String = "list.json")
        throws -> String
    {
        let rows = stations.enumerated().map { index, station in
            JSONValue.object(
                [
                    ("name", .string(station.name)), ("uuid", .string(uuid)), ("major", .integer(7)),
                    ("minor", .integer(index + 1)),
                ] + (station.note.map { [("note", JSONValue.string($0))] } ?? []))
        }
        return try scratch.write(file, JSONValue.array(rows).rendered() + "\n")
    }

    /// Writes `bytes` as `name` in `scratch`; its path.
    static func write(_ scratch: Scratch, _ name: String, _ bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.path(name)))
        return scratch.path(name)
    }

    /// A CSV station list holding `name` and `note` as raw bytes (quoted, quotes doubled).
    static func csvList(name: String, note: String) -> [UInt8] {
        func quoted(_ text: String) -> String { "\"" + text.replacing("\"", with: "\"\"") + "\"" }
        return Array("name,uuid,major,minor,note\n\(quoted(name)),\(uuid),1,2,\(quoted(note))\n".utf8)
    }

    // MARK: - Refused by the readers

    /// Hostile names and notes every reader refuses, each with the part of the message that
    /// names it.
    static let refused: [(name: String, note: String, problem: String)] = [
        ("a\u{1B}[31mRED\u{1B}[0m", "", "name: holds U+001B (escape) at character 2"),
        ("ok", "\u{1B}]0;title\u{07}", "note: holds U+001B (escape) at character 1"),
        ("x\u{202E}fdp.exe", "", "U+202E (right-to-left override) at character 2"),
        ("c1\u{9B}31m", "", "U+009B (a control character)"),
        ("=HYPERLINK(\"http://x\",\"a\")", "", "begins with '=', which a spreadsheet"),
        ("@SUM(A1)", "", "begins with '@'"),
        (String(repeating: "A", count: 10_000), "", "name: is 10000 characters long; a name may have at most 100"),
        ("e\u{301}" + String(repeating: "\u{301}", count: 500), "", "name: takes 1003 bytes in UTF-8"),
        ("ok", String(repeating: "n", count: 10_000), "note: is 10000 characters long"),
        ("\u{200D}x", "", "U+200D (zero-width joiner) at character 1"),
        // The rule is context-free: writing that needs a joiner or a selector is refused too.
        ("👨\u{200D}👩\u{200D}👧 family", "", "U+200D (zero-width joiner) at character 2"),
        ("Zürich \u{2764}\u{FE0F}", "", "U+FE0F (a variation selector) at character 9"),
        ("ok", "می\u{200C}خواهم", "note: holds U+200C (zero-width non-joiner) at character 3"),
        ("x\u{3164}", "", "U+3164 (Hangul filler) at character 2"),
        ("b\u{2800}", "", "U+2800 (braille blank)"),
        ("p\u{E000}", "", "U+E000 (a private-use character)"),
        ("tag\u{E0041}", "", "U+E0041 (an invisible formatting character)"),
        ("\u{FE0F}v", "", "U+FE0F (a variation selector) at character 1"),
        ("ok", "a\u{2028}b", "note: holds U+2028 (line separator)"),
        ("zw\u{200B}sp", "", "U+200B (zero-width space)"),
    ]

    @Test(arguments: refused.indices)
    func aHostileNameOrNoteIsRefusedWithItsPosition(index: Int) throws {
        let (name, note, problem) = Self.refused[index]
        let scratch = try Scratch()
        defer { scratch.remove() }
        let json = try Self.jsonList(scratch, [(name, note.isEmpty ? nil : note)])
        let csv = try Self.write(scratch, "list.csv", Self.csvList(name: name, note: note))
        for (list, position) in [(json, #"list\.json:\d+:\d+: "#), (csv, #"list\.csv:2:\d+: "#)] {
            let run = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out")])
            #expect(run.status == 65, "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains(try Regex(position)) && run.diagnostics.contains(problem), "\(run.diagnostics)"
            )
            #expect(Self.raw(run.diagnostics).isEmpty, "\(run.diagnostics)")
            #expect(run.diagnostics.utf8.count < 1_000, "a long value is never echoed whole")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("out")), "nothing written")
        }
    }

    /// Invalid UTF-8 in every reader of text: station lists (CSV, JSON), a template's manifest, a
    /// HEX file, a list `calibrate --write` would edit — refused with the byte and its position;
    /// nothing is written, the list is left as it was.
    @Test func invalidUTF8IsRefusedByEveryReader() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // "é" is C3 A9: its second byte replaced, the first begins a sequence that goes wrong.
        let csv = try Self.write(
            scratch, "l.csv",
            Array("name,uuid,major,minor\nok\u{E9},\(Self.uuid),1,2\n".utf8).map { $0 == 0xA9 ? 0xFF : $0 })
        let json = try Self.write(
            scratch, "l.json",
            Array("[{\"name\": \"a\u{E9}\", \"uuid\": \"\(Self.uuid)\", \"major\": 1, \"minor\": 2}]".utf8).map {
                $0 == 0xA9 ? 0xFE : $0
            })
        for (list, problem) in [
            (csv, "l.csv:2:3: invalid UTF-8 (byte 0xC3)"), (json, "l.json:1:13: invalid UTF-8 (byte 0xC3)"),
        ] {
            let before = try Data(contentsOf: URL(fileURLWithPath: list))
            let batch = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out")])
            #expect(batch.status == 65 && batch.diagnostics.contains(problem), "\(batch.diagnostics)")
            let labels = ToolRun(["labels", list, "--board", "hm10", "-o", scratch.path("l.svg")])
            #expect(labels.status == 65 && labels.diagnostics.contains(problem), "\(labels.diagnostics)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: list)) == before, "the list is never changed")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out")))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("l.svg")))
        // A template folder's manifest.
        try FileManager.default.createDirectory(atPath: scratch.path("t/bad"), withIntermediateDirectories: true)
        _ = try Self.write(scratch, "t/bad/template.json", [0x7B, 0x22, 0x6E, 0xFF, 0x22, 0x3A, 0x31, 0x7D])
        let templates = ToolRun(["templates", "--templates", scratch.path("t")])
        #expect(templates.output.contains("template.json:1:4: invalid UTF-8 (byte 0xFF)"), "\(templates.output)")
        // A HEX file.
        let hex = try Self.write(scratch, "bad.hex", Array(":0100000000FF\n:00000001F\u{E9}F\n".utf8))
        let convert = ToolRun(["convert", hex, "-o", scratch.path("x.bin")])
        #expect(convert.status == 65 && convert.diagnostics.contains("bad.hex:2:"), "\(convert.diagnostics)")
        #expect(Self.raw(convert.diagnostics).isEmpty && !FileManager.default.fileExists(atPath: scratch.path("x.bin")))
    }

    // MARK: - Accepted, and written safely everywhere

    /// Names a list may hold that are markup, C, CSV or shell syntax, real writing in several
    /// scripts, and the longest name allowed; with notes holding tabs, quotes and formula starts.
    static let accepted: [(name: String, note: String?)] = [
        ("</svg><script>alert(1)</script>", "=HYPERLINK(\"http://x\")"),
        ("*/ int x; /* ok", "-2+3"),
        ("say \"hi\" & 'bye', ok; fine", "tab\there, \"quoted\"; semi"),
        ("👨👩👧 family 1", nil),
        ("می خواهم 2", "@note"),
        ("Zürich \u{2764} 3", nil),
        ("עברית 4", nil), ("Kochi അവന്", nil),
        ("$(touch pwned) 5", "`touch pwned2`"),
        (String(repeating: "L", count: 100), String(repeating: "N", count: 1000)),
    ]

    /// The accepted names through the list reader, `batch`, `provision` (events, hooks, the
    /// summary), `ledger show`, `ledger export` (CSV and JSON) and `labels`: every output parses
    /// with its own reader and gives each name back exactly, the terminal text holds nothing raw.
    @Test func acceptedNamesAreWrittenSafelyThroughEveryOutput() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let names = Self.accepted.map(\.name)
        let list = try Self.jsonList(scratch, Self.accepted)
        // batch: the folder's stations.json gives the names back.
        let batch = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out")])
        #expect(batch.status == 0, "\(batch.diagnostics)")
        #expect(Self.raw(batch.output + batch.diagnostics).isEmpty)
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: scratch.url.appending(path: "out/stations.json")))
                as? [String: Any])
        let batchNames = (manifest["stations"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(Set(batchNames ?? []) == Set(names), "\(manifest)")

        // provision: the summary (JSON), the events, the hooks' variables.
        let bench = ProductionLineTests.Bench(first: 0x70)
        let ledger = scratch.path("ledger.sqlite")
        let provision = ToolRun(
            [
                "provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.3", "--ledger", ledger,
                "--json", "--events", scratch.path("events.jsonl"), "--on-verified",
                "cd '\(scratch.url.path)' && printf '%s\\n' \"$CCBEACON_STATION\" >> hooks.txt",
            ], debuggers: bench.provider)
        #expect(provision.status == 0, "\(provision.diagnostics)")
        #expect(Self.raw(provision.diagnostics).isEmpty, "\(provision.diagnostics)")
        for name in names {
            #expect(provision.diagnostics.contains("'\(name)'"), "\(name) quoted as it is in the log lines")
        }
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(provision.output.utf8)) as? [String: Any])
        #expect(Set(summary["verified"] as? [String] ?? []) == Set(names))
        let events = try scratch.text("events.jsonl").split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let verifiedEvents = events.filter { $0["event"] as? String == "verified" }.compactMap {
            $0["station"] as? String
        }
        #expect(Set(verifiedEvents) == Set(names), "\(events)")
        #expect(try Set(scratch.text("hooks.txt").split(separator: "\n").map(String.init)) == Set(names))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("pwned")))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("pwned2")))

        // ledger show: text holds the names as they are (they show), JSON gives them back.
        let show = ToolRun(["ledger", "show", "--ledger", ledger])
        #expect(show.status == 0 && Self.raw(show.output).isEmpty)
        for name in names.dropLast() { #expect(show.output.contains(name), "\(name) in \(show.output)") }
        let shownJSON = ToolRun(["ledger", "show", "--ledger", ledger, "--json"])
        let shown = try #require(
            try JSONSerialization.jsonObject(with: Data(shownJSON.output.utf8)) as? [[String: Any]])
        #expect(Set(shown.compactMap { $0["name"] as? String }) == Set(names))

        // ledger export: CSV read back by a CSV reader, JSON by a JSON parser.
        let csv = ToolRun(["ledger", "export", "--ledger", ledger, "--format", "csv"])
        #expect(csv.status == 0)
        let rows = try CSVTable.parse(Array(csv.output.utf8), file: "export.csv").map { $0.map(\.text) }
        let header = try #require(rows.first)
        let nameColumn = try #require(header.firstIndex(of: "name"))
        #expect(Set(rows.dropFirst().map { $0[nameColumn] }) == Set(names))
        let numeric: Set<String> = ["major", "minor", "power", "rssiCount", "rssiMedian"]
        for row in rows.dropFirst() {
            for (column, cell) in zip(header, row) where !numeric.contains(column) {
                #expect(!(cell.first.map { "=+-@\t\r".contains($0) } ?? false), "\(column): \(cell)")
            }
        }
        let json = ToolRun(["ledger", "export", "--ledger", ledger, "--format", "json"])
        let exported = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(Set(exported.compactMap { $0["name"] as? String }) == Set(names))

        // labels: each page parses as XML, and its text holds every name exactly.
        let labels = ToolRun(["labels", "--ledger", ledger, "--sheet", "a4-3x7", "-o", scratch.path("l.svg")])
        #expect(labels.status == 0, "\(labels.diagnostics)")
        let pages = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).filter {
            $0.hasSuffix(".svg")
        }
        #expect(!pages.isEmpty)
        var texts: [String] = []
        for page in pages {
            let parsed = try #require(SVGText.read(try Data(contentsOf: scratch.url.appending(path: page))), "\(page)")
            texts += parsed.texts
            #expect(!parsed.elements.contains("script") && parsed.elements.filter { $0 == "svg" }.count == 1)
        }
        for name in names {
            #expect(texts.contains { $0 == name || name.hasPrefix($0.replacing("…", with: "")) }, "\(name) in \(texts)")
        }
    }

    // MARK: - Old ledgers

    /// A ledger (written with raw SQL) holding what no list can bring in: escape sequences, a C1
    /// control, a right-to-left override, a formula start, tag and blank characters, stray
    /// joiners, 10 kB, a NUL and invalid UTF-8. Every output shows or writes it safely.
    @Test func anOldLedgersHostileNamesAreShownAndWrittenSafely() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        let hostile = [
            "'=evil' || char(27) || '[2J' || char(8238) || 'x'", "'+t' || char(27) || ']0;title' || char(7)",
            "'c1' || char(155) || '31m'", "'long' || replace(hex(zeroblob(5000)), '0', 'A')",
            "'tag' || char(917569) || char(12644) || char(10240) || char(57344)", "CAST(X'6261FF6263' AS TEXT)",
            "'@b' || char(8232) || 'line' || char(8205)", "'zw' || char(8203) || char(0) || 'after-nul'",
        ]
        try Self.verifiedLedger(path, count: hostile.count)
        try LedgerFiles.alter(
            path,
            hostile.enumerated().flatMap { index, value in
                [
                    "UPDATE attempts SET station = \(value) WHERE station = 's\(index)'",
                    "UPDATE stations SET name = \(value) WHERE name = 's\(index)'",
                ]
            })
        let show = ToolRun(["ledger", "show", "--ledger", path])
        #expect(show.status == 0, "\(show.diagnostics)")
        #expect(Self.raw(show.output).isEmpty, "\(Self.raw(show.output))")
        #expect(show.output.contains(#"=evil\x1b[2J\u{202E}x"#) && show.output.contains(#"c1\u{009B}31m"#))
        #expect(show.output.contains(#"tag\u{E0041}\u{3164}\u{2800}\u{E000}"#), "\(show.output)")
        #expect(show.output.contains("ba\u{FFFD}bc"), "invalid UTF-8 shown as the replacement character")
        for format in ["csv", "json"] {
            let export = ToolRun(["ledger", "export", "--ledger", path, "--format", format])
            #expect(export.status == 0, "\(export.diagnostics)")
            if format == "json" {
                #expect(Self.raw(export.output).isEmpty)
                let rows = try #require(
                    try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [[String: Any]])
                #expect(rows.count == hostile.count)
                #expect(rows.contains { $0["name"] as? String == "=evil\u{1B}[2J\u{202E}x" }, "the data kept whole")
            } else {
                let rows = try CSVTable.parse(Array(export.output.utf8), file: "e.csv").map { $0.map(\.text) }
                #expect(rows.count == hostile.count + 1)
                #expect(rows.dropFirst().allSatisfy { !($0[0].first.map { "=+-@\t\r".contains($0) } ?? false) })
            }
        }
        let shownJSON = ToolRun(["ledger", "show", "--ledger", path, "--json"])
        #expect(try JSONSerialization.jsonObject(with: Data(shownJSON.output.utf8)) is [[String: Any]])
        // labels: the 10 kB name cannot be a readable code, and the message quotes it short; the
        // others make pages that parse.
        let labels = ToolRun(["labels", "--ledger", path, "-o", scratch.path("l.svg")])
        #expect(labels.status == 65, "\(labels.diagnostics)")
        #expect(labels.diagnostics.contains("long" + String(repeating: "A", count: 96) + "… (10004 characters)"))
        #expect(labels.diagnostics.utf8.count < 1_000 && Self.raw(labels.diagnostics).isEmpty)
        try LedgerFiles.alter(
            path, ["DELETE FROM attempts WHERE station LIKE 'long%'", "DELETE FROM stations WHERE name LIKE 'long%'"])
        let rest = ToolRun(["labels", "--ledger", path, "-o", scratch.path("l.svg")])
        #expect(rest.status == 0, "\(rest.diagnostics)")
        let texts = try #require(SVGText.read(try Data(contentsOf: scratch.url.appending(path: "l.svg")))).texts
        #expect(texts.contains(#"=evil\x1b[2J\u{202E}x"#), "\(texts)")
        #expect(Self.raw(texts.joined()).isEmpty)
    }

    /// A ledger with stations s0, s1, … each verified on its own chip (closed when it returns).
    static func verifiedLedger(_ path: String, count: Int) throws {
        let ledger = try SQLiteLedger(path: path)
        try ledger.register((0..<count).map { Station(name: "s\($0)", identity: IBeaconFixture.identity($0 + 1)) })
        for index in 0..<count {
            let (_, attempt) = try #require(
                try ledger.claimNextStation(
                    chip: "00:12:4B:00:00:\(10 + index)", debugger: "EMU001", template: "t", templateSHA256: "x",
                    verifyMethod: "read", skipping: [], image: { _ in ("i", "C0:FF:EE:00:00:01") }))
            try ledger.finish(attempt.id, outcome: .verified, reason: nil, readBack: nil)
        }
    }

    // MARK: - The console

    /// Text for people is made visible wherever it goes, a line at a time (a line feed inside a
    /// value cannot start a line); a document only on a terminal (a file or a pipe gets the data
    /// whole); diagnostics always; the status drawing is ours, raw.
    @Test(arguments: [false, true])
    func theConsoleMakesTextVisibleByConstruction(terminal: Bool) {
        let output = Mutex("")
        let diagnostics = Mutex("")
        let console = Console(
            output: { text in output.withLock { $0 += text } },
            diagnostics: { text in diagnostics.withLock { $0 += text } }, diagnosticsIsTerminal: terminal,
            outputIsTerminal: terminal)
        let hostile = "a\u{1B}[2J\u{202E}b\tc\rd\r\nFAKE"
        console.output(line: hostile)
        console.output(lines: [hostile])
        console.data(hostile)
        console.diagnostics(line: hostile)
        console.drawing("\u{1B}[1A\r")
        let shown = #"a\x1b[2J\u{202E}b\x09c\x0dd\x0d\x0aFAKE"# + "\n"
        let document = #"a\x1b[2J\u{202E}b"# + "\tc" + #"\x0d"# + "d\r\nFAKE"
        #expect(output.withLock { $0 } == shown + shown + (terminal ? document : hostile))
        #expect(diagnostics.withLock { $0 } == shown + "\u{1B}[1A\r")
    }
}

/// The text nodes and element names of an SVG page, read by Foundation's XML parser (`nil` when
/// it does not parse).
enum SVGText {
    static func read(_ data: Data) -> (texts: [String], elements: [String])? {
        #if canImport(FoundationXML) || canImport(Darwin)
            final class Collector: NSObject, XMLParserDelegate {
                var texts: [String] = []
                var elements: [String] = []
                var current = ""
                func parser(
                    _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]
                ) { elements.append(elementName) }
                func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }
                func parser(
                    _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?
                ) {
                    let text = current.trimmingCharacters(in: .whitespacesAndNewlines)
                    if !text.isEmpty { texts.append(text) }
                    current = ""
                }
            }
            let parser = XMLParser(data: data)
            let collector = Collector()
            parser.delegate = collector
            return parser.parse() ? (collector.texts, collector.elements) : nil
        #else
            return nil
        #endif
    }
}

/// Found by the review of the second part: a line feed inside a value from a ledger, a device, a
/// manifest or an argument started a line of its own that a reader takes for ours; a NUL cut an
/// old ledger's name; a hook's output was escaped twice in the events; look-alike names through
/// joiners and selectors that change nothing; emoji one column wide in the live status; long
/// address cells quoted whole.
struct HostileTextReviewTests {
    /// No line of `text` begins with the forged text.
    static func noForgedLine(_ text: String) -> Bool {
        !text.split(separator: "\n").contains { $0.hasPrefix("ccbeacon: FAKE") || $0.hasPrefix("FAKE") }
    }

    /// A debugger whose USB strings say anything.
    final class HostileStrings: DebuggerProvider {
        let inner = EmulatorProvider()
        func devices() throws(DebuggerError) -> [DebuggerDevice] {
            try inner.devices().map { device in
                DebuggerDevice(
                    bus: device.bus, address: device.address, vendorID: device.vendorID, productID: device.productID,
                    product: "CC\u{1B}[31mDebugger\nccbeacon: FAKE product", serial: "S\u{1B}]0;t\u{07}\nFAKE serial",
                    debuggerID: device.debuggerID, portPath: device.portPath)
            }
        }
        func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport { try inner.open(device) }
    }

    @Test func aDevicesStringsAreShownOnTheirLine() throws {
        for arguments in [["devices"], ["info"], ["doctor"]] {
            let run = ToolRun(arguments, debuggers: HostileStrings())
            let text = run.output + run.diagnostics
            #expect(Self.noForgedLine(text), "\(arguments): \(text)")
            #expect(HostileTextTests.raw(text).isEmpty, "\(arguments): \(text)")
            #expect(
                text.contains(#"S\x1b]0;t\x07\x0aFAKE serial"#)
                    || text.contains(#"CC\x1b[31mDebugger\x0accbeacon: FAKE"#),
                "\(arguments): \(text)")
        }
        let json = ToolRun(["devices", "--json"], debuggers: HostileStrings())
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        // Kept as the device gave it; the JSON writer escapes it.
        #expect(devices.first?["serial"] as? String == "S\u{1B}]0;t\u{07}\nFAKE serial", "\(json.output)")
        #expect(json.output.contains(#""S\u001b]0;t\u0007\nFAKE serial""#), "\(json.output)")
    }

    /// A debugger's USB strings never reach the ledger: a serial that holds what would not show
    /// does not name its debugger in the log, the events or the ledger; its port does.
    @Test func aDevicesStringsNeverReachTheLedger() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("stations.csv", "name,uuid,major,minor\nHall A,\(DeviceCommandTests.uuid),1,1\n")
        let ledger = scratch.path("l.sqlite")
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", ledger, "--yes", "--wait", "0.2"],
            debuggers: HostileStrings())
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("port:1-1: burning 'Hall A'"), "\(run.diagnostics)")
        let export = ToolRun(["ledger", "export", "--ledger", ledger])
        #expect(export.status == 0, "\(export.diagnostics)")
        #expect(export.output.contains(",port:1-1,"), "\(export.output)")
        #expect(!export.output.contains("FAKE"), "\(export.output)")
    }

    /// A serial number selects as the device gives it (a script reading `devices --json`) or as
    /// ccbeacon shows it (a person copying it from the terminal), and nothing else.
    @Test(arguments: ["S\u{1B}]0;t\u{07}\nFAKE serial", #"S\x1b]0;t\x07\x0aFAKE serial"#])
    func aSerialSelectsAsGivenOrAsShown(selector: String) {
        let run = ToolRun(["info", "--device", selector], debuggers: HostileStrings())
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(HostileTextTests.raw(run.output + run.diagnostics).isEmpty, "\(run.output)")
    }

    @Test func aSerialThatIsNeitherSelectsNothing() {
        let run = ToolRun(["info", "--device", "S]0;t\nFAKE serial"], debuggers: HostileStrings())
        #expect(run.status != 0)
        #expect(run.diagnostics.contains(#"no debugger 'S]0;t\x0aFAKE serial'"#), "\(run.diagnostics)")
    }

    @Test func anArgumentsLineFeedStaysInItsMessage() {
        for arguments in [
            ["x\nccbeacon: FAKE all stations verified"], ["encode", "--uuid", "7634\nFAKE"],
            ["ledger", "show", "--ledger", "/nowhere\nFAKE.sqlite"],
            ["encode", "--type", "eddystone-url", "--url", "http://a\nFAKE"],
        ] {
            let run = ToolRun(arguments)
            #expect(run.status != 0)
            #expect(Self.noForgedLine(run.diagnostics), "\(run.diagnostics)")
            #expect(run.diagnostics.contains(#"\x0a"#), "\(run.diagnostics)")
        }
    }

    @Test func aManifestHoldingALineBreakIsRefusedWithItsPosition() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("t/t1"), withIntermediateDirectories: true)
        _ = try scratch.write(
            "t/t1/template.json",
            "{\"format\": 1, \"name\": \"t1\", \"description\": \"real one\\nFAKE   CC2541F256  0x7F08   bundled\"}")
        let run = ToolRun(["templates", "--templates", scratch.path("t")])
        #expect(Self.noForgedLine(run.output), "\(run.output)")
        #expect(run.output.contains("template.json:1:"), "\(run.output)")
        #expect(run.output.contains("description: holds U+000A (line feed) at character 9"), "\(run.output)")
    }

    /// An old ledger's names and benches with line feeds, through `provision`'s messages and log
    /// lines (piped) and `ledger show`'s summary.
    @Test func anOldLedgersLineFeedsStayInTheirLines() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.soundRenaming(
            path, "'ok' || char(10) || 'FAKE verified'",
            first: [
                "UPDATE attempts SET outcome = 'in-progress', finished_at = NULL, bench = 'b' || char(10) || 'FAKE bench', debugger = 'd' || char(10) || 'FAKE debugger' WHERE station = 'a'"
            ])
        let show = ToolRun(["ledger", "show", "--ledger", path])
        #expect(show.status == 0 && Self.noForgedLine(show.output), "\(show.output)")
        #expect(show.output.contains(#"ok\x0aFAKE verified"#) && show.output.contains(#"b\x0aFAKE bench"#))
        let list = try scratch.write("c.csv", "name,uuid,major,minor\nc,\(HostileTextTests.uuid),9,9\n")
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.2", "--ledger", path],
            debuggers: ProductionLineTests.Bench(first: 0xB0, chips: 2).provider)
        #expect(Self.noForgedLine(run.output + run.diagnostics), "\(run.diagnostics)")
        #expect(run.diagnostics.contains(#"interrupted earlier: station 'ok\x0aFAKE verified'"#), "\(run.diagnostics)")
        #expect(run.diagnostics.contains(#"(d\x0aFAKE debugger)"#), "\(run.diagnostics)")
    }

    /// A NUL inside an old ledger's name is read whole (shown escaped, exported as it is).
    @Test func aNULInAnOldLedgersNameIsKept() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.soundRenaming(path, "'B' || char(0) || 'x'")
        let show = ToolRun(["ledger", "show", "--ledger", path])
        #expect(show.output.contains(#"B\x00x"#), "\(show.output)")
        let export = ToolRun(["ledger", "export", "--ledger", path, "--format", "json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [[String: Any]])
        #expect(rows.first?["name"] as? String == "B\u{0}x")
    }

    /// The events carry a hook's output as it was (the JSON writer escapes it once).
    @Test func aHooksOutputIsEscapedOnceInTheEvents() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try ProductionLineTests.list(scratch, ["one"])
        let run = ProductionLineTests.provision(
            list, scratch,
            [
                "--on-verified", #"printf 'err\033[31m\n' >&2; exit 3"#, "--events", scratch.path("events.jsonl"),
            ], bench: ProductionLineTests.Bench(first: 0xB4))
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("\u{1B}") && run.diagnostics.contains(#"err\x1b[31m"#), "\(run.diagnostics)")
        let events = try scratch.text("events.jsonl").split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let hook = try #require(events.first { $0["event"] as? String == "hook-finished" })
        #expect(hook["output"] as? String == "err\u{1B}[31m", "\(hook)")
    }

    /// A long value in a list's address cell is quoted short.
    @Test func aLongAddressIsQuotedShort() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write(
            "l.csv",
            "name,uuid,major,minor,address\na,\(HostileTextTests.uuid),1,2,\(String(repeating: "C0", count: 5000))\n")
        let run = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out")])
        #expect(run.status == 65 && run.diagnostics.utf8.count < 1_000, "\(run.diagnostics.utf8.count)")
        #expect(run.diagnostics.contains("… (10000 characters)"), "\(run.diagnostics)")
    }

    @Test func emojiTakeTwoColumnsInTheLiveStatus() {
        // Emoji, and (fourth review) kana supplement, Tangut and Hangul Jamo extended-A.
        for emoji: Unicode.Scalar in [
            "\u{2705}", "\u{1F680}", "\u{1FAE0}", "\u{1F600}", "\u{1B002}", "\u{17000}", "\u{A960}", "\u{1F200}",
            // Unicode 15 emoji, newer than the C library's tables (found by the review of issue 28).
            "\u{1FAE8}", "\u{1F6DC}", "\u{1FA89}",
        ] {
            #expect(TextWidth.columns(emoji) == 2, "\(emoji)")
        }
        #expect(TextWidth.columns(Unicode.Scalar("a")) == 1)
    }
}

/// Found by the second review: values interpolated into our lines as they are (template folder
/// names, paths, leftover file names, the lines of a ledger check) could still start a line of
/// their own; the console now writes text for people a line at a time, and a failure's message
/// is one line with its details under it. Also: a template imported with a line break in its
/// description could never be used; two spaces in a row make look-alike names.
struct HostileTextSecondReviewTests {
    static let uuid = HostileTextTests.uuid

    @Test func aTemplateFolderNameStaysOnItsLine() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = "tq/evil\nccbeacon generate: FAKE wrote o.hex"
        try FileManager.default.createDirectory(atPath: scratch.path(folder), withIntermediateDirectories: true)
        _ = try scratch.write(folder + "/template.json", "{}")
        let run = ToolRun([
            "generate", "--templates", scratch.path("tq"), "--template", "nope", "--uuid", Self.uuid, "--major", "1",
            "--minor", "2", "-o", scratch.path("o.hex"),
        ])
        #expect(run.status != 0)
        #expect(HostileTextReviewTests.noForgedLine(run.diagnostics), "\(run.diagnostics)")
        #expect(!run.diagnostics.split(separator: "\n").contains { $0.hasPrefix("ccbeacon generate: FAKE") })
        #expect(run.diagnostics.contains(#"the templates are evil\x0accbeacon generate: FAKE wrote o.hex"#))
    }

    @Test func aPathStaysOnItsLine() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let identity = ["--uuid", Self.uuid, "--major", "7", "--minor", "8"]
        let hex = scratch.path("d\nFAKE OK.hex")
        let generate = ToolRun(["generate", "--template", "cc2541-ibeacon"] + identity + ["-o", hex])
        #expect(generate.status == 0, "\(generate.diagnostics)")
        #expect(HostileTextReviewTests.noForgedLine(generate.output), "\(generate.output)")
        for run in [
            ToolRun(["verify", hex] + identity),
            ToolRun(["verify", hex, "--uuid", Self.uuid, "--major", "7", "--minor", "9"]),
        ] {
            #expect(HostileTextReviewTests.noForgedLine(run.output + run.diagnostics), "\(run.output)")
            #expect((run.output + run.diagnostics).contains(#"d\x0aFAKE OK.hex"#))
        }
    }

    @Test func aLeftoverFileNameStaysOnItsLine() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("l.csv", "name,uuid,major,minor\na,\(Self.uuid),1,2\n")
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let leftover = Files.temporaryName(
            for: "x\nFAKE 3 stations written", inFolder: scratch.path("out"), process: 4_000_000)
        _ = try scratch.write("out/" + leftover, "left over")
        let run = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out")])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("removed 1 temporary file"), "\(run.diagnostics)")
        #expect(HostileTextReviewTests.noForgedLine(run.output + run.diagnostics), "\(run.diagnostics)")
    }

    @Test func aFailuresMessageIsOneLineAndItsDetailsAreLinesOfTheirOwn() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("l.csv", "name,uuid,major,minor\nok,\(Self.uuid),1,x\nok2,\(Self.uuid),1,y\n")
        let run = ToolRun(["batch", list, "--template", "cc2541-ibeacon", "-o", scratch.path("out")])
        let lines = run.diagnostics.split(separator: "\n")
        #expect(lines.count == 4, "\(run.diagnostics)")
        #expect(lines[0].hasSuffix("has 2 problems; nothing was written:") && lines[1].hasPrefix("  "))
        #expect(lines[3].hasPrefix("hint: "))
    }

    @Test func anImportedDescriptionIsOneLineOfVisibleText() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("fw.hex", TemplateCommandTests.firmware())
        let run = ToolRun([
            "template", "import", image, "--name", "lab", "--description", "desc\nFAKE", "-o", scratch.path("lab"),
        ])
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("--description holds U+000A (line feed) at character 5"), "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("lab")))
    }

    @Test func twoSpacesInARowAreRefused() throws {
        let text = "name,uuid,major,minor\n\"Hall  1\",\(Self.uuid),1,2\n"
        #expect(throws: StationListProblems.self) { try StationListReader.read(Array(text.utf8), file: "l.csv") }
        let wrapped = "name,uuid,major,minor\n\"A\(String(repeating: " ", count: 62))FAKE\",\(Self.uuid),1,2\n"
        do {
            _ = try StationListReader.read(Array(wrapped.utf8), file: "l.csv")
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("has two spaces in a row at character 2"), "\(error)")
        }
    }

    /// Found by the third review: a usage error lost its hint; libpq's two-line messages showed
    /// `\x0a` (now one line).
    @Test func aUsageErrorKeepsItsHint() throws {
        let run = ToolRun([
            "generate", "--template", "cc2541-ibeacon", "--uuid", Self.uuid, "--major", "1", "--minor", "2",
            "--tx-power", "5", "-o", "/nonexistent/x.hex",
        ])
        #expect(run.status == 64)
        #expect(run.diagnostics.hasSuffix("hint: pick one of the listed steps\n"), "\(run.diagnostics)")
    }
}

import BeaconPayload
import FirmwareTemplate
import Foundation
import Provisioning
import StationLedger
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// The stations the label tests print: 30 of them, most with names a list may hold and a markup,
/// URL or shell would choke on, under a few UUIDs; some with the list's own address.
enum LabelFixtures {
    static let uuids = [
        "7634A485-1732-4B7D-AB44-D505D8A24C60", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
        "F7826DA6-4FA2-4E98-8024-BC5B71E0893E",
    ]

    /// Name patterns; `#` stands for the station's number (which keeps names and file stems apart).
    static let patterns = [
        "Hall #", "R&D # <lab>", "x=#?y/z%41", "\"Quoted\" 'n#'", "</svg><svg onload=alert(#)>", "Küche # 東京",
        "Café n°# — naïve 🎉", "A rather long station name, number #, that cannot fit on one line", "100% sure ##+more",
        "a&addr=C0:FF:EE:00:00:0# b",
    ]

    struct Entry {
        var name: String
        var uuid: String
        var major: Int
        var minor: Int
        var address: String?
    }

    static let stations: [Entry] = (0..<30).map { index in
        Entry(
            name: patterns[index % patterns.count].replacingOccurrences(of: "#", with: String(index + 1)),
            uuid: uuids[index % uuids.count], major: index < 15 ? 1 : 65535, minor: index * 4099 % 65536,
            address: index % 7 == 3 ? "C0:FF:EE:00:00:\(String(format: "%02X", index))" : nil)
    }

    /// The list as CSV (every name quoted, its quotes doubled).
    static var csv: String {
        "name,uuid,major,minor,address\n"
            + stations.map { entry in
                "\"\(entry.name.replacingOccurrences(of: "\"", with: "\"\""))\",\(entry.uuid),\(entry.major),\(entry.minor),\(entry.address ?? "")\n"
            }.joined()
    }

    /// What the QR code of `entry` must say, written out here from the README's definition
    /// (Foundation's percent-encoding, not ccbeacon's), with the address it gets from a template
    /// with an address field.
    static func expected(_ entry: Entry, derived: Bool = true) -> String {
        var unreserved = CharacterSet()
        unreserved.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let name = entry.name.addingPercentEncoding(withAllowedCharacters: unreserved)!
        var text = "ibeacon:\(entry.uuid)/\(entry.major)/\(entry.minor)?name=\(name)"
        let identity = IBeacon(
            uuid: UUID(uuidString: entry.uuid)!, major: UInt16(entry.major), minor: UInt16(entry.minor))
        if let address = entry.address ?? (derived ? StationTemplate.derivedAddress(for: identity).description : nil) {
            text += "&addr=\(address)"
        }
        return text
    }
}

/// The real check: sheets of labels rendered by Debian's librsvg at several scales and decoded by
/// Debian's zbar; every station's exact string must be found on its page (over the scales
/// together: a decoder misses a code now and then at one scale or another), and nothing else.
@Suite(
    .enabled(
        if: LabelTools.available,
        "needs rsvg-convert (Debian librsvg2-bin) and zbarimg (zbar-tools); scripts/test installs them"))
struct LabelDecodeTests {
    /// Each sheet: the options and how many labels its pages hold.
    static let sheets: [(options: [String], perPage: Int)] = [
        (["--sheet", "a4-3x8"], 24),
        (["--sheet", "a4-3x7"], 21),
        // US Letter with Avery 5160's 2⅝ × 1 in labels, 3 × 10, ⅛ in apart.
        (
            [
                "--sheet", "215.9x279.4:3x10", "--label-size", "66.675x25.4", "--gap", "3.175,0", "--margin",
                "12.7,4.7625",
            ], 30
        ),
        (["--sheet", "single", "--label-size", "62x29"], 1),
    ]

    @Test(arguments: sheets.indices)
    func everyCodeDecodesToItsStationAndNothingElse(_ index: Int) throws {
        let (options, perPage) = Self.sheets[index]
        let folder = try TemporaryFolder(prefix: "ccbeacon-labels")
        defer { folder.remove() }
        let list = try folder.write("stations.csv", LabelFixtures.csv)
        let run = ToolRun(["labels", list, "--board", "hm10", "-o", folder.path("labels.svg")] + options)
        #expect(run.status == 0, "\(run.diagnostics)")
        let stations = LabelFixtures.stations
        let pages = (stations.count + perPage - 1) / perPage
        let files = LabelsCommand.pageFiles(folder.path("labels.svg"), count: pages)
        #expect(run.output.components(separatedBy: "\n").filter { $0.hasPrefix("wrote ") }.count == pages)
        for (page, file) in files.enumerated() {
            #expect(run.output.contains("wrote \(file): "), "\(run.output)")
            let expected = Set(
                stations[page * perPage..<min(stations.count, (page + 1) * perPage)].map {
                    LabelFixtures.expected($0)
                })
            var found = Set<String>()
            for scale in LabelTools.scales {
                let decoded = try LabelTools.decode(file, scale: scale, in: folder)
                found.formUnion(decoded)
            }
            #expect(
                found.subtracting(expected).isEmpty,
                "page \(page + 1): decoded what no station says: \(found.subtracting(expected))")
            #expect(
                expected.subtracting(found).isEmpty, "page \(page + 1): not decoded: \(expected.subtracting(found))")
        }
    }
}

/// Labels from a ledger on the PostgreSQL server, read by its URL (never printed with its password).
@Suite(.enabled(if: PostgresTestServer.available, "needs the test PostgreSQL server (scripts/test starts it)"))
struct LabelsFromAServerTests {
    @Test func aServersVerifiedStationsAreLabelled() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // The file ledger of the other tests, copied onto the server as a bench would move it.
        let file = try LabelsCommandTests.ledger(in: scratch)
        let url = try PostgresTestServer.freshDatabase()
        let migrate = ToolRun(["ledger", "migrate", "--from", file, "--to", url])
        #expect(migrate.status == 0, "\(migrate.diagnostics)")
        let withPassword = url.replacingOccurrences(of: "postgresql://postgres@", with: "postgresql://postgres:s3kr1t@")
        let run = ToolRun(["labels", "--ledger", withPassword, "--all", "-o", scratch.path("l.svg")])
        #expect(run.status == 0, "\(run.diagnostics)")
        let page = try scratch.text("l.svg")
        #expect(page.contains("<title>a</title>") && page.contains(">C0:FF:EE:00:00:01</text>"))
        #expect(page.contains("<title>b</title>"))
        #expect(!(run.output + run.diagnostics).contains("s3kr1"))
    }
}

/// The command's sources, outputs and refusals (no external tool needed).
struct LabelsCommandTests {
    /// A ledger file with station 'a' verified (address C0:FF:EE:00:00:01) and 'b' pending.
    static func ledger(in scratch: Scratch) throws -> String {
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        return path
    }

    @Test func aLedgersVerifiedStationsCarryTheirRecordedAddress() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let ledger = try Self.ledger(in: scratch)
        let verified = ToolRun(["labels", "--ledger", ledger, "-o", scratch.path("v.svg")])
        #expect(verified.status == 0, "\(verified.diagnostics)")
        #expect(verified.output.hasPrefix("wrote \(scratch.path("v.svg")): 1 label\n"), "\(verified.output)")
        let page = try scratch.text("v.svg")
        #expect(page.components(separatedBy: "<g ").count == 2)
        #expect(page.contains("<title>a</title>") && page.contains(">C0:FF:EE:00:00:01</text>"))
        #expect(!page.contains("<title>b</title>"))
        // --all: every station; 'b' was never attempted, so its label has no address (a note says so).
        let all = ToolRun(["labels", "--ledger", ledger, "--all", "-o", scratch.path("all.svg")])
        #expect(all.status == 0, "\(all.diagnostics)")
        #expect(all.diagnostics.contains("note: 1 label without an address"), "\(all.diagnostics)")
        let both = try scratch.text("all.svg")
        #expect(both.contains("<title>a</title>") && both.contains("<title>b</title>"))
        #expect(both.components(separatedBy: ":00:00:").count == 2)
        // A ledger with nothing verified: nothing to label, and --all is suggested.
        let empty = scratch.path("empty.sqlite")
        let fresh = try SQLiteLedger(path: empty)
        try fresh.register([Station(name: "c", identity: IBeaconFixture.identity(3))])
        let none = ToolRun(["labels", "--ledger", empty, "-o", scratch.path("none.svg")])
        #expect(none.status == 1 && none.diagnostics.contains("has no verified station yet"), "\(none.diagnostics)")
        #expect(none.diagnostics.contains("hint: --all labels every station"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("none.svg")))
    }

    /// A ledger may hold a name no list would let through (an older ledger, one edited by hand):
    /// its control characters are shown, not written, and its markup stays text; the code holds
    /// it all. (Decoded too when rsvg-convert and zbarimg are there.)
    @Test func aLedgersHostileNameIsShownAndEncodedWhole() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        let name = "esc\u{1B}[31m</svg><svg onload=\"x\">\u{202E}"
        do {
            let ledger = try SQLiteLedger(path: path)
            try ledger.register([Station(name: name, identity: IBeaconFixture.identity(5))])
            let (_, attempt) = try #require(
                try ledger.claimNextStation(
                    chip: "00:12:4B:00:00:05", debugger: "EMU001", template: "t", templateSHA256: "x",
                    verifyMethod: "read", skipping: [], image: { _ in ("i", "C0:FF:EE:00:00:05") }))
            try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        }
        let run = ToolRun(["labels", "--ledger", path, "-o", scratch.path("l.svg")])
        #expect(run.status == 0, "\(run.diagnostics)")
        let bytes = try scratch.bytes("l.svg")
        #expect(!bytes.contains(0x1B) && !bytes.contains(0x00))
        let text = try scratch.text("l.svg")
        #expect(text.contains("<title>esc\\x1b[31m&lt;/svg&gt;&lt;svg onload=&quot;x&quot;&gt;\\u{202E}</title>"))
        #expect(text.components(separatedBy: "<svg").count == 2 && text.components(separatedBy: "<g ").count == 2)
        guard LabelTools.available else { return }
        var found = Set<String>()
        for scale in LabelTools.scales {
            found.formUnion(try LabelTools.decode(scratch.path("l.svg"), scale: scale, in: scratch))
        }
        #expect(
            found == [
                "ibeacon:\(LedgerFiles.uuid)/1/5?name=esc%1B%5B31m%3C%2Fsvg%3E%3Csvg%20onload%3D%22x%22%3E%E2%80%AE&addr=C0:FF:EE:00:00:05"
            ])
    }

    /// A template without an advertiser-address field: labels carry only the list's addresses.
    @Test func aTemplateWithoutAnAddressFieldLeavesOnlyTheListsAddresses() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let template = scratch.url.appendingPathComponent("no-address")
        try FileManager.default.copyItem(
            at: SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon"), to: template)
        let manifestURL = template.appendingPathComponent("template.json")
        var manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        manifest["name"] = "no-address"
        manifest["fields"] = (manifest["fields"] as? [[String: Any]] ?? []).filter {
            $0["kind"] as? String != "advertiser-address"
        }
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifestURL)
        let list = try scratch.write(
            "l.csv",
            "name,uuid,major,minor,address\na,\(LedgerFiles.uuid),1,1,\nb,\(LedgerFiles.uuid),1,2,C0:FF:EE:00:00:02\n")
        let run = ToolRun(["labels", list, "--template", template.path, "-o", scratch.path("l.svg")])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "note: template 'no-address' has no advertiser-address field: 1 label without an address"),
            "\(run.diagnostics)")
        let page = try scratch.text("l.svg")
        #expect(page.contains(">C0:FF:EE:00:00:02</text>"))
        #expect(page.components(separatedBy: "<text").count == 1 + 6 + 5)
    }

    /// batch's own record (stations.json) is a source as its list is: its template, identities
    /// and the addresses batch derived — the very labels the list and its template give.
    @Test func batchsRecordIsLabelledAsItsList() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("stations.csv", LabelFixtures.csv)
        #expect(ToolRun(["batch", list, "--board", "hm10", "-o", scratch.path("out")]).status == 0)
        let record = scratch.path("out/stations.json")
        let fromList = ToolRun(["labels", list, "--board", "hm10", "-o", scratch.path("list.svg")])
        #expect(fromList.status == 0, "\(fromList.diagnostics)")
        let fromRecord = ToolRun(["labels", record, "-o", scratch.path("record.svg")])
        #expect(fromRecord.status == 0, "\(fromRecord.diagnostics)")
        let pages = LabelsCommand.pageFiles(scratch.path("list.svg"), count: 2)
        let recordPages = LabelsCommand.pageFiles(scratch.path("record.svg"), count: 2)
        for (page, recordPage) in zip(pages, recordPages) {
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: page)) == Data(contentsOf: URL(fileURLWithPath: recordPage)))
        }
        // The record's own template may be named; another is refused, nothing written.
        let same = ToolRun(["labels", record, "--board", "hm10", "-o", scratch.path("same.svg")])
        #expect(same.status == 0, "\(same.diagnostics)")
        let other = ToolRun([
            "labels", record, "--template", "cc2541-ibeacon-prewhitened", "-o", scratch.path("other.svg"),
        ])
        #expect(
            other.status == 64 && other.diagnostics.contains("made with template 'cc2541-ibeacon'"),
            "\(other.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("other-1.svg")))
        // --templates alone says where nothing looks: refused, not ignored (it was, even for a
        // folder that does not exist).
        for folder in [scratch.path("out"), scratch.path("nowhere")] {
            let ignored = ToolRun(["labels", record, "--templates", folder, "-o", scratch.path("t.svg")])
            #expect(ignored.status == 64, "\(ignored.diagnostics)")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("t-1.svg")))
        }
    }

    /// One page goes to OUT.svg; more to OUT-1.svg, … padded to one width; files of an earlier
    /// run under those names are named, never removed.
    @Test func pagesAreNumberedAndEarlierOnesNamed() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("stations.csv", LabelFixtures.csv)
        let output = scratch.path("out.SVG")
        let single = ToolRun(
            ["labels", list, "--board", "hm10", "--sheet", "single", "--label-size", "62x29", "-o", output])
        #expect(single.status == 0, "\(single.diagnostics)")
        #expect(single.output.hasPrefix("wrote \(scratch.path("out-01.SVG")): label 1\n"), "\(single.output)")
        #expect(single.output.contains("wrote \(scratch.path("out-30.SVG")): label 30\n"))
        #expect(single.output.hasSuffix("30 labels on 30 pages, sheet single: one 62×29 mm label per page\n"))
        let sheet = ToolRun(["labels", list, "--board", "hm10", "-o", output])
        #expect(
            sheet.output.hasPrefix(
                "wrote \(scratch.path("out-1.SVG")): labels 1–24\nwrote \(scratch.path("out-2.SVG")): labels 25–30\n"),
            "\(sheet.output)")
        #expect(
            sheet.diagnostics.contains(
                "note: left alone, from an earlier run: 30 files, \(scratch.path("out-01.SVG")), "),
            "\(sheet.diagnostics)")
        #expect(FileManager.default.fileExists(atPath: scratch.path("out-30.SVG")))
        let few = try scratch.write("few.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let one = ToolRun(["labels", few, "--board", "hm10", "--sheet", "a4-3x7", "-o", output])
        #expect(one.output.hasPrefix("wrote \(output): 1 label\n"), "\(one.output)")
        #expect(one.output.hasSuffix("sheet a4-3x7: 3×7 labels of 70×42.3 mm on a 210×297 mm page\n"))
        #expect(one.diagnostics.contains("from an earlier run: 32 files, "), "\(one.diagnostics)")
        #expect(LabelsCommand.pageFiles("l.svg", count: 1) == ["l.svg"])
        #expect(LabelsCommand.pageFiles("d/l.svg", count: 10).last == "d/l-10.svg")
    }

    /// Refusals, each before anything is written.
    @Test func refusals() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("l.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let bad = try scratch.write("bad.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\nb,nope,1,70000\n")
        // b's address is the one a's identity derives: batch refuses the list, and so do labels.
        let derived = StationTemplate.derivedAddress(
            for: IBeacon(uuid: UUID(uuidString: LedgerFiles.uuid)!, major: 1, minor: 1))
        let clash = try scratch.write(
            "clash.csv",
            "name,uuid,major,minor,address\na,\(LedgerFiles.uuid),1,1,\nb,\(LedgerFiles.uuid),1,2,\(derived)\n")
        let ledger = try Self.ledger(in: scratch)
        let out = scratch.path("o.svg")
        try FileManager.default.createDirectory(atPath: scratch.path("folder.svg"), withIntermediateDirectories: false)
        let cases: [(arguments: [String], status: Int32, says: String)] = [
            (["-o", out], 64, "give a station list (STATIONS.csv or STATIONS.json) or --ledger FILE|URL"),
            ([list, "--ledger", ledger, "-o", out], 64, "give a station list or --ledger, not both"),
            ([list, "--board", "hm10", "--all", "-o", out], 64, "--all applies to --ledger"),
            ([list, "-o", out], 64, "a list's labels need the template its stations are burned with"),
            (["--ledger", ledger, "--board", "hm10", "-o", out], 64, "--board applies to a station list"),
            ([list, "--board", "hm10", "-o", scratch.path("o.png")], 64, "-o must name an .svg file"),
            ([list, "--board", "hm10", "-o", scratch.path(".svg")], 64, "-o must name an .svg file"),
            ([list, "--board", "hm10"], 64, "missing -o OUT.svg"),
            ([list, "--board", "hm10", "--sheet", "a4-2x7", "-o", out], 64, "--sheet 'a4-2x7' is not a sheet"),
            ([list, "--board", "hm10", "--sheet", "single", "-o", out], 64, "--sheet single needs --label-size"),
            ([list, "--board", "nope", "-o", out], 64, "no board 'nope'"),
            ([bad, "--board", "hm10", "-o", out], 65, "bad.csv:3:"),
            (
                [clash, "--board", "hm10", "-o", out], 65,
                "stations 'a' (line 2) and 'b' would both advertise as \(derived)"
            ),
            ([list, "--board", "hm10", "-o", scratch.path("folder.svg")], 64, "is a folder"),
            ([list, "--board", "hm10", "-o", scratch.path("missing/o.svg")], 1, "does not exist"),
            (["--ledger", scratch.path("nothing.sqlite"), "-o", out], 1, "no ledger at"),
        ]
        for (arguments, status, says) in cases {
            let run = ToolRun(["labels"] + arguments)
            #expect(run.status == status, "\(arguments): \(run.diagnostics)")
            #expect(run.diagnostics.contains(says), "\(arguments): \(run.diagnostics)")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
        // The list's and the ledger's own names are never written over (a symbolic link to them neither).
        try FileManager.default.createSymbolicLink(atPath: scratch.path("list.svg"), withDestinationPath: list)
        let overList = ToolRun(["labels", list, "--board", "hm10", "-o", scratch.path("list.svg")])
        #expect(overList.status == 64 && overList.diagnostics.contains("would overwrite the station list"))
        try FileManager.default.createSymbolicLink(atPath: scratch.path("ledger.svg"), withDestinationPath: ledger)
        let overLedger = ToolRun(["labels", "--ledger", ledger, "-o", scratch.path("ledger.svg")])
        #expect(
            overLedger.status == 64 && overLedger.diagnostics.contains("would overwrite the ledger"),
            "\(overLedger.diagnostics)")
        #expect(try scratch.text("l.csv").hasPrefix("name,uuid"))
    }

    /// A code that would be too fine to read on its label is refused before any page is written
    /// (a review found a 2,331-byte code on a 32 mm square, which decoded only at 600 dpi); the
    /// same station on a label large enough is labelled. The longest name a list allows (100
    /// characters, 400 bytes), percent-encoded, makes such a code.
    @Test func aCodeTooFineForItsLabelIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let name = "a" + String(repeating: "😀", count: 99)
        let list = try scratch.write(
            "long.csv", "name,uuid,major,minor\n\(name),7634A485-1732-4B7D-AB44-D505D8A24C60,1,2\n")
        let refused = ToolRun(["labels", list, "--board", "hm10", "-o", scratch.path("l.svg")])
        #expect(refused.status == 65, "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains("under the 0.25 mm a 300 dpi printer and a phone camera resolve"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("l.svg")))
        let large = ToolRun([
            "labels", list, "--board", "hm10", "--sheet", "210x297:1x1", "-o", scratch.path("big.svg"),
        ])
        #expect(large.status == 0, "\(large.diagnostics)")
    }

    @Test func helpShowsTheStringAndAnExample() {
        let help = ToolRun(["labels", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("ibeacon:UUID/MAJOR/MINOR?name=NAME&addr=ADDRESS"))
        #expect(help.output.contains("Examples:\n  ccbeacon labels stations.csv --board hm10 -o labels.svg"))
        #expect(help.output.contains("usage: ccbeacon labels [STATIONS.csv|STATIONS.json]"))
    }
}

import BeaconPayload
import CCDebuggerEmulator
import Foundation
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit
@testable import Provisioning
@testable import StationLedger

/// Ledger files made for the tests, each in a scratch folder as `ledger.sqlite`.
enum LedgerFiles {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// A ledger with stations 'a' (verified on chip 00:12:4B:00:00:01) and 'b' (pending); every
    /// connection closed, so no -wal file is left beside it.
    static func sound(_ path: String, readBack: String? = nil) throws {
        _ = try openSound(path, readBack: readBack)
    }

    /// `sound`, left open: what it wrote waits in its log (`-wal`) until it is closed.
    static func openSound(_ path: String, readBack: String? = nil) throws -> SQLiteLedger {
        let ledger = try SQLiteLedger(path: path)
        try ledger.register([
            Station(name: "a", identity: IBeaconFixture.identity(1)),
            Station(name: "b", identity: IBeaconFixture.identity(2)),
        ])
        let (_, attempt) = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:01", debugger: "EMU001", template: "t", templateSHA256: "x",
                verifyMethod: "read", skipping: [], image: { _ in ("i", "C0:FF:EE:00:00:01") }))
        try ledger.finish(attempt.id, outcome: .verified, reason: nil, readBack: readBack)
        return ledger
    }

    /// A sound ledger (see `sound`) whose station 'a' is renamed by raw SQL to `name` (an SQL
    /// expression), in its attempts too, after `first` ran: what no list can bring in.
    static func soundRenaming(_ path: String, _ name: String, first: [String] = []) throws {
        try sound(path)
        try alter(
            path,
            first + [
                "UPDATE attempts SET station = \(name) WHERE station = 'a'",
                "UPDATE stations SET name = \(name) WHERE name = 'a'",
            ])
    }

    /// Runs `statements` on the file directly, then closes it (checkpointing its WAL).
    static func alter(_ path: String, _ statements: [String]) throws {
        let raw = try SQLiteDatabase(path: path, mode: .readWrite)
        for statement in statements { try raw.execute(statement, [], "altering the test file") }
    }

    /// A sound ledger with the root page of its unique index `one_verified_per_chip` zeroed.
    static func damaged(_ path: String) throws {
        try sound(path)
        let raw = try SQLiteDatabase(path: path, mode: .immutable)
        let root = try #require(
            try raw.query("SELECT rootpage FROM sqlite_schema WHERE name = 'one_verified_per_chip'", [], "").first?
                .first?.int)
        let pageSize = try #require(try raw.query("PRAGMA page_size", [], "").first?.first?.int)
        try overwrite(path, at: (root - 1) * pageSize, with: Data(count: pageSize))
    }

    /// A sound ledger whose indexes disagree with their table, pages and records intact (what
    /// `PRAGMA quick_check` passes): `pending_by_position` holds every station, 'a' (verified)
    /// too, and `one_live_per_station` holds nothing — so a claim would take 'a' again.
    static func indexOutOfStep(_ path: String) throws {
        try sound(path)
        let raw = try SQLiteDatabase(path: path, mode: .readWrite)
        var definitions: [String: String] = [:]
        for name in ["pending_by_position", "one_live_per_station"] {
            definitions[name] = try #require(
                try raw.query("SELECT sql FROM sqlite_schema WHERE name = ?", [.text(name)], "").first?.first?.string)
        }
        try raw.execute("DROP INDEX pending_by_position", [], "")
        try raw.execute("CREATE INDEX pending_by_position ON stations(position)", [], "")
        try raw.execute("DROP INDEX one_live_per_station", [], "")
        try raw.execute("CREATE UNIQUE INDEX one_live_per_station ON attempts(station) WHERE 0", [], "")
        try raw.execute("PRAGMA writable_schema = ON", [], "")
        for (name, sql) in definitions {
            try raw.execute("UPDATE sqlite_schema SET sql = ? WHERE name = ?", [.text(sql), .text(name)], "")
        }
        try raw.execute("PRAGMA writable_schema = OFF", [], "")
    }

    /// A sound ledger with `bytes` written over it at `offset`.
    static func sound(_ path: String, overwrittenAt offset: Int, with bytes: Data) throws {
        try sound(path)
        try overwrite(path, at: offset, with: bytes)
    }

    /// `bytes` written over the file at `offset`.
    static func overwrite(_ path: String, at offset: Int, with bytes: Data) throws {
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? file.close() }
        try file.seek(toOffset: UInt64(offset))
        try file.write(contentsOf: bytes)
    }

    /// The files that must be refused, how to make each, and what the message calls it.
    static let refused: [(name: String, make: @Sendable (String) throws -> Void, says: String)] = [
        ("empty", { path in try Data().write(to: URL(fileURLWithPath: path)) }, "it is an empty file (0 bytes)"),
        (
            "text",
            { path in try Data("name,uuid,major,minor\nx,\(uuid),1,1\n".utf8).write(to: URL(fileURLWithPath: path)) },
            "it is a text file, not an SQLite database"
        ),
        (
            "foreign",
            { path in
                let raw = try SQLiteDatabase(path: path, mode: .create)
                try raw.execute("PRAGMA journal_mode=WAL", [], "")
                try raw.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)", [], "")
                try raw.execute("INSERT INTO notes(text) VALUES ('mine')", [], "")
            },
            "it is an SQLite database without ccbeacon's tables (it has tables \"notes\")"
        ),
        (
            "other application",
            { path in
                // Tables named like ccbeacon's do not make it a ledger: its application id says whose it is.
                try makeLegacyLedgerTables(path)
                try alter(path, ["PRAGMA application_id = 305419896"])
            },
            "it is an SQLite database of another application (application_id 0x12345678"
        ),
        (
            "newer schema",
            { path in
                try sound(path)
                try alter(path, ["PRAGMA user_version = \(SQLiteLedger.schemaVersion + 1)"])
            },
            "it is a ccbeacon ledger of schema version \(SQLiteLedger.schemaVersion + 1); this ccbeacon knows versions up to \(SQLiteLedger.schemaVersion)"
        ),
        // integrity_check stops at the zeroed index with SQLite's error; ledger check reports the pages.
        ("damaged", { path in try damaged(path) }, "it is a damaged ccbeacon ledger: database disk image is malformed"),
        (
            "index out of step",
            { path in try indexOutOfStep(path) },
            "it is a damaged ccbeacon ledger: row 1 missing from index one_live_per_station; wrong # of entries in index one_live_per_station; wrong # of entries in index pending_by_position"
        ),
        (
            "unreadable schema",
            // The first page's b-tree, where SQLite keeps the schema, zeroed after the file header.
            { path in try sound(path, overwrittenAt: 100, with: Data(count: 400)) },
            "it is a damaged ccbeacon ledger: database disk image is malformed"
        ),
        (
            "table dropped",
            { path in
                try sound(path)
                try alter(path, ["DROP TABLE calibrations"])
            },
            "it is a damaged ccbeacon ledger: missing columns calibrations.id"
        ),
        (
            "header field",
            // The schema format number (header bytes 44–47) out of SQLite's range: SQLite itself
            // says only "unsupported file format", which ledger check used to pass on as exit 1.
            { path in try sound(path, overwrittenAt: 47, with: Data([0xFF])) },
            "it is a damaged ccbeacon ledger: the file header's schema format number is 255; SQLite knows 1 to 4"
        ),
    ]

    /// The two tables of a ledger from before application ids, nothing else.
    static func makeLegacyLedgerTables(_ path: String) throws {
        let raw = try SQLiteDatabase(path: path, mode: .create)
        try raw.execute(SQLiteLedger.tables[0], [], "")
        try raw.execute(SQLiteLedger.tables[1], [], "")
    }
}

/// Identities for the ledger tests.
enum IBeaconFixture {
    static func identity(_ minor: Int) -> IBeacon {
        IBeacon(uuid: UUID(uuidString: LedgerFiles.uuid)!, major: 1, minor: UInt16(minor))
    }
}

struct LedgerCommandTests {
    /// Every command that opens a ledger refuses a file that is not one it may use, with exit 65,
    /// a message saying what the file is and a hint, and leaves the file (and its folder) exactly
    /// as it was: no byte changed, no -wal, -shm or temporary file.
    @Test(arguments: LedgerFiles.refused.indices)
    func aFileThatIsNotAUsableLedgerIsRefusedAndLeftAsItWas(index: Int) throws {
        let (name, make, says) = LedgerFiles.refused[index]
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try make(path)
        let before = try filesBeside(path)
        #expect(before.count == 1, "\(name): the test file stands alone (\(before.keys.sorted()))")
        let list = try scratch.write("list.csv", "name,uuid,major,minor\ns1,\(LedgerFiles.uuid),7,1\n")
        let commands: [[String]] = [
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.1"],
            ["ledger", "show"], ["ledger", "show", "--json"], ["ledger", "export", "--format", "json"],
            ["ledger", "export"], ["ledger", "export", "--format", "ios-regions"], ["ledger", "check"],
            ["check-app", try scratch.write("regions.json", "[]")],
        ]
        for command in commands {
            let run = ToolRun(command + ["--ledger", path], debuggers: EmulatorProvider())
            let label = "\(name): \(command.prefix(2).joined(separator: " "))"
            #expect(run.status == 65, "\(label): \(run.diagnostics)")
            if ["damaged", "index out of step"].contains(name), command[1] == "check" {
                // ledger check reports the damage instead of refusing the file.
                #expect(run.output.contains("integrity: "), "\(label): \(run.output)")
            } else if ["unreadable schema", "table dropped", "header field"].contains(name), command[1] == "check" {
                // What SQLite could not read is the check's finding; it used to refuse the file,
                // hinting that ledger check (itself) gives the full report.
                let finding = says.replacingOccurrences(of: "it is a damaged ccbeacon ledger: ", with: "readable: ")
                #expect(run.output.contains(finding), "\(label): \(run.output)")
                #expect(!run.diagnostics.contains("ledger check --ledger"), "\(label): \(run.diagnostics)")
            } else {
                #expect(run.diagnostics.contains(says), "\(label): \(run.diagnostics)")
                #expect(run.diagnostics.contains("nothing was written to it\nhint: "), "\(label): \(run.diagnostics)")
            }
            #expect(try filesBeside(path) == before, "\(label) changed the file or left files beside it")
        }
    }

    /// provision of a list of 'a' and 'b' (the stations of `LedgerFiles.sound`) with the ledger at
    /// `ledger`, on one emulated debugger.
    static func provisionStationsAAndB(_ scratch: Scratch, ledger: String) throws -> ToolRun {
        let list = try scratch.write(
            "list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\nb,\(LedgerFiles.uuid),1,2\n")
        return ToolRun(
            ["provision", list, "--ledger", ledger, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.1"],
            debuggers: EmulatorProvider())
    }

    /// Indexes out of step with their table (pages intact: `quick_check` passes) made the next
    /// claim take 'a', verified on its chip, and burn it on a second one. The whole check runs
    /// before a claim: refused, no chip touched.
    @Test func aLedgerWhoseIndexesAreOutOfStepBurnsNothing() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.indexOutOfStep(path)
        let run = try Self.provisionStationsAAndB(scratch, ledger: path)
        #expect(run.status == 65, "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("burned") && !run.diagnostics.contains("verified"), "\(run.diagnostics)")
        let attempts = try SQLiteDatabase(path: path, mode: .immutable).query(
            "SELECT station, chip, outcome FROM attempts ORDER BY id", [], "")
        #expect(attempts.map { $0.compactMap(\.string) } == [["a", "00:12:4B:00:00:01", "verified"]])
    }

    /// A crash left 'a' verified in the ledger's log, not yet merged into the file; a byte of the
    /// log changed since. SQLite stops at the damaged frame and drops every commit after it without
    /// a word: the ledger read as having no station, and provision burned 'a' again (the ninth
    /// review). Frames of the same log that hold after one that does not are damage: refused.
    @Test func aLedgerWhoseLogIsDamagedInsideBurnsNothing() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let live = scratch.path("live.sqlite")
        let ledger = try LedgerFiles.openSound(live)
        // The files as a kill leaves them, the ledger still open.
        let path = scratch.path("ledger.sqlite")
        for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: live + suffix, toPath: path + suffix) }
        withExtendedLifetime(ledger) {}
        try LedgerFiles.overwrite(path + "-wal", at: 32 + 24 + 200, with: Data([0x5A]))
        let run = try Self.provisionStationsAAndB(scratch, ledger: path)
        #expect(run.status == 65, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "it is a damaged ccbeacon ledger: \(path)-wal: frame 1 does not hold (its checksum or salts), and commit frames 4 and 7 of the same log after it do: SQLite would read the ledger without the commits from frame 1 on"
            ), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("burning"), "\(run.diagnostics)")
        let show = ToolRun(["ledger", "show", "--ledger", path])
        #expect(show.status == 65 && show.diagnostics.contains("frame 1 does not hold"), "\(show.diagnostics)")
        let check = ToolRun(["ledger", "check", "--ledger", path])
        #expect(check.status == 65 && check.output.contains("frame 1 does not hold"), "\(check.output)")
    }

    /// The fewest regions that cover a ledger, exported, pass `check-app` against that ledger;
    /// an app's regions with another vendor's UUID fail it (exit 1), with the reason; the same
    /// holds against a station list; stations from both, or from neither, is a usage error.
    @Test func exportedRegionsPassCheckAppAndAVendorsDefaultFailsIt() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        let regions = scratch.path("regions.json")
        let export = ToolRun(["ledger", "export", "--ledger", path, "--format", "ios-regions", "-o", regions])
        #expect(export.status == 0, "\(export.diagnostics)")
        #expect(
            try String(contentsOfFile: regions, encoding: .utf8)
                == "[\n  {\n    \"identifier\": \"ccbeacon-\(LedgerFiles.uuid)-1\",\n    \"uuid\": \"\(LedgerFiles.uuid)\",\n    \"major\": 1\n  }\n]\n"
        )
        let passed = ToolRun(["check-app", regions, "--ledger", path])
        #expect(passed.status == 0, "\(passed.diagnostics)")
        #expect(
            passed.output
                == "1 region in \(regions), 1 station in \(path)\nOK: every station is covered and every region matches a station\n"
        )

        let vendor = try scratch.write(
            "vendor.json", #"[{"identifier": "store", "uuid": "B9407F30-F5F8-466E-AFF9-25556B57FE6D"}]"#)
        let failed = ToolRun(["check-app", vendor, "--ledger", path, "--json"])
        #expect(failed.status == 1)
        #expect(failed.output.contains(#""passed": false"#))
        #expect(failed.output.contains("its UUID is Estimote's factory default, which no station uses"))
        #expect(failed.diagnostics.contains("error: the app's regions do not match the stations"))
        let list = try scratch.write("list.csv", "name,uuid,major,minor\ns1,\(LedgerFiles.uuid),7,1\n")
        let fromList = ToolRun(["check-app", vendor, list])
        #expect(fromList.status == 1)
        #expect(fromList.output.contains("uncovered: s1 (\(LedgerFiles.uuid) major 7 minor 1): no region covers it"))
        // A long identifier is quoted short (a 5,000-character one made a line of 5,189).
        let long = try scratch.write(
            "long.json",
            #"[{"identifier": ""# + String(repeating: "x", count: 5000)
                + #"", "uuid": "\#(LedgerFiles.uuid)", "major": 8}]"#)
        let longRun = ToolRun(["check-app", long, list])
        #expect(
            longRun.output.contains(
                "unmatched: region [0] '\(String(repeating: "x", count: 40))… (5000 characters)' (line 1), "),
            "\(longRun.output)")
        // A region a later one of its identifier replaces covers nothing the app monitors.
        let replaced = try scratch.write(
            "replaced.json",
            #"[{"identifier": "site", "uuid": "\#(LedgerFiles.uuid)", "major": 7},"#
                + #" {"identifier": "site", "uuid": "\#(LedgerFiles.uuid)", "major": 8}]"#)
        let replacedRun = ToolRun(["check-app", replaced, list])
        #expect(replacedRun.status == 1)
        #expect(
            replacedRun.output.contains(
                "uncovered: s1 (\(LedgerFiles.uuid) major 7 minor 1): region [0] 'site' (line 1) covers it, but the app monitors region [1] 'site' (line 1) under that identifier instead\n"
            ), "\(replacedRun.output)")
        for (arguments, message) in [
            (["check-app", regions], "give the stations: a station list (STATIONS.csv) or --ledger FILE|URL"),
            (["check-app", regions, list, "--ledger", path], "give a station list or --ledger, not both"),
        ] {
            let run = ToolRun(arguments)
            #expect(run.status == 64)
            #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
        }
        let broken = try scratch.write("broken.json", #"[{"identifier": "a", "uuid": "x"}]"#)
        let refused = ToolRun(["check-app", broken, list])
        #expect(refused.status == 65)
        #expect(refused.diagnostics.contains("broken.json:1:"), "\(refused.diagnostics)")
    }

    @Test func checkPassesASoundLedgerAndListsWhatIsBrokenBehindTheIndexes() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        let clean = ToolRun(["ledger", "check", "--ledger", path])
        #expect(clean.status == 0, "\(clean.diagnostics)")
        #expect(clean.output == "\(path): ok (integrity, schema and every invariant checked)\n")

        // Behind the indexes' back: the unique index goes, and chip 00:12:4B:00:00:01 gets a
        // second verified station.
        try LedgerFiles.alter(
            path,
            [
                "DROP INDEX one_verified_per_chip",
                "INSERT INTO attempts(station, chip, debugger, template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES ('b', '00:12:4B:00:00:01', 'd', 't', 'x', 'i', 'now', 'now', 'verified', 'crc')",
                "UPDATE stations SET taken = 1 WHERE name = 'b'",
            ])
        let before = try filesBeside(path)
        let broken = ToolRun(["ledger", "check", "--ledger", path])
        #expect(broken.status == 65)
        #expect(
            broken.output == """
                \(path): 2 problem(s)
                  schema: the unique index one_verified_per_chip is missing
                  one-verified-per-chip: chip "00:12:4B:00:00:01" has verified attempts 1, 2

                """)
        #expect(broken.diagnostics.hasPrefix("ccbeacon ledger check: error: the ledger has 2 problem(s)\nhint: "))
        let json = ToolRun(["ledger", "check", "--ledger", path, "--json"])
        #expect(json.status == 65)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(report["ok"] as? Bool == false)
        let checks = (report["problems"] as? [[String: Any]] ?? []).compactMap { $0["check"] as? String }
        #expect(checks == ["schema", "one-verified-per-chip"])
        #expect(try filesBeside(path) == before, "ledger check only reads")
        // And provisioning refuses to trust it.
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let provision = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", path, "--yes", "--wait", "0.1"],
            debuggers: EmulatorProvider())
        #expect(provision.status == 65)
        #expect(provision.diagnostics.contains("the unique index one_verified_per_chip is missing"))
        #expect(try filesBeside(path) == before)
    }

    @Test func exportListsWhichBytesWereReadBack() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path, readBack: "0x7F00-0x7F2F,0x7F30-0x7F3F")
        let csv = ToolRun(["ledger", "export", "--ledger", path])
        #expect(csv.status == 0, "\(csv.diagnostics)")
        let lines = csv.output.split(separator: "\n")
        #expect(
            lines.first
                == "name,uuid,major,minor,power,chip,debugger,at,address,readBack,heard,rssiCount,rssiMedian,powerSource,debugLocked,bench,run"
        )
        let attempt = try #require(try SQLiteLedger(path: path, access: .readOnly).attempts().first)
        #expect(
            lines.dropFirst().first?.hasSuffix(
                ",C0:FF:EE:00:00:01,\"0x7F00-0x7F2F,0x7F30-0x7F3F\",,,,registered,no,\(attempt.bench ?? ""),\(attempt.run ?? "")"
            ) == true, "\(lines)")
        #expect(attempt.run != nil)
        let json = ToolRun(["ledger", "export", "--ledger", path, "--format", "json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(rows.count == 1)
        #expect(rows.first?["readBack"] as? String == "0x7F00-0x7F2F,0x7F30-0x7F3F")
        #expect(try filesBeside(path).count == 1, "export left nothing beside the ledger")
    }

    /// `-o FILE` writes what standard output would get, whole; never over the ledger itself.
    @Test func exportToAFileNeverReplacesTheLedger() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        for format in ["csv", "json"] {
            let printed = ToolRun(["ledger", "export", "--ledger", path, "--format", format])
            let written = ToolRun(["ledger", "export", "--ledger", path, "--format", format, "-o", scratch.path("r")])
            #expect(written.status == 0 && written.output == "wrote \(scratch.path("r"))\n", "\(written.diagnostics)")
            #expect(String(decoding: try scratch.bytes("r"), as: UTF8.self) == printed.output)
        }
        let before = try scratch.bytes("ledger.sqlite")
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link.sqlite"), withDestinationPath: path)
        for target in [path, scratch.path("link.sqlite"), scratch.path("./ledger.sqlite")] {
            let refused = ToolRun(["ledger", "export", "--ledger", path, "-o", target])
            #expect(refused.status == 64, "\(refused.diagnostics)")
            #expect(refused.diagnostics.contains("would overwrite the ledger"))
        }
        #expect(try scratch.bytes("ledger.sqlite") == before)
    }
}

/// Values a damaged or hand-edited ledger may hold that no station can have: every reader says
/// so (exit 65) instead of crashing ("Not enough bits to represent the passed value") or leaving
/// the station out, and `ledger check` finds them. An index that keeps its name but no longer
/// its promise is found too.
struct ImpossibleLedgerValueTests {
    @Test(arguments: [
        "UPDATE stations SET power = 200 WHERE name = 'b'", "UPDATE stations SET major = 70000 WHERE name = 'b'",
        "UPDATE stations SET major = -1 WHERE name = 'b'", "UPDATE stations SET minor = 1.5 WHERE name = 'b'",
        "UPDATE stations SET uuid = 'not a uuid' WHERE name = 'b'",
    ])
    func aStationThatCannotBeIsReportedNeverDroppedOrCrashedOn(statement: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        // The ledger's own triggers refuse such values: a hand edit that got them in dropped the
        // trigger first.
        try LedgerFiles.alter(path, ["DROP TRIGGER station_values_on_update", statement])
        for arguments in [["ledger", "show"], ["ledger", "show", "--json"], ["ledger", "export"]] {
            let run = ToolRun(arguments + ["--ledger", path])
            #expect(run.status == 65, "\(arguments): \(run.output)\(run.diagnostics)")
            #expect(run.diagnostics.contains("a record cannot be read: station \"b\""), "\(run.diagnostics)")
        }
        let check = ToolRun(["ledger", "check", "--ledger", path])
        #expect(check.status == 65)
        #expect(
            check.output.contains("station-values") || check.diagnostics.contains("station-values"), "\(check.output)")
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let provision = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", path])
        #expect(provision.status == 65, "\(provision.output)\(provision.diagnostics)")
    }

    @Test func anIndexThatKeptItsNameButNotItsPromiseIsFound() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        try LedgerFiles.alter(
            path,
            ["DROP INDEX one_verified_per_station", "CREATE UNIQUE INDEX one_verified_per_station ON attempts(id)"])
        let check = ToolRun(["ledger", "check", "--ledger", path])
        #expect(check.status == 65)
        #expect(check.output.contains("one_verified_per_station is not the one ccbeacon made"), "\(check.output)")
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let provision = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", path])
        #expect(provision.status == 65, "\(provision.diagnostics)")
    }
}

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
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? file.close() }
        try file.seek(toOffset: UInt64((root - 1) * pageSize))
        try file.write(contentsOf: Data(count: pageSize))
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
        ("damaged", { path in try damaged(path) }, "it is a damaged ccbeacon ledger: *** in database main ***"),
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
            if name == "damaged", command[1] == "check" {
                // ledger check reports the damage instead of refusing the file.
                #expect(run.output.contains("integrity: "), "\(label): \(run.output)")
            } else {
                #expect(run.diagnostics.contains(says), "\(label): \(run.diagnostics)")
                #expect(run.diagnostics.contains("nothing was written to it\nhint: "), "\(label): \(run.diagnostics)")
            }
            #expect(try filesBeside(path) == before, "\(label) changed the file or left files beside it")
        }
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

/// One provision run per ledger: a second run would take the first one's burns in progress for
/// a crash's (and with --release-interrupted give their stations to other chips).
struct OneRunPerLedgerTests {
    @Test func aSecondProvisionOnTheSameLedgerIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let ledger = scratch.path("provisioning.sqlite")
        let held = try FolderLock.acquire(scratch.url.path, name: ".provisioning.sqlite.lock", wait: false)
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--release-interrupted"],
            debuggers: EmulatorProvider())
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains("another provision (process \(getpid())) is using the ledger \(ledger)"),
            "\(run.diagnostics)")
        #expect(!Files.exists(ledger), "nothing was written")
        held.release()
        // Alone it runs — and ends as soon as its one station is done, without waiting the
        // default ten minutes for a chip nothing is left for.
        let alone = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes"], debuggers: EmulatorProvider())
        #expect(alone.status == 0, "\(alone.diagnostics)")
    }

    /// --release-interrupted lets a held station go to a new chip and names the chip that may
    /// still carry its identity, with what to do when it turns up.
    @Test func aReleasedStationNamesItsChip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        do {
            // A run whose process is gone left its burn in progress.
            let crashed = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), identity: .goneProcess)
            try crashed.register([Station(name: "a", identity: IBeaconFixture.identity(1))])
            _ = try crashed.claimNextStation(
                chip: "00:12:4B:00:00:77", debugger: "EMU001", template: "t", templateSHA256: "x",
                verifyMethod: "crc", skipping: [], image: { _ in ("i", nil) })
        }
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--release-interrupted", "--wait", "0.2"],
            debuggers: EmulatorProvider(count: 0))
        #expect(
            run.diagnostics.contains(
                "released 'a' (was interrupted on chip 00:12:4B:00:00:77); chip 00:12:4B:00:00:77 may still carry its identity: erase it (ccbeacon erase) or set it aside"
            ), "\(run.diagnostics)")
        let states = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), access: .readOnly).states()
        guard case .pending = states.first?.state else {
            Issue.record("the released station is pending: \(states)")
            return
        }
    }

    /// The lock sits beside the ledger's real path: a run through a symbolic link to the ledger,
    /// or through a symlinked folder, meets the same lock (it used to take one of its own, release
    /// the first run's burn in progress and burn that identity into a second chip).
    @Test func aRunThroughAnotherNameOfTheLedgerIsRefusedToo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        try FileManager.default.createDirectory(atPath: scratch.path("real"), withIntermediateDirectories: false)
        let real = scratch.path("real/T.sqlite")
        try LedgerFiles.sound(real)
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link.sqlite"), withDestinationPath: real)
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("alias"), withDestinationPath: scratch.path("real"))
        let before = try Files.read(real)
        let realFolder = SQLiteLedger.realPath(scratch.path("real"))
        let held = try FolderLock.acquire(realFolder, name: ".T.sqlite.lock", wait: false)
        defer { held.release() }
        for name in ["link.sqlite", "alias/T.sqlite", "real/../real/T.sqlite"] {
            let run = ToolRun(
                [
                    "provision", list, "--template", "cc2541-ibeacon", "--yes", "--release-interrupted", "--ledger",
                    scratch.path(name),
                ],
                debuggers: EmulatorProvider())
            #expect(run.status == 1, "\(name): \(run.diagnostics)")
            #expect(run.diagnostics.contains("another provision (process \(getpid()))"), "\(name): \(run.diagnostics)")
        }
        #expect(try Files.read(real) == before)
        // A ledger that does not exist yet, named through the symlinked folder: the same lock.
        let newHeld = try FolderLock.acquire(realFolder, name: ".New.sqlite.lock", wait: false)
        defer { newHeld.release() }
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", scratch.path("alias/New.sqlite")],
            debuggers: EmulatorProvider())
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(!Files.exists(scratch.path("real/New.sqlite")))
    }
}

/// SQLite keeps a ledger's journal (-wal, -shm) beside the name it was opened by. A second name
/// for the same file would miss what is only in the journal — and, written through, fork the
/// history: a crashed run's records vanished and stations were burned again.
struct LedgerNameTests {
    /// `--ledger --yes` forgot the ledger's name: taking `--yes` for it made a new ledger named
    /// `--yes` and burned stations the real ledger has as done a second time (found by a review).
    /// A value that is one of the command's own options is refused before anything happens.
    @Test func anOptionIsNeverTakenForAMissingValue() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        for arguments in [
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", "--yes"],
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", "--jsno", "--yes"],
            ["ledger", "export", "-o", "--format", "json"], ["ledger", "show", "--ledger", "--json"],
        ] {
            let run = ToolRun(arguments, debuggers: EmulatorProvider())
            #expect(run.status == 64, "\(arguments): \(run.diagnostics)")
            #expect(run.diagnostics.contains("option; to give that text as the value, write"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("")) == ["list.csv"])
        for name in ["--yes", "--format", "--jsno"] { #expect(!FileManager.default.fileExists(atPath: name)) }
    }

    /// A run killed inside the ledger's creation — after the new ledger was linked into place,
    /// before its temporary name was removed — leaves the ledger with a second name of ccbeacon's
    /// own making. The next runs take it for the leftover it is (provision removes it; the
    /// read-only commands leave it and read the ledger) instead of refusing the ledger for good.
    /// Found by the kill test, which killed a bench in that window.
    @Test func aCreationKilledBeforeItsTemporaryNameWentLeavesAUsableLedger() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("provisioning.sqlite")
        do { _ = try SQLiteLedger(path: path) }
        let leftover = path + ".ccbeacon-creating-4242-1x2y3z"
        try FileManager.default.linkItem(atPath: path, toPath: leftover)
        for arguments in [["ledger", "show"], ["ledger", "export"], ["ledger", "check"]] {
            let run = ToolRun(arguments + ["--ledger", path])
            #expect(run.status == 0, "\(arguments): \(run.diagnostics)")
            #expect(Files.exists(leftover), "a read-only command removed a name")
        }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        let provision = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", path])
        #expect(provision.status != 65, "\(provision.diagnostics)")
        #expect(!Files.exists(leftover))
        #expect(ToolRun(["ledger", "show", "--ledger", path]).output.contains("x "))
        // Second names that are not exactly ccbeacon's are someone's: refused, and counted whole.
        for (index, name) in [
            ".ccbeacon-creating-1-AB", ".new-1-ab", ".ccbeacon-creating-1-ab-c", ".ccbeacon-creating-١-ab",
        ]
        .enumerated() {
            try FileManager.default.linkItem(atPath: path, toPath: path + name)
            let run = ToolRun(["ledger", "show", "--ledger", path])
            #expect(
                run.status == 65 && run.diagnostics.contains("has \(index + 2) names"), "\(name): \(run.diagnostics)")
        }
    }

    /// The leftover is removed only from a ledger that passed every check: a refused ledger and its
    /// folder stay as they were (found by a review: the leftover went before a foreign journal
    /// refused the ledger). A temporary ledger that a creation killed before its link left is
    /// removed once its process is gone, with its journals; a live process's is left alone.
    @Test func leftoversGoOnlyWithAnAcceptedLedgerAndOnlyWhenTheirProcessIsGone() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("provisioning.sqlite")
        do { _ = try SQLiteLedger(path: path) }
        let leftover = path + ".ccbeacon-creating-4242-abc"
        try FileManager.default.linkItem(atPath: path, toPath: leftover)
        try FileManager.default.createSymbolicLink(atPath: path + "-journal", withDestinationPath: scratch.path("x"))
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        let refused = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", path])
        #expect(refused.status == 65, "\(refused.diagnostics)")
        #expect(Files.exists(leftover), "a refused ledger's folder was changed")
        try FileManager.default.removeItem(atPath: path + "-journal")

        // A dead process's separate temporary ledger (pid 0x7FFFFFF0 runs nowhere) and a live one's.
        let abandoned = path + ".ccbeacon-creating-2147483632-zz"
        let inProgress = path + ".ccbeacon-creating-\(getpid())-zz"
        for name in [abandoned, inProgress, abandoned + "-journal", abandoned + "-wal"] {
            _ = try scratch.write(Files.lastComponent(name), "")
        }
        let accepted = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", path])
        #expect(accepted.status != 65, "\(accepted.diagnostics)")
        #expect(!Files.exists(leftover) && !Files.exists(abandoned), "a killed creation's files stay")
        #expect(!Files.exists(abandoned + "-journal") && !Files.exists(abandoned + "-wal"))
        #expect(Files.exists(inProgress), "a creation in progress was removed")
    }

    /// A folder given as the ledger is "not a regular file", not a file with several names (a
    /// folder's link count counts its subfolders).
    @Test func aFolderGivenAsTheLedgerIsNamedForWhatItIs() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.path("p1/sub"), withIntermediateDirectories: true)
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        let run = ToolRun(["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", scratch.path("p1")])
        #expect(run.status == 65 && run.diagnostics.contains("not a regular file"), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("names"))
    }

    @Test func aSymlinkIsFollowedAndASecondHardLinkIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("provisioning.sqlite")
        // A writer that has not checkpointed: its last records are only in the -wal file.
        let open = try SQLiteLedger(path: path)
        try open.register([Station(name: "only-in-the-wal", identity: IBeaconFixture.identity(7))])
        #expect(Files.exists(path + "-wal"))
        try FileManager.default.createSymbolicLink(atPath: scratch.path("link.sqlite"), withDestinationPath: path)
        let show = ToolRun(["ledger", "show", "--ledger", scratch.path("link.sqlite")])
        #expect(show.status == 0 && show.output.contains("only-in-the-wal"), "\(show.output)\(show.diagnostics)")
        let wal = try Files.read(path + "-wal")
        let export = ToolRun(["ledger", "export", "--ledger", scratch.path("link.sqlite"), "-o", path + "-wal"])
        #expect(
            export.status == 64 && export.diagnostics.contains("would overwrite the ledger"), "\(export.diagnostics)")
        #expect(try Files.read(path + "-wal") == wal)

        try FileManager.default.linkItem(atPath: path, toPath: scratch.path("hard.sqlite"))
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),1,1\n")
        for arguments in [
            ["ledger", "show"], ["ledger", "export"], ["ledger", "check"],
            ["provision", list, "--template", "cc2541-ibeacon", "--yes"],
        ] {
            for name in ["hard.sqlite", "provisioning.sqlite"] {
                let run = ToolRun(arguments + ["--ledger", scratch.path(name)])
                #expect(run.status == 65, "\(arguments) \(name): \(run.output)\(run.diagnostics)")
                #expect(run.diagnostics.contains("has 2 names (hard links)"), "\(run.diagnostics)")
            }
        }
        #expect(try Files.read(path + "-wal") == wal)
    }

    /// What SQLite takes for a ledger's journal must be that journal: it writes a -wal file from
    /// its start and maps the -shm file into memory, so a journal name that leads to another
    /// ledger (a link, a second name, a copy) would have SQLite overwrite that ledger's first
    /// pages. Every such ledger is refused before anything is opened for writing.
    @Test(arguments: ["symlink-wal", "symlink-shm", "hardlink-wal", "copy-wal", "folder-shm"])
    func aJournalNameThatLeadsToAnotherFileIsRefused(kind: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("provisioning.sqlite")
        let other = scratch.path("other.sqlite")
        try LedgerFiles.sound(path)
        try LedgerFiles.sound(other)
        let otherBytes = try Files.read(other)
        let suffix = kind.hasSuffix("wal") ? "-wal" : "-shm"
        switch kind {
        case "symlink-wal", "symlink-shm":
            try FileManager.default.createSymbolicLink(atPath: path + suffix, withDestinationPath: other)
        case "hardlink-wal": try FileManager.default.linkItem(atPath: other, toPath: path + suffix)
        case "copy-wal": try FileManager.default.copyItem(atPath: other, toPath: path + suffix)
        default: try FileManager.default.createDirectory(atPath: path + suffix, withIntermediateDirectories: false)
        }
        let ledgerBytes = try Files.read(path)
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nx,\(LedgerFiles.uuid),3,3\n")
        for arguments in [
            ["provision", list, "--template", "cc2541-ibeacon", "--yes"],
            ["ledger", "show"], ["ledger", "export"], ["ledger", "check"],
        ] {
            let run = ToolRun(arguments + ["--ledger", path], debuggers: EmulatorProvider())
            #expect(run.status == 65, "\(kind) \(arguments): \(run.output)\(run.diagnostics)")
            #expect(run.diagnostics.contains("provisioning.sqlite\(suffix)"), "\(run.diagnostics)")
            #expect(try Files.read(other) == otherBytes, "\(kind) \(arguments): the other ledger was written")
            #expect(try Files.read(path) == ledgerBytes, "\(kind) \(arguments): the ledger was written")
        }
        // No ledger yet: none is created beside such a journal name (it would be refused and left).
        let fresh = scratch.path("fresh.sqlite")
        try FileManager.default.createSymbolicLink(atPath: fresh + "-wal", withDestinationPath: other)
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--ledger", fresh],
            debuggers: EmulatorProvider())
        #expect(run.status == 65, "\(run.diagnostics)")
        #expect(!Files.exists(fresh), "a refused ledger was created")
        #expect(try Files.read(other) == otherBytes)
    }
}

/// `ledger show`, `export` and `check` as another user (nobody) on a ledger they may only read:
/// run as root, a chmod stops nothing, so the real binary runs under setpriv.
@Suite(.enabled(if: OtherUser.available, "needs root, setpriv and the built ccbeacon"))
struct ReadOnlyLedgerTests {
    static let readers: [[String]] = [
        ["ledger", "show"], ["ledger", "export", "--format", "json"], ["ledger", "export"], ["ledger", "check"],
    ]

    /// A WAL ledger with no -wal file: a read-only file, in a read-only folder and in a writable
    /// one. Every reader works, nothing is written or created; provisioning cannot write it
    /// (which shows the child really was denied).
    @Test(arguments: [true, false])
    func aReadOnlyLedgerIsReadWithoutWriting(readOnlyFolder: Bool) throws {
        let scratch = try Scratch()
        defer {
            OtherUser.unlock(scratch)
            scratch.remove()
        }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        try OtherUser.lock(scratch, folder: readOnlyFolder ? 0o555 : 0o777)
        let before = try filesBeside(path)
        for reader in Self.readers {
            let run = try OtherUser.ccbeacon(reader + ["--ledger", path], in: scratch)
            #expect(run.status == 0, "\(reader): \(run.errors)")
            #expect(run.output.contains("00:12:4B:00:00:01") || reader[1] == "check", "\(reader): \(run.output)")
            #expect(try filesBeside(path) == before, "\(reader) wrote or created a file")
        }
        let provision = try OtherUser.ccbeacon(
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", path, "--yes", "--wait", "0.1"],
            in: scratch)
        #expect(provision.status == 1)
        #expect(
            provision.errors.contains(readOnlyFolder ? "cannot lock the ledger" : "the file cannot be written"),
            "\(provision.errors)")
        #expect(try filesBeside(path) == before)
    }

    /// A ledger left with -wal and -shm files (its process died), in a read-only folder: the
    /// readers see what only the -wal holds, through SQLite's read-only -shm access; without the
    /// -shm file SQLite cannot read it there, and the command says what it needs.
    @Test func aLedgerWithAWALFileIsReadInAReadOnlyFolder() throws {
        let scratch = try Scratch()
        defer {
            OtherUser.unlock(scratch)
            scratch.remove()
        }
        let source = try Scratch()
        defer { source.remove() }
        let ledger = try SQLiteLedger(path: source.path("ledger.sqlite"))
        try ledger.register([Station(name: "only-in-the-wal", identity: IBeaconFixture.identity(9))])
        // Copied while the writer still has it open: as a crash would leave it.
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(
                atPath: source.path("ledger.sqlite" + suffix), toPath: scratch.path("ledger.sqlite" + suffix))
        }
        let path = scratch.path("ledger.sqlite")
        try OtherUser.lock(scratch, folder: 0o555)
        let before = try filesBeside(path)
        #expect(before.keys.sorted() == ["ledger.sqlite", "ledger.sqlite-shm", "ledger.sqlite-wal"])
        for reader in Self.readers {
            let run = try OtherUser.ccbeacon(reader + ["--ledger", path], in: scratch)
            #expect(run.status == 0, "\(reader): \(run.errors)")
            #expect(try filesBeside(path) == before, "\(reader) changed a file")
        }
        let show = try OtherUser.ccbeacon(["ledger", "show", "--ledger", path], in: scratch)
        #expect(show.output.contains("only-in-the-wal"))

        OtherUser.unlock(scratch)
        try FileManager.default.removeItem(atPath: path + "-shm")
        try OtherUser.lock(scratch, folder: 0o555)
        let withoutSHM = try filesBeside(path)
        let refused = try OtherUser.ccbeacon(["ledger", "show", "--ledger", path], in: scratch)
        #expect(refused.status == 1)
        #expect(refused.errors.contains("-shm file"), "\(refused.errors)")
        #expect(try filesBeside(path) == withoutSHM)
    }
}

/// Running the built ccbeacon as nobody (uid and gid 65534, no groups).
enum OtherUser {
    static let binary = BuiltTools.ccbeacon
    static let setpriv = "/usr/bin/setpriv"

    static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: setpriv)
            && FileManager.default.isExecutableFile(atPath: binary)
    }

    static func ccbeacon(_ arguments: [String], in folder: Scratch) throws -> ProcessResult {
        try ChildProcess.run(
            setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments, in: folder.url,
            timeout: 60)
    }

    /// Makes every file in the folder read-only (0444) and gives the folder `folder`'s mode.
    static func lock(_ scratch: Scratch, folder: Int) throws {
        for entry in try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: scratch.path(entry))
        }
        try FileManager.default.setAttributes([.posixPermissions: folder], ofItemAtPath: scratch.url.path)
    }

    /// Makes the folder writable again (for the test to change or remove it).
    static func unlock(_ scratch: Scratch) {
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.url.path)
    }
}

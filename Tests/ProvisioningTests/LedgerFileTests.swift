import CCDebugger
import Foundation
import TestSupport
import Testing

@testable import Provisioning
@testable import StationLedger

/// A ledger as ccbeacon wrote it before ledgers carried an application id and a schema version,
/// built with that version's SQL: WAL, no ids, the `stations` and `attempts` tables (the oldest
/// without `advertiser_address`), stations 'a' and 'b', and one verified attempt of 'a' on chip
/// 00:12:4B:00:00:01.
func makeLegacyLedger(at path: String, addressColumn: Bool, indexes: Bool = true) throws {
    let old = try SQLiteDatabase(path: path, mode: .create)
    try old.execute("PRAGMA journal_mode=WAL", [], "old journal mode")
    try old.execute(
        "CREATE TABLE stations(position INTEGER NOT NULL, name TEXT PRIMARY KEY, uuid TEXT NOT NULL, major INTEGER NOT NULL, minor INTEGER NOT NULL, power INTEGER NOT NULL, note TEXT, UNIQUE(uuid, major, minor))",
        [], "old schema")
    try old.execute(
        "CREATE TABLE attempts(id INTEGER PRIMARY KEY AUTOINCREMENT, station TEXT NOT NULL REFERENCES stations(name), chip TEXT NOT NULL, debugger TEXT NOT NULL, template TEXT NOT NULL, template_sha256 TEXT NOT NULL, image_sha256 TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, outcome TEXT NOT NULL CHECK(outcome IN ('in-progress','verified','failed','interrupted','superseded')), reason TEXT, verify_method TEXT NOT NULL CHECK(verify_method IN ('crc','read'))"
            + (addressColumn ? ", advertiser_address TEXT)" : ")"), [], "old schema")
    if indexes {
        for statement in [
            "CREATE UNIQUE INDEX one_verified_per_station ON attempts(station) WHERE outcome = 'verified'",
            "CREATE UNIQUE INDEX one_verified_per_chip ON attempts(chip) WHERE outcome = 'verified'",
            "CREATE UNIQUE INDEX one_active_per_station ON attempts(station) WHERE outcome IN ('in-progress', 'interrupted')",
        ] {
            try old.execute(statement, [], "old schema")
        }
    }
    try old.execute(
        "INSERT INTO stations VALUES (0, 'a', '7634A485-1732-4B7D-AB44-D505D8A24C60', 1, 1, -59, NULL), (1, 'b', '7634A485-1732-4B7D-AB44-D505D8A24C60', 1, 2, -59, NULL)",
        [], "old rows")
    try old.execute(
        "INSERT INTO attempts(station, chip, debugger, template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES ('a', '00:12:4B:00:00:01', 'd', 't', 's', 'i', 'then', 'then', 'verified', 'crc')",
        [], "old rows")
}

func scalar(_ database: SQLiteDatabase, _ sql: String) throws -> Int? {
    try database.query(sql, [], "reading").first?.first?.int
}

struct ChipIDTests {
    static let cases: [(String, Bool)] = [
        ("00:12:4B:00:25:41", true),
        ("C0:FF:EE:00:00:01", true),
        ("FF:FF:FF:FF:FF:FE", true),
        ("00:00:00:00:00:01", true),
        ("FF:FF:FF:FF:FF:FF", false),  // an erased info page
        ("00:00:00:00:00:00", false),  // an invalid IEEE address
        ("00:12:4b:00:25:41", false),  // lower case
        ("00:12:4B:00:25", false),  // too short
        ("00:12:4B:00:25:41:00", false),  // too long
        ("00-12-4B-00-25-41", false),
        ("00:12:4B:00:25:4G", false),
        (" 00:12:4B:00:25:41", false),
        ("0:012:4B:00:25:41", false),
        ("CHIP-1", false),
        ("", false),
    ]

    /// The Swift rule and the database agree, and the database refuses on its own: a raw INSERT
    /// and a raw UPDATE of the chip, not only the Swift code.
    @Test(arguments: cases)
    func theDatabaseRefusesAChipIDThatCannotIdentifyAChip(chip: String, valid: Bool) throws {
        #expect(ChipID.isValid(chip) == valid)
        let path = temporaryLedgerPath()
        let ledger = try SQLiteLedger(path: path)
        try ledger.register([Station(name: "a", identity: identity(1))])
        let raw = try SQLiteDatabase(path: path, mode: .readWrite)
        let insert =
            "INSERT INTO attempts(station, chip, debugger, template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES ('a', ?, 'd', 't', 'x', 'i', 'now', 'now', 'failed', 'crc')"
        let update = "UPDATE attempts SET chip = ? WHERE id = (SELECT max(id) FROM attempts)"
        try raw.execute(insert, [.text("00:12:4B:00:00:99")], "a valid chip")
        for (sql, operation) in [(insert, "inserting"), (update, "updating")] {
            if valid {
                try raw.execute(sql, [.text(chip)], operation)
            } else {
                #expect {
                    try raw.execute(sql, [.text(chip)], operation)
                } throws: { error in
                    (error as? LedgerError)?.kind == .invalidChipID && (error as? LedgerError)?.isConstraint == true
                }
            }
        }
        // Through the ledger's own API the refusal has the same kind, and names the chip.
        let claim = Result { () throws(LedgerError) in
            try ledger.claimNextStation(
                chip: chip, debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc", skipping: [],
                image: { _ in ("i", nil) })
        }
        switch claim {
        case .success(let claimed): #expect(valid && claimed?.1.chip == chip)
        case .failure(let error):
            #expect(!valid && error.kind == .invalidChipID && error.message.contains("'\(chip)'"), "\(error)")
        }
        // A wrong type is refused too.
        #expect(throws: LedgerError.self) { try raw.execute(insert.replacingOccurrences(of: "?", with: "42"), [], "") }
    }

    /// The rule written once for both databases (`ChipID.sqlCondition`, as `ledger check` asks
    /// it) judges every case as `isValid` does on each; its SQLite form is the very text earlier
    /// ledgers' triggers hold, which their schema check compares word for word.
    @Test func theRuleReadsAlikeInBothDatabases() throws {
        let pair = "[0-9A-F][0-9A-F]"
        #expect(
            ChipID.sqlCondition("NEW.chip", .sqlite)
                == "coalesce(typeof(NEW.chip) = 'text' AND NEW.chip GLOB '\(Array(repeating: pair, count: 6).joined(separator: ":"))' AND NEW.chip NOT IN ('00:00:00:00:00:00', 'FF:FF:FF:FF:FF:FF'), 0)"
        )
        let path = temporaryLedgerPath()
        defer { removeLedgerFiles(path) }
        let database = try SQLiteDatabase(path: path, mode: .create)
        let url = PostgresTestServer.available ? try PostgresTestServer.freshDatabase() : nil
        for (chip, valid) in Self.cases {
            let onFile = try database.query(
                "SELECT \(ChipID.sqlCondition("x", .sqlite)) FROM (SELECT ? AS x)", [.text(chip)], "judging")
            #expect(onFile == [[.integer(valid ? 1 : 0)]], "SQLite: \(chip)")
            guard let url else { continue }
            let literal = "'" + chip.replacingOccurrences(of: "'", with: "''") + "'"
            let onServer = try PostgresTestServer.psql(
                url, "SELECT \(ChipID.sqlCondition("x", .postgres)) FROM (SELECT \(literal)::text AS x) AS t")
            #expect(
                onServer.trimmingCharacters(in: .whitespacesAndNewlines) == (valid ? "t" : "f"), "PostgreSQL: \(chip)")
        }
    }
}

struct LedgerFileTests {
    /// Station rows, as SQL values, and whether a ledger may hold them.
    static let stationRows: [(values: String, valid: Bool)] = [
        ("'a', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, 2, -59", true),
        ("'a', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 65535, 0, -128", true),
        ("'', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, 2, -59", false),
        ("'a', 'e2c56db5-dffb-48d2-b060-d0f5a71096e0', 1, 2, -59", false),
        ("'a', 'E2C56DB5DFFB48D2B060D0F5A71096E0', 1, 2, -59", false),
        ("'a', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 70000, 2, -59", false),
        ("'a', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, -1, -59", false),
        ("'a', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, 2, 128", false),
        ("'a', NULL, 1, 2, -59", false),
    ]

    /// The station rule written once (`LedgerInvariant.stationValues`: SQLite's triggers and both
    /// `ledger check`s) judges alike on both databases, and its SQLite form is the text earlier
    /// ledgers' triggers hold.
    @Test func theStationRuleReadsAlikeInBothDatabases() throws {
        let uuid = [8, 4, 4, 4, 12].map { String(repeating: "[0-9A-F]", count: $0) }.joined(separator: "-")
        #expect(
            LedgerInvariant.stationValues("NEW.", .sqlite)
                == "coalesce(typeof(NEW.name) = 'text' AND NEW.name <> '' AND typeof(NEW.uuid) = 'text' AND NEW.uuid GLOB '\(uuid)' AND typeof(NEW.major) = 'integer' AND NEW.major BETWEEN 0 AND 65535 AND typeof(NEW.minor) = 'integer' AND NEW.minor BETWEEN 0 AND 65535 AND typeof(NEW.power) = 'integer' AND NEW.power BETWEEN -128 AND 127, 0)"
        )
        let path = temporaryLedgerPath()
        defer { removeLedgerFiles(path) }
        let database = try SQLiteDatabase(path: path, mode: .create)
        let url = PostgresTestServer.available ? try PostgresTestServer.freshDatabase() : nil
        for (values, valid) in Self.stationRows {
            let row = zip(values.components(separatedBy: ", "), ["name", "uuid", "major", "minor", "power"])
                .map { "\($0) AS \($1)" }.joined(separator: ", ")
            let onFile = try database.query(
                "SELECT \(LedgerInvariant.stationValues("s.", .sqlite)) FROM (SELECT \(row)) AS s", [], "judging")
            #expect(onFile == [[.integer(valid ? 1 : 0)]], "SQLite: \(values)")
            guard let url else { continue }
            let onServer = try PostgresTestServer.psql(
                url,
                "SELECT \(LedgerInvariant.stationValues("s.", .postgres)) FROM (SELECT \(row.replacingOccurrences(of: "NULL", with: "NULL::text"))) AS s"
            )
            #expect(
                onServer.trimmingCharacters(in: .whitespacesAndNewlines) == (valid ? "t" : "f"), "PostgreSQL: \(values)"
            )
        }
        // SQLite keeps any type in any column: a power given as text is no power.
        let typed = try database.query(
            "SELECT \(LedgerInvariant.stationValues("s.", .sqlite)) FROM (SELECT 'a' AS name, 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0' AS uuid, 1 AS major, 2 AS minor, '-59' AS power) AS s",
            [], "judging")
        #expect(typed == [[.integer(0)]])
    }

    /// A new ledger carries ccbeacon's application id and the schema version, and nothing is left
    /// beside it (it is built under a temporary name and linked into place).
    @Test func aNewLedgerCarriesItsIdentityAndLeavesNothingBeside() throws {
        let path = temporaryLedgerPath()
        do { _ = try SQLiteLedger(path: path) }
        #expect(try filesBeside(path).keys.sorted() == [URL(fileURLWithPath: path).lastPathComponent])
        let raw = try SQLiteDatabase(path: path, mode: .readOnly)
        #expect(try scalar(raw, "PRAGMA application_id") == 0x4343_424C)
        #expect(try scalar(raw, "PRAGMA user_version") == SQLiteLedger.schemaVersion)
        #expect(try raw.query("PRAGMA journal_mode", [], "").first?.first?.string == "wal")
    }

    /// A ledger of an earlier ccbeacon is read as it is by read-only access (not a byte changed,
    /// nothing created beside it) and migrated forward by read-write access: ids set, columns and
    /// triggers added, its records kept.
    @Test(arguments: [true, false])
    func aLegacyLedgerIsReadAsItIsAndMigratedForProvisioning(addressColumn: Bool) throws {
        let path = temporaryLedgerPath()
        try makeLegacyLedger(at: path, addressColumn: addressColumn)
        let before = try filesBeside(path)
        do {
            let reader = try SQLiteLedger(path: path, access: .readOnly)
            let attempts = try reader.attempts()
            #expect(attempts.count == 1 && attempts[0].chip == "00:12:4B:00:00:01")
            #expect(attempts[0].advertiserAddress == nil && attempts[0].readBack == nil)
            #expect(try reader.states().map(\.station.name) == ["a", "b"])
            #expect(throws: LedgerError.self) { try reader.register([Station(name: "c", identity: identity(3))]) }
            let inspector = try SQLiteLedger(path: path, access: .inspection)
            #expect(inspector.fileSchemaVersion == 0)
            #expect(inspector.check() == [], "lacking the triggers is not damage before the migration")
        }
        #expect(try filesBeside(path) == before, "read-only access wrote nothing")

        let ledger = try SQLiteLedger(path: path)
        let raw = try SQLiteDatabase(path: path, mode: .readOnly)
        #expect(try scalar(raw, "PRAGMA application_id") == 0x4343_424C)
        #expect(try scalar(raw, "PRAGMA user_version") == SQLiteLedger.schemaVersion)
        #expect(try LedgerFile.schemaGaps(raw, path).isEmpty)
        #expect(try ledger.attempts().map(\.chip) == ["00:12:4B:00:00:01"])
        #expect {
            _ = try ledger.claimNextStation(
                chip: "FF:FF:FF:FF:FF:FF", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
                skipping: [], image: { _ in ("i", nil) })
        } throws: { ($0 as? LedgerError)?.kind == .invalidChipID }
        let (_, attempt) = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:02", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "read",
                skipping: [], image: { _ in ("i", "C0:FF:EE:00:00:02") }))
        try ledger.finish(attempt.id, outcome: .verified, reason: nil, readBack: "0x0000-0x7FFF")
        #expect(try ledger.attempts().last?.readBack == "0x0000-0x7FFF")
        #expect(try SQLiteLedger(path: path).attempts().count == 2, "opening again migrates nothing twice")
    }

    /// The migration is one transaction: when a part of it fails (here a unique index that the
    /// old records break), nothing of it stays.
    @Test func aMigrationThatFailsLeavesTheLedgerAsItWas() throws {
        let path = temporaryLedgerPath()
        try makeLegacyLedger(at: path, addressColumn: true, indexes: false)
        do {
            let old = try SQLiteDatabase(path: path, mode: .readWrite)
            try old.execute(
                "INSERT INTO attempts(station, chip, debugger, template, template_sha256, image_sha256, started_at, outcome, verify_method) VALUES ('b', '00:12:4B:00:00:01', 'd', 't', 's', 'i', 'then', 'verified', 'crc')",
                [], "a second verified station on one chip")
        }
        #expect { try SQLiteLedger(path: path) } throws: { ($0 as? LedgerError)?.isConstraint == true }
        let raw = try SQLiteDatabase(path: path, mode: .readOnly)
        #expect(try scalar(raw, "PRAGMA application_id") == 0)
        #expect(try scalar(raw, "PRAGMA user_version") == 0)
        #expect(try !LedgerFile.columns("attempts", raw, "").contains("read_back"))
        #expect(
            try scalar(raw, "SELECT count(*) FROM sqlite_schema WHERE type IN ('index', 'trigger') AND sql IS NOT NULL")
                == 0)
    }

    @Test func finishRecordsWhichBytesWereReadBack() throws {
        #expect(BurnReport.describe([0x7F30..<0x7F40, 0x7F00..<0x7F30]) == "0x7F00-0x7F3F")
        #expect(BurnReport.describe([0x7F31..<0x7F40, 0x7F00..<0x7F30]) == "0x7F00-0x7F2F,0x7F31-0x7F3F")
        #expect(BurnReport.describe([0x0..<0x40000]) == "0x0000-0x3FFFF")
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "a", identity: identity(1)), Station(name: "b", identity: identity(2))])
        for (index, readBack) in ["0x7F00-0x7F2F,0x7F30-0x7F3F", nil].enumerated() {
            let (_, attempt) = try #require(
                try ledger.claimNextStation(
                    chip: "00:12:4B:00:00:0\(index)", debugger: "d", template: "t", templateSHA256: "x",
                    verifyMethod: "read", skipping: [], image: { _ in ("i", nil) }))
            try ledger.finish(attempt.id, outcome: .verified, reason: nil, readBack: readBack)
        }
        #expect(try ledger.attempts().map(\.readBack) == ["0x7F00-0x7F2F,0x7F30-0x7F3F", nil])
    }

    /// `check()` finds what the indexes and triggers no longer refuse once they are gone.
    @Test func checkFindsBrokenInvariantsWithoutTheIndexes() throws {
        let path = temporaryLedgerPath()
        let ledger = try SQLiteLedger(path: path)
        try ledger.register([Station(name: "a", identity: identity(1)), Station(name: "b", identity: identity(2))])
        let (_, attempt) = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:01", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
                skipping: [], image: { _ in ("i", nil) }))
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        #expect(try SQLiteLedger(path: path, access: .inspection).check() == [])

        let raw = try SQLiteDatabase(path: path, mode: .readWrite)
        for statement in [
            "DROP INDEX one_verified_per_chip", "DROP TRIGGER chip_id_on_insert",
            "INSERT INTO attempts(station, chip, debugger, template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES ('b', '00:12:4B:00:00:01', 'd', 't', 'x', 'i', 'now', 'now', 'verified', 'crc')",
            "INSERT INTO attempts(station, chip, debugger, template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES ('b', 'ff:ff:ff:ff:ff:ff', 'd', 't', 'x', 'i', 'now', 'now', 'failed', 'crc')",
            "UPDATE stations SET taken = 1 WHERE name = 'b'",
        ] {
            try raw.execute(statement, [], "breaking the ledger")
        }
        let problems = try SQLiteLedger(path: path, access: .inspection).check()
        #expect(
            problems == [
                LedgerProblem(check: .schema, detail: "the unique index one_verified_per_chip is missing"),
                LedgerProblem(check: .schema, detail: "the trigger chip_id_on_insert is missing"),
                LedgerProblem(
                    check: .oneVerifiedPerChip, detail: "chip \"00:12:4B:00:00:01\" has verified attempts 1, 2"),
                LedgerProblem(
                    check: .invalidChipID,
                    detail: "attempt 3 has chip id \"ff:ff:ff:ff:ff:ff\", which cannot identify a chip"),
            ])
        // Provisioning does not trust a ledger whose promises have lost their indexes.
        #expect { try SQLiteLedger(path: path) } throws: { error in
            guard case .refused(.damaged(let report)) = (error as? LedgerError)?.kind else { return false }
            return report.contains("the unique index one_verified_per_chip is missing")
        }
    }
}

/// The ccbeacon built beside this test bundle.
let builtCCBeacon = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    .appendingPathComponent("ccbeacon").path

/// The built ccbeacon killed inside the migration transaction (after its writes, before COMMIT):
/// the ledger must stay the earlier version's, records intact, and the next run migrate it.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: builtCCBeacon), "needs the built ccbeacon"))
struct MigrationKillTests {
    @Test func aMigrationKilledBeforeItsCommitLeavesTheEarlierLedger() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try makeLegacyLedger(at: path, addressColumn: false)
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\n")
        // No debugger is ever used: the selector names none, and the ledger is opened before.
        let arguments = [
            "provision", list, "--template", "cc2541-ibeacon", "--ledger", path, "--devices", "NO-SUCH-DEBUGGER",
            "--yes",
        ]
        let killed = try ChildProcess.run(
            builtCCBeacon, arguments, in: scratch.url, environment: ["CCBEACON_TEST_KILL": "in-ledger-write:1"],
            timeout: 60)
        #expect(killed.status == 128 + SIGKILL, "\(killed.errors)")
        do {
            let reader = try SQLiteLedger(path: path, access: .readOnly)
            #expect(reader.fileSchemaVersion == 0)
            #expect(try reader.attempts().map(\.chip) == ["00:12:4B:00:00:01"])
            let raw = try SQLiteDatabase(path: path, mode: .readOnly)
            #expect(try scalar(raw, "PRAGMA application_id") == 0)
            #expect(try LedgerFile.columns("attempts", raw, "") == Set(SQLiteLedger.legacyAttemptColumns))
        }
        let again = try ChildProcess.run(builtCCBeacon, arguments, in: scratch.url, timeout: 60)
        // Its one station is done already: it says so before any debugger is looked for.
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output.contains("nothing to burn"), "\(again.output)")
        let migrated = try SQLiteLedger(path: path, access: .readOnly)
        #expect(migrated.fileSchemaVersion == SQLiteLedger.schemaVersion)
        #expect(try migrated.attempts().map(\.chip) == ["00:12:4B:00:00:01"])
    }
}

/// Schema version 2: each attempt's measured power and on-air check, and calibrations.
struct LedgerVersion2Tests {
    /// A ledger as version 1 wrote it: the current one with version 2's columns and table taken
    /// away and the version set back.
    static func versionOne(_ path: String) throws {
        let ledger = try SQLiteLedger(path: path)
        try ledger.register([Station(name: "a", identity: identity(1)), Station(name: "b", identity: identity(2))])
        let (_, attempt) = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:01", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
                skipping: [], image: { _ in ("i", "C0:FF:EE:00:00:01") }))
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        let raw = try SQLiteDatabase(path: path, mode: .readWrite)
        for column in ["power", "heard", "rssi_count", "rssi_median"] {
            try raw.execute("ALTER TABLE attempts DROP COLUMN \(column)", [], "making a version 1 ledger")
        }
        try raw.execute("DROP TABLE calibrations", [], "making a version 1 ledger")
        try raw.execute("PRAGMA user_version = 1", [], "making a version 1 ledger")
    }

    @Test func aVersionOneLedgerIsReadAsItIsAndMigratedWhenWritten() throws {
        let path = temporaryLedgerPath()
        try Self.versionOne(path)
        do {
            let reader = try SQLiteLedger(path: path, access: .readOnly)
            #expect(reader.fileSchemaVersion == 1)
            #expect(try reader.calibrations() == [])
            let attempts = try reader.attempts()
            #expect(attempts.count == 1 && attempts[0].power == nil && attempts[0].onAir == nil)
        }
        let ledger = try SQLiteLedger(path: path)
        #expect(ledger.fileSchemaVersion == SQLiteLedger.schemaVersion)
        let raw = try SQLiteDatabase(path: path, mode: .readOnly)
        #expect(try scalar(raw, "PRAGMA user_version") == SQLiteLedger.schemaVersion)
        #expect(try scalar(raw, "SELECT COUNT(*) FROM pragma_table_info('calibrations')") == 7)
        #expect(try LedgerFile.schemaGaps(raw, path).isEmpty)
        // Before version 2 a station's power never changed, so it is what its attempts burned:
        // a calibration recorded now changes the station, not what the chip is known to carry.
        #expect(try ledger.attempts()[0].power == -59)
        try ledger.recordCalibration(
            CalibrationRecord(station: "a", recordedAt: "", power: -62, samples: 20, used: 16, source: "r.csv"))
        #expect(try ledger.calibrations().map(\.power) == [-62])
        #expect(try ledger.attempts()[0].power == -59)
        #expect(try ledger.recalibratedStations() == ["a": "00:12:4B:00:00:01"])
    }

    /// Version 2 stamped but missing its table: damaged, named.
    @Test func aVersionTwoLedgerWithoutItsCalibrationsTableIsRefused() throws {
        let path = temporaryLedgerPath()
        _ = try SQLiteLedger(path: path)
        let raw = try SQLiteDatabase(path: path, mode: .readWrite)
        try raw.execute("DROP TABLE calibrations", [], "damaging")
        #expect {
            _ = try SQLiteLedger(path: path, access: .readOnly)
        } throws: { error in
            "\(error)".contains("missing columns calibrations.id")
        }
    }

    @Test func anAttemptRecordsItsPowerAndWhatWasHeard() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "a", identity: identity(1, power: -65))])
        let (_, attempt) = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:01", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
                skipping: [], image: { _ in ("i", nil) }))
        #expect(attempt.power == -65 && attempt.onAir == nil)
        try ledger.finish(
            attempt.id, outcome: .verified, reason: nil, readBack: nil,
            onAir: OnAirCheck(heard: true, rssiCount: 12, rssiMedian: -61))
        #expect(try ledger.attempts()[0].onAir == OnAirCheck(heard: true, rssiCount: 12, rssiMedian: -61))
    }

    /// A calibration changes the station's power in the ledger; a list without a power of its own
    /// then registers as it is (the calibrated value stands), a list with another power is refused.
    @Test func aCalibrationIsTheStationsPowerFromThenOn() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        let board = Station(name: "a", identity: identity(1), powerOrigin: .board(name: "hm10", txPower: 0))
        try ledger.register([board])
        try ledger.recordCalibration(
            CalibrationRecord(station: "a", recordedAt: "", power: -63, samples: 24, used: 20, source: "r.csv"))
        #expect(try ledger.states()[0].station.identity.measuredPower == -63)
        let calibration = try #require(try ledger.calibrations().first)
        #expect(calibration.station == "a" && calibration.samples == 24 && calibration.used == 20)
        #expect(calibration.recordedAt.hasSuffix("Z") && calibration.source == "r.csv")
        try ledger.register([board])  // the board's -59 dBm stands in for no value of the list's own
        #expect(try ledger.states()[0].station.identity.measuredPower == -63)
        let listed = Station(name: "a", identity: identity(1, power: -50), powerOrigin: .list)
        #expect(throws: LedgerError.self) { try ledger.register([listed]) }
        try ledger.register([Station(name: "a", identity: identity(1, power: -63), powerOrigin: .list)])
    }

    /// A calibration a tool without the constraints wrote (foreign keys off, checks ignored) is
    /// found by the check.
    @Test func checkFindsACalibrationNoLedgerWouldHold() throws {
        let path = temporaryLedgerPath()
        let ledger = try SQLiteLedger(path: path)
        try ledger.register([Station(name: "a", identity: identity(1))])
        let raw = try SQLiteDatabase(path: path, mode: .readWrite)
        try raw.execute("PRAGMA ignore_check_constraints = ON", [], "tampering")
        try raw.execute(
            "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES ('nobody', 't', -60, 20, 16, 's'), ('a', 't', 300, 3, 2, 's')",
            [], "tampering")
        let problems = try SQLiteLedger(path: path, access: .inspection).check()
        #expect(
            problems == [
                LedgerProblem(
                    check: .calibrationValues,
                    detail: "calibration 1 of station \"nobody\" has power -60 from 16 of 20 samples"),
                LedgerProblem(
                    check: .calibrationValues,
                    detail: "calibration 2 of station \"a\" has power 300 from 2 of 3 samples"),
            ])
    }

    struct BadCalibration: Sendable, CustomTestStringConvertible {
        let sql: String
        let why: String
        var testDescription: String { why }
    }

    /// The database itself refuses what a calibration can never be, whatever client writes it.
    @Test(arguments: [
        BadCalibration(
            sql:
                "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES ('a', 't', 200, 20, 16, 's')",
            why: "power outside the signed byte"),
        BadCalibration(
            sql:
                "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES ('a', 't', -60, 19, 16, 's')",
            why: "fewer than 20 samples"),
        BadCalibration(
            sql:
                "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES ('a', 't', -60, 20, 21, 's')",
            why: "more samples used than taken"),
        BadCalibration(
            sql:
                "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES ('nobody', 't', -60, 20, 16, 's')",
            why: "a station not in the ledger"),
    ])
    func theDatabaseRefusesWhatNoCalibrationIs(_ bad: BadCalibration) throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "a", identity: identity(1))])
        #expect(throws: LedgerError.self) { try ledger.database.execute(bad.sql, [], bad.why) }
        #expect(throws: LedgerError.self) {
            try ledger.recordCalibration(
                CalibrationRecord(station: "nobody", recordedAt: "", power: -60, samples: 20, used: 16, source: "s"))
        }
        #expect(try ledger.calibrations() == [])
    }
}

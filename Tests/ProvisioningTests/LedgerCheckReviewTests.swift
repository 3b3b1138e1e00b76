import Foundation
import TestSupport
import Testing

@testable import PostgresLedger
@testable import Provisioning
@testable import StationLedger

/// What the review of the shared invariants (LedgerInvariant) found; each fails on c0d978a.
struct LedgerCheckReviewTests {
    /// Two stations whose names differ in bytes but are canonically equivalent Unicode ("Café"
    /// precomposed and decomposed: both may be in a list, SQLite and PostgreSQL keep them apart)
    /// are two problems, each with its own attempts. The Swift grouping of `listsLastColumn`
    /// compares keys with String's `==` (canonical equivalence) and merged them into one problem
    /// naming one station with the other's attempts: "station "Café" has verified attempts 6, 7, 4, 5".
    @Test func stationsWithCanonicallyEquivalentNamesAreTwoProblems() throws {
        let file = try SQLiteLedger(path: temporaryLedgerPath())
        defer { removeLedgerFiles(file.database.path) }
        try LedgerCheckParityTests.fill(file)
        try file.database.execute("DROP INDEX one_verified_per_station", [], "damage")
        try file.database.execute("DROP INDEX one_live_per_station", [], "damage")
        let composed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        for (index, name) in [composed, decomposed].enumerated() {
            try file.database.execute(
                "INSERT INTO stations(position, name, uuid, major, minor, power, taken) VALUES (?, ?, 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 9, ?, -59, 1)",
                [.integer(100 + index), .text(name), .integer(index)], "damage")
            for chip in 0..<2 {
                try file.database.execute(
                    "INSERT INTO attempts(station, chip, debugger, template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES (?, ?, 'd', 't', 'x', 'i', 'then', 'later', 'verified', 'crc')",
                    [.text(name), .text("00:12:4B:00:1\(index):0\(chip + 1)")], "damage")
            }
        }
        let twice = file.check().filter { $0.check == .oneVerifiedPerStation }
        #expect(twice.count == 2, "\(twice.map(\.detail))")
    }

    /// d3ae178 grouped NULLs (`GROUP BY chip`): two verified attempts without a chip in a damaged
    /// file were "chip NULL has verified attempts 1, 2". `a.chip IN (groups)` is NULL for them, so
    /// one-verified-per-chip no longer says it (invalid-chip-id still lists each attempt).
    @Test func verifiedAttemptsWithoutAChipAreStillOneVerifiedPerChip() throws {
        let file = try SQLiteLedger(path: temporaryLedgerPath())
        defer { removeLedgerFiles(file.database.path) }
        try LedgerCheckParityTests.fill(file)
        let database = file.database
        let version = try #require(try database.query("PRAGMA schema_version", [], "damage").first?.first?.int)
        try database.execute("DROP INDEX one_verified_per_chip", [], "damage")
        try database.execute("DROP TRIGGER chip_id_on_update", [], "damage")
        try database.execute("PRAGMA writable_schema = ON", [], "damage")
        try database.execute(
            "UPDATE sqlite_schema SET sql = replace(sql, 'chip TEXT NOT NULL', 'chip TEXT') WHERE name = 'attempts'",
            [], "damage")
        try database.execute("PRAGMA schema_version = \(version + 10)", [], "damage")
        try database.execute("PRAGMA writable_schema = OFF", [], "damage")
        try database.execute("UPDATE attempts SET chip = NULL", [], "damage")
        let problems = file.check()
        #expect(problems.contains { $0.check == .oneVerifiedPerChip }, "\(problems)")
    }

    /// No invariant's query rescans a table once per row on PostgreSQL, however little memory the
    /// server gives it: `NOT IN (subquery)` (as unknown-station was) and an `IN` list of a whole
    /// table become a plain SubPlan once the table outgrows work_mem — 120,000 stations at the
    /// default 4 MB took longer than 9 minutes, where a hash anti join takes a tenth of a second.
    /// Every plan, with the check's own settings, 64 kB of work_mem and 30,000 stations and
    /// attempts, is asked for (not timed): none holds a SubPlan.
    @Test(.enabled(if: PostgresTestServer.available))
    func noInvariantRescansATablePerRowWhateverTheServersMemory() throws {
        let url = try PostgresTestServer.freshDatabase()
        _ = try PostgresLedger(url: url, bench: "b")
        try PostgresTestServer.psql(
            url,
            """
            SET search_path = ccbeacon;
            INSERT INTO stations(position, name, uuid, major, minor, power) SELECT i, 'station-' || i,
                'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', i / 60000, i % 60000, -59 FROM generate_series(0, 29999) i;
            INSERT INTO attempts(station, chip, debugger, bench, template, template_sha256, image_sha256, started_at,
                finished_at, outcome, verify_method) SELECT 'station-' || i, '00:13:00:' || upper(lpad(to_hex((i >> 16) & 255), 2, '0'))
                || ':' || upper(lpad(to_hex((i >> 8) & 255), 2, '0')) || ':' || upper(lpad(to_hex(i & 255), 2, '0')),
                'd', 'b', 't', 'x', 'i', 'then', 'later', 'failed', 'crc' FROM generate_series(0, 29999) i;
            INSERT INTO calibrations(station, recorded_at, power, samples, used, source) SELECT 'station-' || i, 'then',
                -59, 20, 16, 'x' FROM generate_series(0, 29999) i;
            ANALYZE
            """)
        let settings =
            (["SET search_path = ccbeacon", "SET work_mem = '64kB'"]
            + SQLDialect.postgres.scanTablesOnly.filter { $0.hasPrefix("SET LOCAL") }.map {
                $0.replacingOccurrences(of: "SET LOCAL", with: "SET")
            }).joined(separator: "; ")
        for invariant in LedgerInvariant.all {
            let plan = try PostgresTestServer.psql(url, settings + "; EXPLAIN " + invariant.sql(.postgres))
            #expect(!plan.contains("SubPlan"), "\(invariant.check.rawValue) rescans per row:\n\(plan)")
        }
        #expect(try PostgresLedger(url: url, bench: "b").check().isEmpty)
    }
}

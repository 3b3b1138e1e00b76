import BeaconPayload
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import PostgresLedger
@testable import Provisioning
@testable import StationLedger

/// One ledger contract, run against both backends: the SQLite file and the PostgreSQL server that
/// `scripts/test` starts (without it only SQLite runs). Every invariant is tried through the API
/// and with raw SQL a careless client could send: the database itself must refuse.
struct LedgerContractTests {
    /// A backend: how to open a fresh ledger (as a bench), and how to run raw SQL on it.
    struct Backend: Sendable, CustomTestStringConvertible {
        let name: String
        let open: @Sendable (_ bench: String) throws -> (any ProvisioningLedger & Sendable, Raw)
        var testDescription: String { name }
    }

    /// Raw SQL on the ledger's own connection (`?` placeholders for SQLite, `$n` for PostgreSQL
    /// are written per backend by the tests through `sql`).
    struct Raw: Sendable {
        let execute: @Sendable (String) throws -> Void
        /// `$n`-style placeholders are not used: the statements are literal.
        let now: String
        /// Another connection to the same ledger, as another bench (or process) opens it.
        let another: @Sendable (_ bench: String) throws -> any ProvisioningLedger & Sendable
        /// Another connection that records a hook run with each outcome of `hooks`.
        let withHooks:
            @Sendable (_ bench: String, _ hooks: Set<AttemptOutcome>) throws -> any ProvisioningLedger
                & Sendable
        /// A reader (`ledger show`): never writes, never migrates.
        let reader: @Sendable () throws -> any ProvisioningLedger & Sendable
        /// SQL that takes the ledger back to the schema before hook runs and debug locks.
        let downgrade: [String]
    }

    static let sqlite = Backend(name: "SQLite") { _ in
        let path = temporaryLedgerPath()
        let ledger = try SQLiteLedger(path: path)
        return (
            ledger,
            Raw(
                execute: { sql in try ledger.database.execute(sql, [], "raw") }, now: "'2026-01-01T00:00:00Z'",
                another: { _ in try SQLiteLedger(path: path) },
                withHooks: { bench, hooks in try SQLiteLedger(path: path, bench: bench, hooks: hooks) },
                reader: { try SQLiteLedger(path: path, access: .readOnly) },
                downgrade: [
                    "DROP TABLE hook_runs", "ALTER TABLE attempts DROP COLUMN debug_locked",
                    "ALTER TABLE stations DROP COLUMN attributes", "PRAGMA user_version = 3",
                ])
        )
    }

    static let postgres = Backend(name: "PostgreSQL") { bench in
        let url = try PostgresTestServer.freshDatabase()
        let ledger = try PostgresLedger(url: url, bench: bench)
        return (
            ledger,
            Raw(
                execute: { sql in try ledger.connection.execute(sql, [], "raw") }, now: "'2026-01-01T00:00:00Z'",
                another: { bench in try PostgresLedger(url: url, bench: bench) },
                withHooks: { bench, hooks in try PostgresLedger(url: url, bench: bench, hooks: hooks) },
                reader: { try PostgresLedger(url: url, bench: "", creating: false) },
                downgrade: [
                    "DROP TABLE hook_runs", "DROP TABLE run_journals", "ALTER TABLE attempts DROP COLUMN debug_locked",
                    "ALTER TABLE attempts DROP COLUMN run", "DROP TABLE runs", "ALTER TABLE stations DROP COLUMN taken",
                    "ALTER TABLE stations DROP COLUMN attributes",
                    "DROP INDEX interrupted_by_chip",
                    "UPDATE ledger_meta SET value = '2' WHERE key = 'schema_version'",
                ])
        )
    }

    static let backends: [Backend] = [sqlite] + (PostgresTestServer.available ? [postgres] : [])

    static let stations = (1...4).map { Station(name: "s\($0)", identity: identity($0)) }
    static let chips = ["00:12:4B:00:00:01", "00:12:4B:00:00:02", "00:12:4B:00:00:03"]

    static func claim(_ ledger: any ProvisioningLedger, chip: String, skipping: Set<String> = []) throws -> (
        Station, Attempt
    )? {
        try ledger.claimNextStation(
            chip: chip, debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc", skipping: skipping,
            image: { _ in ("sha", "C0:00:00:00:00:01") })
    }

    /// A station's attributes are kept, read back in the list's order, and follow the list when it
    /// is registered again; a stored value that is no object of text (a hand edit) is an error
    /// naming the station, never a station without them.
    @Test(arguments: backends)
    func aStationsAttributesAreKeptAndFollowTheList(_ backend: Backend) throws {
        let (ledger, raw) = try backend.open("bench-a")
        var stations = Self.stations
        stations[0].attributes = [
            StationAttribute(name: "floor", value: "2"), StationAttribute(name: "x", value: "-12.5"),
        ]
        try ledger.register(stations)
        #expect(try ledger.states().map(\.station.attributes) == stations.map(\.attributes))
        stations[0].attributes[0].value = "3"
        try ledger.register(stations)
        #expect(
            try raw.reader().states().first?.station.attributes.first == StationAttribute(name: "floor", value: "3"))
        try raw.execute(#"UPDATE stations SET attributes = '{"floor": 2}' WHERE name = 's2'"#)
        #expect {
            try raw.reader().states()
        } throws: { error in
            (error as? LedgerError)?.message.contains("station \"s2\" has attributes") == true
        }
        // The ledger's own check finds it, and a hidden character edited in, without trusting reads.
        try raw.execute("UPDATE stations SET attributes = '{\"room\": \"a\u{202E}b\"}' WHERE name = 's3'")
        #expect {
            try raw.reader().states()
        } throws: { error in
            (error as? LedgerError)?.message.contains("station \"s2\" has attributes") == true
        }
        let reader = try raw.reader()
        let problems = (reader as? SQLiteLedger)?.check() ?? (reader as? PostgresLedger)?.check() ?? []
        let found = problems.filter { $0.check == .stationAttributes }.map(\.detail)
        #expect(found.count == 2, "\(problems)")
        #expect(found.contains { $0.contains("station \"s3\" has an attribute that holds U+202E") }, "\(found)")
    }

    @Test(arguments: backends)
    func registeringKeepsEachStationsIdentityForLife(_ backend: Backend) throws {
        let (ledger, _) = try backend.open("bench-a")
        try ledger.register(Self.stations)
        try ledger.register(Self.stations)  // the same list again: nothing changes
        #expect(try ledger.states().map(\.station.name) == ["s1", "s2", "s3", "s4"])
        #expect(throws: LedgerError.self) {
            try ledger.register([Station(name: "s1", identity: identity(9))])  // another identity
        }
        #expect(throws: LedgerError.self) {
            try ledger.register([Station(name: "other", identity: identity(2))])  // s2's identity
        }
        #expect(throws: LedgerError.self) {
            try ledger.register([Station(name: "s3", identity: identity(3, power: -70), powerOrigin: .list)])
        }
        #expect(try ledger.states().count == 4)
    }

    @Test(arguments: backends)
    func aClaimTakesEachStationOnceInListOrder(_ backend: Backend) throws {
        let (ledger, _) = try backend.open("bench-a")
        try ledger.register(Self.stations)
        let first = try #require(try Self.claim(ledger, chip: Self.chips[0]))
        #expect(first.0.name == "s1" && first.1.outcome == .inProgress && first.1.power == -59)
        let second = try #require(try Self.claim(ledger, chip: Self.chips[1], skipping: ["s2"]))
        #expect(second.0.name == "s3", "s1 is in progress, s2 skipped")
        try ledger.finish(first.1.id, outcome: .verified, reason: nil)
        #expect(try ledger.verifiedStation(forChip: Self.chips[0]) == "s1")
        // Settled attempts keep what they say.
        #expect(throws: LedgerError.self) { try ledger.finish(first.1.id, outcome: .failed, reason: "late") }
        try ledger.finish(second.1.id, outcome: .failed, reason: "bad chip")
        guard case .pending(let failure) = try ledger.states()[2].state else {
            Issue.record("s3 pending after a failure")
            return
        }
        #expect(failure == "bad chip")
        _ = try Self.claim(ledger, chip: Self.chips[1])
        _ = try Self.claim(ledger, chip: Self.chips[2])
        _ = try Self.claim(ledger, chip: Self.chips[2])
        #expect(try Self.claim(ledger, chip: Self.chips[2]) == nil, "nothing left")
    }

    @Test(arguments: backends)
    func theDatabaseRefusesAChipIdThatIdentifiesNoChip(_ backend: Backend) throws {
        let (ledger, raw) = try backend.open("bench-a")
        try ledger.register(Self.stations)
        for chip in ["FF:FF:FF:FF:FF:FF", "00:00:00:00:00:00", "00:12:4b:00:00:01", "0012:4B:00:00:01", ""] {
            #expect {
                _ = try Self.claim(ledger, chip: chip)
            } throws: { ($0 as? LedgerError)?.kind == .invalidChipID }
        }
        #expect(throws: (any Error).self) {
            try raw.execute(
                "INSERT INTO attempts(station, chip, debugger, \(backend.name == "SQLite" ? "" : "bench, ")template, template_sha256, image_sha256, started_at, outcome, verify_method) VALUES ('s1', 'FF:FF:FF:FF:FF:FF', 'd', \(backend.name == "SQLite" ? "" : "'b', ")'t', 'x', 'i', \(raw.now), 'in-progress', 'crc')"
            )
        }
        #expect(try ledger.attempts().isEmpty)
    }

    struct RawBreak: Sendable, CustomTestStringConvertible {
        let what: String
        let sql: @Sendable (_ postgres: Bool) -> String
        var testDescription: String { what }
    }

    /// With s1 verified on chip 1 and s2 in progress on chip 2: what no client may write.
    static let breaks: [RawBreak] = [
        RawBreak(what: "a second verified attempt of a station") { pg in
            attempt("s1", chip: "00:12:4B:00:00:09", outcome: "verified", postgres: pg)
        },
        RawBreak(what: "a second station verified on a chip") { pg in
            attempt("s3", chip: "00:12:4B:00:00:01", outcome: "verified", postgres: pg)
        },
        RawBreak(what: "a second active attempt of a station") { pg in
            attempt("s2", chip: "00:12:4B:00:00:08", outcome: "interrupted", postgres: pg)
        },
        RawBreak(what: "an attempt of a station not in the ledger") { pg in
            attempt("nobody", chip: "00:12:4B:00:00:07", outcome: "failed", postgres: pg)
        },
        RawBreak(what: "an outcome that is none") { pg in
            attempt("s3", chip: "00:12:4B:00:00:06", outcome: "done", postgres: pg)
        },
        RawBreak(what: "a verification method that is none") { pg in
            attempt("s3", chip: "00:12:4B:00:00:06", outcome: "verified", method: "none", postgres: pg)
        },
        RawBreak(what: "a station with a major of 70000") { _ in
            "INSERT INTO stations(position, name, uuid, major, minor, power) VALUES (9, 'x', '7634A485-1732-4B7D-AB44-D505D8A24C60', 70000, 1, -59)"
        },
        RawBreak(what: "a second station with one identity") { _ in
            "INSERT INTO stations(position, name, uuid, major, minor, power) VALUES (9, 'x', '7634A485-1732-4B7D-AB44-D505D8A24C60', 1, 1, -59)"
        },
        RawBreak(what: "a calibration of 20 samples with power 300") { _ in
            "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES ('s1', 't', 300, 20, 16, 's')"
        },
        RawBreak(what: "a calibration from 5 samples") { _ in
            "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES ('s1', 't', -60, 5, 4, 's')"
        },
    ]

    static func attempt(
        _ station: String, chip: String, outcome: String, method: String = "crc", postgres: Bool
    ) -> String {
        "INSERT INTO attempts(station, chip, debugger, \(postgres ? "bench, " : "")template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES ('\(station)', '\(chip)', 'd', \(postgres ? "'b', " : "")'t', 'x', 'i', 'then', 'then', '\(outcome)', '\(method)')"
    }

    @Test(arguments: backends)
    func rawSQLCannotBreakAnInvariant(_ backend: Backend) throws {
        for broken in Self.breaks {
            let (ledger, raw) = try backend.open("bench-a")
            try ledger.register(Self.stations)
            let (_, first) = try #require(try Self.claim(ledger, chip: Self.chips[0]))
            try ledger.finish(first.id, outcome: .verified, reason: nil)
            _ = try Self.claim(ledger, chip: Self.chips[1])
            if backend.name == "SQLite" { try raw.execute("PRAGMA foreign_keys = ON") }
            let before = try ledger.attempts().count
            #expect(throws: (any Error).self, "\(broken.what) was accepted") {
                try raw.execute(broken.sql(backend.name != "SQLite"))
            }
            #expect(try ledger.attempts().count == before)
        }
    }

    @Test(arguments: backends)
    func interruptedHeldReleasedAndSuperseded(_ backend: Backend) throws {
        let (ledger, raw) = try backend.open("bench-a")
        try ledger.register(Self.stations)
        // A run of the bench stopped while burning s1 (its run is over).
        let crashed = try raw.another("bench-a")
        let (_, first) = try #require(try Self.claim(crashed, chip: Self.chips[0]))
        crashed.endRun()
        let recovered = try ledger.recoverInterrupted()
        #expect(recovered.map(\.id) == [first.id] && recovered.first?.outcome == .interrupted)
        #expect(try ledger.interruptedAttempt(forChip: Self.chips[0])?.id == first.id)
        guard case .held(let chip) = try ledger.states()[0].state, chip == Self.chips[0] else {
            Issue.record("held")
            return
        }
        #expect(try Self.claim(ledger, chip: Self.chips[1])?.0.name == "s2", "a held station is not claimed")
        try ledger.release(station: "s1")
        guard case .pending = try ledger.states()[0].state else {
            Issue.record("released is pending")
            return
        }
        let (_, again) = try #require(try Self.claim(ledger, chip: Self.chips[2]))
        try ledger.finish(again.id, outcome: .verified, reason: nil)
        try ledger.supersede(chip: Self.chips[2], reason: "chip reprovisioned")
        guard case .pending = try ledger.states()[0].state else {
            Issue.record("superseded is pending")
            return
        }
        #expect(try ledger.verifiedStation(forChip: Self.chips[2]) == nil)
    }

    @Test(arguments: backends)
    func aCalibrationChangesTheStationAndIsBurnedAgainInOneStep(_ backend: Backend) throws {
        let (ledger, _) = try backend.open("bench-a")
        try ledger.register(Self.stations)
        let (_, first) = try #require(try Self.claim(ledger, chip: Self.chips[0]))
        try ledger.finish(first.id, outcome: .verified, reason: nil)
        try ledger.recordCalibration(
            CalibrationRecord(station: "s1", recordedAt: "", power: -63, samples: 24, used: 20, source: "r.csv"))
        #expect(throws: LedgerError.self) {
            try ledger.recordCalibration(
                CalibrationRecord(station: "zz", recordedAt: "", power: -63, samples: 24, used: 20, source: "r.csv"))
        }
        #expect(try ledger.calibrations().map(\.power) == [-63])
        #expect(try ledger.recalibratedStations() == ["s1": Self.chips[0]])
        let (station, again) = try ledger.claimAgain(
            station: "s1", chip: Self.chips[0], debugger: "d", template: "t", templateSHA256: "x",
            verifyMethod: "crc", reason: "burned again with its calibrated measured power",
            image: { _ in ("sha2", nil) })
        #expect(station.identity.measuredPower == -63 && again.power == -63 && again.powerSource == "calibration")
        #expect(try ledger.attempts().map(\.outcome) == [.superseded, .inProgress])
        try ledger.finish(
            again.id, outcome: .verified, reason: nil, readBack: "0x7F00-0x7F2F",
            onAir: OnAirCheck(heard: true, rssiCount: 5, rssiMedian: -61))
        let last = try #require(try ledger.attempts().last)
        #expect(
            last.readBack == "0x7F00-0x7F2F" && last.onAir == OnAirCheck(heard: true, rssiCount: 5, rssiMedian: -61))
        #expect(try ledger.recalibratedStations().isEmpty)
        // A list without a power of its own registers as it is; another power is refused.
        let listed = { (s1: Station) in Self.stations.map { $0.name == "s1" ? s1 : $0 } }
        try ledger.register(
            listed(Station(name: "s1", identity: identity(1), powerOrigin: .board(name: "hm10", txPower: 0))))
        #expect(throws: LedgerError.self) {
            try ledger.register(listed(Station(name: "s1", identity: identity(1, power: -50), powerOrigin: .list)))
        }
    }

    /// Three connections (three benches) claim and finish at once, each on its own connection:
    /// every station is claimed exactly once, none twice — not even one another bench verified a
    /// moment before.
    @Test(arguments: backends)
    func concurrentClaimsTakeEachStationOnce(_ backend: Backend) throws {
        // Rounds, since the race this guards against (a claim's snapshot older than another
        // bench's commit) needs the timing to fall one way.
        for _ in 0..<6 { try Self.claimRace(backend) }
    }

    static func claimRace(_ backend: Backend) throws {
        let (first, raw) = try backend.open("bench-0")
        let many = (1...150).map { Station(name: "m\($0)", identity: identity($0)) }
        try first.register(many)
        let benches = try (0..<3).map { try raw.another("bench-\($0)") }
        let claimed = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            var chip = 0
            while true {
                chip += 1
                let id = String(format: "00:12:4B:%02X:%02X:%02X", worker + 1, chip >> 8, chip & 0xFF)
                do {
                    guard let (station, attempt) = try Self.claim(benches[worker], chip: id) else { return }
                    claimed.withLock { $0.append(station.name) }
                    try benches[worker].finish(attempt.id, outcome: .verified, reason: nil)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let names = claimed.withLock { $0 }
        #expect(names.count == 150 && Set(names).count == 150, "\(names.count) claims")
        #expect(try first.states().allSatisfy { if case .done = $0.state { true } else { false } })
        #expect(try first.attempts().allSatisfy { $0.outcome == .verified })
    }

    /// Two benches starting with one list at once both attach to it.
    @Test(arguments: backends)
    func twoBenchesRegisteringOneListAtOnceBothAttach(_ backend: Backend) throws {
        let (_, raw) = try backend.open("bench-0")
        let list = (1...300).map { Station(name: "r\($0)", identity: identity($0)) }
        let benches = try (0..<2).map { try raw.another("bench-\($0)") }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { bench in
            do { try benches[bench].register(list) } catch { failures.withLock { $0.append("\(error)") } }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try benches[0].states().count == 300)
    }

    /// A hook run is recorded in the transaction of its outcome — only for the outcomes the
    /// ledger was opened with hooks for — and kept, with every try, until one is delivered.
    @Test(arguments: backends)
    func aHookRunIsRecordedWithItsOutcomeAndKeptUntilDelivered(_ backend: Backend) throws {
        let (plain, raw) = try backend.open("bench-a")
        try plain.register(Self.stations)
        let ledger = try raw.withHooks("bench-a", [.verified, .failed])
        let first = try #require(try Self.claim(ledger, chip: Self.chips[0]))
        try ledger.finish(first.1.id, outcome: .verified, reason: nil, readBack: nil, onAir: nil, debugLocked: true)
        let second = try #require(try Self.claim(ledger, chip: Self.chips[1]))
        try ledger.finish(second.1.id, outcome: .failed, reason: "bad chip")
        let third = try #require(try Self.claim(ledger, chip: Self.chips[2]))
        try ledger.finish(third.1.id, outcome: .interrupted, reason: "cut off")
        let fourth = try #require(try Self.claim(plain, chip: "00:12:4B:00:00:04"))
        try plain.finish(fourth.1.id, outcome: .verified, reason: nil)
        var runs = try ledger.hookRuns()
        #expect(runs.map(\.attempt.station) == ["s1", "s2"], "verified and failed, with hooks; nothing else")
        #expect(runs.map(\.hook) == [.verified, .failed])
        #expect(runs.allSatisfy { $0.eventID.count == 32 && $0.eventID.allSatisfy(\.isHexDigit) })
        #expect(runs.allSatisfy { $0.bench == "bench-a" && $0.tries == 0 && $0.isPending })
        #expect(runs[0].attempt.debugLocked && !runs[1].attempt.debugLocked)
        #expect(runs[0].identity == Self.stations[0].identity)
        #expect(try plain.attempts().map(\.debugLocked) == [true, false, false, false])
        try ledger.recordHookTry(eventID: runs[0].eventID, status: "exit 3", delivered: false)
        try ledger.recordHookTry(eventID: runs[0].eventID, status: "exit 0", delivered: true)
        try ledger.recordHookTry(eventID: runs[0].eventID, status: "exit 9", delivered: false)  // delivered: kept
        runs = try ledger.hookRuns()
        #expect(runs[0].tries == 2 && runs[0].lastStatus == "exit 0" && runs[0].deliveredAt != nil)
        #expect(try ledger.hookRuns(pendingOnly: true).map(\.attempt.station) == ["s2"])
        #expect(try plain.history().hookRuns.count == 2)
        // The database keeps the hook runs' rules too: an event id that is not 32 hex digits, a
        // second run of one hook for one attempt, a hook for another outcome, an unknown attempt.
        let insert = "INSERT INTO hook_runs(event_id, attempt, hook, bench, created_at) VALUES"
        for statement in [
            "\(insert) ('nothex', \(first.1.id), 'failed', 'b', \(raw.now))",
            "\(insert) ('\(String(repeating: "a", count: 32))', \(first.1.id), 'verified', 'b', \(raw.now))",
            "\(insert) ('\(String(repeating: "b", count: 32))', \(third.1.id), 'interrupted', 'b', \(raw.now))",
            "\(insert) ('\(String(repeating: "c", count: 32))', 9999, 'failed', 'b', \(raw.now))",
        ] {
            #expect(throws: LedgerError.self, "\(statement)") { try raw.execute(statement) }
        }
    }

    /// A ledger of the schema before hook runs and debug locks: a reader reads it as it is (no
    /// hook run, nothing locked) and writes nothing; the first writer migrates it, and it then
    /// keeps hook runs like a new one.
    @Test(arguments: backends)
    func aLedgerOfTheSchemaBeforeHooksIsReadAsItIsAndMigratedByAWriter(_ backend: Backend) throws {
        let (ledger, raw) = try backend.open("bench-a")
        try ledger.register(Self.stations)
        let first = try #require(try Self.claim(ledger, chip: Self.chips[0]))
        try ledger.finish(first.1.id, outcome: .verified, reason: nil)
        for statement in raw.downgrade { try raw.execute(statement) }
        let reader = try raw.reader()
        // Checked as what it is, an earlier schema (not a damaged one).
        if let server = reader as? PostgresLedger {
            let (problems, notes) = server.checkReport()
            #expect(problems.isEmpty, "\(problems)")
            #expect(notes.contains { $0.hasPrefix("schema version 2, from an earlier ccbeacon") }, "\(notes)")
        }
        if let file = reader as? SQLiteLedger { #expect(file.check().isEmpty, "\(file.check())") }
        #expect(try reader.attempts().map(\.debugLocked) == [false])
        #expect(try reader.hookRuns().isEmpty)
        #expect(try reader.states().count == 4)
        let writer = try raw.withHooks("bench-a", [.verified])
        let second = try #require(try Self.claim(writer, chip: Self.chips[1]))
        try writer.finish(second.1.id, outcome: .verified, reason: nil, readBack: nil, onAir: nil, debugLocked: true)
        #expect(try writer.hookRuns().map(\.attempt.station) == ["s2"])
        #expect(try writer.attempts().map(\.debugLocked) == [false, true])
        if let file = writer as? SQLiteLedger {
            #expect(file.check().isEmpty && file.fileSchemaVersion == SQLiteLedger.schemaVersion)
        }
        if let server = writer as? PostgresLedger {
            #expect(server.check().isEmpty, "\(server.check())")
            #expect(server.databaseVersion == PostgresLedger.schemaVersion)
        }
    }
}

/// A journaled outcome keeps whether its chip was locked; a line of an earlier ccbeacon, without
/// the key, reads as not locked.
@Test func aJournaledOutcomeKeepsItsDebugLock() throws {
    let path = temporaryLedgerPath() + ".jsonl"
    defer { unlink(path) }
    let journal = OutcomeJournal(path: path)
    try journal.append(
        OutcomeJournal.Entry(
            ledger: "L", bench: "b", attempt: 7, station: "s", chip: "00:12:4B:00:00:01", outcome: .verified,
            reason: nil, readBack: "0x3FFF0-0x3FFFF", onAir: nil, debugLocked: true))
    try journal.append(
        OutcomeJournal.Entry(
            ledger: "L", bench: "b", attempt: 8, station: "t", chip: "00:12:4B:00:00:02", outcome: .failed,
            reason: "x", readBack: nil, onAir: nil))
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.split(separator: "\n").last?.contains("debugLocked") == false, "written only when locked")
    #expect(try journal.entries().map(\.debugLocked) == [true, false])
}

import BeaconPayload
import Foundation
import TestSupport
import Testing

@testable import PostgresLedger
@testable import Provisioning
@testable import StationLedger

/// Runs and their leases (issue 25), on both databases: a run changes an attempt only while its
/// lease holds; a run whose lease ran out is over for good; recovery takes only the attempts of
/// runs that are over; a lost connection — also while it is being set up — is made again.
struct FencedRunTests {
    /// A ledger on one database, opened as separate processes would open it.
    struct Pool: Sendable {
        /// Opens the ledger as a process running as `bench` with a lease of `lease` seconds.
        let open:
            @Sendable (_ bench: String, _ lease: Double, _ identity: RunIdentity) throws -> any ProvisioningLedger
                & Sendable
        /// Raw SQL on the ledger's tables, as another client sends it.
        let execute: @Sendable (String) throws -> Void
    }

    /// How a test makes a pool.
    struct Backend: Sendable, CustomTestStringConvertible {
        let name: String
        let make: @Sendable () throws -> Pool
        var testDescription: String { name }
    }

    static let sqlite = Backend(name: "SQLite") {
        let path = temporaryLedgerPath()
        let admin = try SQLiteLedger(path: path)
        return Pool(
            open: { bench, lease, identity in
                try SQLiteLedger(path: path, bench: bench, leaseSeconds: lease, identity: identity)
            },
            execute: { sql in try admin.database.execute(sql, [], "raw") })
    }

    static let postgres = Backend(name: "PostgreSQL") {
        let url = try PostgresTestServer.freshDatabase()
        _ = try PostgresLedger(url: url, bench: "")  // creates the schema
        return Pool(
            open: { bench, lease, identity in
                try PostgresLedger(url: url, bench: bench, leaseSeconds: lease, identity: identity)
            },
            execute: { sql in
                try PostgresTestServer.psql(url, "SET search_path = ccbeacon; " + sql)
            })
    }

    static let backends: [Backend] = [sqlite] + (PostgresTestServer.available ? [postgres] : [])

    static let stations = (1...3).map { Station(name: "s\($0)", identity: identity($0)) }
    static let chips = ["00:12:4B:00:00:01", "00:12:4B:00:00:02", "00:12:4B:00:00:03"]

    static func claim(_ ledger: any ProvisioningLedger, chip: String) throws -> (Station, Attempt)? {
        try ledger.claimNextStation(
            chip: chip, debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc", skipping: [],
            image: { _ in ("sha", nil) })
    }

    /// The kind of `body`'s error, or nil when it did not throw.
    static func kind(_ body: () throws -> Void) -> LedgerError.Kind? {
        do {
            try body()
            return nil
        } catch let error as LedgerError {
            return error.kind
        } catch {
            return .database
        }
    }

    /// A run paused past its lease (its lease made to run out on the database's clock): it can
    /// neither record nor claim nor renew; another run of its bench recovers its attempt, releases
    /// it (only its bench may, on a pool) and burns the station elsewhere; the paused run, going
    /// on, is refused every change — so the station is verified once, on the chip the ledger names.
    @Test(arguments: backends)
    func aRunWhoseLeaseRanOutChangesNothing(_ backend: Backend) throws {
        let pool = try backend.make()
        let paused = try pool.open("bench-a", 90, .current)
        try paused.register(Self.stations)
        let (_, attempt) = try #require(try Self.claim(paused, chip: Self.chips[0]))
        let runID = try #require(paused.lease.runID)
        #expect(attempt.run == runID)
        try pool.execute("UPDATE runs SET lease_until = 0 WHERE id = '\(runID)'")

        #expect(Self.kind { try paused.finish(attempt.id, outcome: .verified, reason: nil) } == .leaseLost)
        #expect(Self.kind { _ = try Self.claim(paused, chip: Self.chips[1]) } == .leaseLost)
        #expect(Self.kind { try paused.renewLease() } == .leaseLost)
        #expect(paused.lease.lostBecause != nil)
        #expect(try paused.attempts().map(\.outcome) == [.inProgress])

        let other = try pool.open("bench-a", 90, .current)
        #expect(try other.recoverInterrupted().map(\.id) == [attempt.id])
        #expect(try other.runs().first { $0.id == runID }?.endedBecause?.contains("lease ran out") == true)
        #expect(try other.release(station: "s1") == .released)
        let (again, second) = try #require(try Self.claim(other, chip: Self.chips[1]))
        #expect(again.name == "s1" && second.run == other.lease.runID)
        try other.finish(second.id, outcome: .verified, reason: nil)
        // The paused run goes on: still refused, whatever it tries.
        #expect(Self.kind { try paused.finish(attempt.id, outcome: .verified, reason: nil) } == .leaseLost)
        #expect(Self.kind { try paused.supersede(chip: Self.chips[1], reason: "x") } == .leaseLost)
        let verified = try other.attempts().filter { $0.outcome == .verified }
        #expect(verified.map(\.station) == ["s1"] && verified.map(\.chip) == [Self.chips[1]])
    }

    /// A run that stopped (ended) while burning leaves its attempt to the next run; a run of this
    /// machine whose process is gone is over as soon as another run looks, without waiting for its
    /// lease.
    @Test(arguments: backends)
    func aGoneProcesssRunIsOverAtOnce(_ backend: Backend) throws {
        let pool = try backend.make()
        let crashed = try pool.open("bench-a", 3600, .goneProcess)
        try crashed.register(Self.stations)
        let (_, attempt) = try #require(try Self.claim(crashed, chip: Self.chips[0]))
        let next = try pool.open("bench-a", 90, .current)
        #expect(try next.recoverInterrupted().map(\.id) == [attempt.id])
        #expect(try next.interruptedAttempt(forChip: Self.chips[0])?.station == "s1")
    }

    /// By this process's own clock: a run paused past its lease finds it over before it asks the
    /// database anything.
    @Test(arguments: backends)
    func aPausedRunFindsItsLeaseOverByItsOwnClock(_ backend: Backend) throws {
        let pool = try backend.make()
        let short = try pool.open("bench-a", 0.3, .current)
        try short.register(Self.stations)
        let (_, attempt) = try #require(try Self.claim(short, chip: Self.chips[0]))
        usleep(400_000)  // the pause: longer than the lease
        #expect(short.lease.lostBecause?.contains("ran out") == true)
        #expect(Self.kind { try short.finish(attempt.id, outcome: .verified, reason: nil) } == .leaseLost)
        #expect(try short.attempts().map(\.outcome) == [.inProgress])
    }

    /// A settled attempt (interrupted, then settled by the run that has its chip) belongs to that
    /// run; an interrupted one is nobody's until then.
    @Test(arguments: backends)
    func anInterruptedAttemptIsSettledByTheRunThatHasItsChip(_ backend: Backend) throws {
        let pool = try backend.make()
        let first = try pool.open("bench-a", 90, .current)
        try first.register(Self.stations)
        let (_, attempt) = try #require(try Self.claim(first, chip: Self.chips[0]))
        try first.finish(attempt.id, outcome: .interrupted, reason: "USB unplugged")
        let second = try pool.open("bench-b", 90, .current)
        try second.finish(attempt.id, outcome: .verified, reason: "confirmed on the chip")
        let settled = try #require(try second.attempts().first)
        #expect(settled.outcome == .verified && settled.run == second.lease.runID)
    }

    /// On a server, a live run's burn is never taken for a crashed one: another bench recovers
    /// nothing, releases nothing and claims another station.
    @Test(.enabled(if: PostgresTestServer.available))
    func aLiveRunsBurnIsLeftToIt() throws {
        let pool = try Self.postgres.make()
        let live = try pool.open("bench-a", 90, .current)
        try live.register(Self.stations)
        let (_, attempt) = try #require(try Self.claim(live, chip: Self.chips[0]))
        let other = try pool.open("bench-b", 90, .current)
        #expect(try other.recoverInterrupted().isEmpty)
        try other.release(station: "s1")
        #expect(try Self.claim(other, chip: Self.chips[1])?.0.name == "s2")
        try live.finish(attempt.id, outcome: .verified, reason: nil)
        #expect(try live.verifiedStation(forChip: Self.chips[0]) == "s1")
    }

    /// One live run per bench name on a server: the second is refused while the first's lease
    /// holds, and starts once it ran out (or once its process is found gone).
    @Test(.enabled(if: PostgresTestServer.available))
    func oneLiveRunPerBenchName() throws {
        let url = try PostgresTestServer.freshDatabase()
        let first = try PostgresLedger(url: url, bench: "bench-x", exclusive: true)
        do {
            _ = try PostgresLedger(url: url, bench: "bench-x", exclusive: true)
            Issue.record("two live runs as bench-x")
        } catch {
            #expect(error.kind == .refused(.benchRunning(bench: "bench-x")), "\(error)")
            #expect(error.message.contains("its lease holds for"), "\(error.message)")
        }
        try PostgresTestServer.psql(
            url, "UPDATE ccbeacon.runs SET lease_until = 0 WHERE id = '\(try #require(first.lease.runID))'")
        let second = try PostgresLedger(url: url, bench: "bench-x", exclusive: true, identity: .goneProcess)
        #expect(second.lease.runID != nil)
        // Its process gone: the next run of the bench ends it at once.
        let third = try PostgresLedger(url: url, bench: "bench-x", exclusive: true)
        let ended = try third.runs().first { $0.id == second.lease.runID }
        #expect(ended?.endedBecause?.contains("process ended") == true, "\(String(describing: ended))")
    }

    /// The issue's reproduction, on the ledger: bench A's connection is terminated while it is
    /// paused past its lease, a second process starts as bench A, recovers A's burn, releases it
    /// and burns the station elsewhere; A, going on, reconnects and is refused — it never records.
    @Test(.enabled(if: PostgresTestServer.available))
    func aReconnectedRunWhoseLeaseRanOutIsRefused() throws {
        let proxy = try PostgresProxy()
        let a = try PostgresLedger(url: proxy.url, bench: "bench-x", exclusive: true)
        try a.register(Self.stations)
        let (_, attempt) = try #require(try Self.claim(a, chip: Self.chips[0]))
        proxy.cutAll()  // its backend gone
        try PostgresTestServer.psql(
            proxy.url, "UPDATE ccbeacon.runs SET lease_until = 0 WHERE id = '\(try #require(a.lease.runID))'")
        let b = try PostgresLedger(url: proxy.url, bench: "bench-x", exclusive: true)
        #expect(try b.recoverInterrupted().map(\.id) == [attempt.id])
        try b.release(station: "s1")
        let (station, burned) = try #require(try Self.claim(b, chip: Self.chips[1]))
        #expect(station.name == "s1")
        try b.finish(burned.id, outcome: .verified, reason: nil)
        #expect(Self.kind { try a.finish(attempt.id, outcome: .verified, reason: nil) } == .leaseLost)
        #expect(Self.kind { _ = try Self.claim(a, chip: Self.chips[2]) } == .leaseLost)
        let verified = try b.attempts().filter { $0.outcome == .verified }
        #expect(verified.count == 1 && verified.first?.chip == Self.chips[1])
    }

    /// A COMMIT the server applied whose answer was lost: the transaction is run again and finds
    /// its own work — one attempt claimed, one outcome recorded, the lease renewed — never a second.
    @Test(.enabled(if: PostgresTestServer.available))
    func aCommitWhoseAnswerIsLostIsNotDoneTwice() throws {
        let proxy = try PostgresProxy()
        let ledger = try PostgresLedger(url: proxy.url, bench: "bench-a", serverWait: 30, exclusive: true)
        try ledger.register(Self.stations)
        proxy.cut(next: 1, when: "COMMIT", afterSending: true)
        let (station, attempt) = try #require(try Self.claim(ledger, chip: Self.chips[0]))
        #expect(proxy.cuts == 1 && station.name == "s1")
        #expect(try ledger.attempts().count == 1)
        proxy.cut(next: 1, when: "COMMIT", afterSending: true)
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        #expect(proxy.cuts == 2)
        #expect(try ledger.attempts().map(\.outcome) == [.verified])
        proxy.cut(next: 1, when: "COMMIT", afterSending: true)
        try ledger.renewLease()
        #expect(proxy.cuts == 3 && ledger.lease.lostBecause == nil)
        #expect(ledger.check().isEmpty)
    }

    /// A connection lost while libpq sets it up (at SET client_encoding) is a lost connection like
    /// any other: made again within the wait, and the outcome recorded (it was "the server does
    /// not take UTF-8", not retried, and the bench stopped with the attempt left in progress).
    @Test(.enabled(if: PostgresTestServer.available))
    func aConnectionCutWhileItIsSetUpIsMadeAgain() throws {
        let proxy = try PostgresProxy()
        let ledger = try PostgresLedger(url: proxy.url, bench: "bench-a", serverWait: 30, exclusive: true)
        try ledger.register(Self.stations)
        let (_, attempt) = try #require(try Self.claim(ledger, chip: Self.chips[0]))
        proxy.cut(next: 3, when: "client_encoding")
        proxy.cutAll()
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        #expect(proxy.cuts == 3)
        #expect(try ledger.verifiedStation(forChip: Self.chips[0]) == "s1")
        // At the start too: a connection cut while it is set up is made again.
        proxy.cut(next: 2, when: "client_encoding")
        let started = try PostgresLedger(url: proxy.url, bench: "bench-b", serverWait: 30, exclusive: true)
        #expect(started.lease.runID != nil && proxy.cuts == 5)
    }
}

/// One damaged-ledger table that both databases' `ledger check` must judge identically: each
/// damage made behind the rules' back (a rule dropped or switched off first, as a careless client
/// could), the same problems — kind and words — found on SQLite and on PostgreSQL. Only what
/// guards the schema itself differs (SQLite's triggers and indexes are compared, its table
/// CHECKs and foreign keys are part of the table; every PostgreSQL constraint is compared).
/// A duplicated station is not in the table: SQLite's UNIQUE is its table's, never dropped.
struct LedgerCheckParityTests {
    struct Damage: Sendable, CustomTestStringConvertible {
        let what: String
        let sqlite: [String]
        let postgres: [String]
        /// The invariants broken, on both.
        let found: Set<LedgerProblem.Check>
        /// What the databases' own checks find besides: the rule switched off (`.schema`); on
        /// SQLite, a table CHECK broken (`PRAGMA integrity_check` tests those: `.integrity`).
        var sqliteAlso: Set<LedgerProblem.Check> = [.schema]
        var postgresAlso: Set<LedgerProblem.Check> = [.schema]
        var testDescription: String { what }
    }

    /// An attempt made by hand, for `station` on `chip`, `outcome` (and an end time unless it is
    /// in progress).
    static func attempt(_ station: String, _ chip: String, _ outcome: String, bench: Bool) -> String {
        let ended = outcome == "in-progress" ? "NULL" : "'later'"
        return
            "INSERT INTO attempts(station, chip, debugger, \(bench ? "bench, " : "")template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES ('\(station)', '\(chip)', 'd', \(bench ? "'b', " : "")'t', 'x', 'i', 'then', \(ended), '\(outcome)', 'crc')"
    }

    static let damages = [
        Damage(
            what: "a station's state not kept", sqlite: ["UPDATE stations SET taken = 1 WHERE name = 's3'"],
            postgres: ["UPDATE stations SET taken = 1 WHERE name = 's3'"], found: [.stationState], sqliteAlso: [],
            postgresAlso: []),
        Damage(
            what: "a chip with two verified stations",
            sqlite: [
                "DROP INDEX one_verified_per_chip",
                "UPDATE attempts SET chip = '00:12:4B:00:00:01' WHERE station = 's2'",
            ],
            postgres: [
                "DROP INDEX one_verified_per_chip",
                "UPDATE attempts SET chip = '00:12:4B:00:00:01' WHERE station = 's2'",
            ], found: [.oneVerifiedPerChip]),
        Damage(
            what: "a verified station in progress again",
            sqlite: [
                "DROP INDEX one_live_per_station", attempt("s1", "00:12:4B:00:00:09", "in-progress", bench: false),
            ],
            postgres: [
                "DROP INDEX one_live_per_station", attempt("s1", "00:12:4B:00:00:09", "in-progress", bench: true),
            ],
            found: [.oneLivePerStation]),
        Damage(
            what: "a station verified twice",
            sqlite: [
                "DROP INDEX one_verified_per_station", "DROP INDEX one_live_per_station",
                attempt("s1", "00:12:4B:00:00:09", "verified", bench: false),
                attempt("s1", "00:12:4B:00:00:0A", "verified", bench: false),
            ],
            postgres: [
                "DROP INDEX one_verified_per_station", "DROP INDEX one_live_per_station",
                attempt("s1", "00:12:4B:00:00:09", "verified", bench: true),
                attempt("s1", "00:12:4B:00:00:0A", "verified", bench: true),
            ], found: [.oneVerifiedPerStation, .oneLivePerStation]),
        Damage(
            what: "a station in progress twice",
            sqlite: [
                "DROP INDEX one_active_per_station", "DROP INDEX one_live_per_station",
                attempt("s3", "00:12:4B:00:00:09", "in-progress", bench: false),
                attempt("s3", "00:12:4B:00:00:0A", "interrupted", bench: false),
                "UPDATE stations SET taken = 1 WHERE name = 's3'",
            ],
            postgres: [
                "DROP INDEX one_active_per_station", "DROP INDEX one_live_per_station",
                attempt("s3", "00:12:4B:00:00:09", "in-progress", bench: true),
                attempt("s3", "00:12:4B:00:00:0A", "interrupted", bench: true),
                "UPDATE stations SET taken = 1 WHERE name = 's3'",
            ], found: [.oneActivePerStation]),
        Damage(
            what: "an outcome without the time it ended",
            sqlite: [
                "DROP TRIGGER ended_time_on_update", "UPDATE attempts SET finished_at = NULL WHERE station = 's1'",
            ],
            postgres: [
                "ALTER TABLE attempts DROP CONSTRAINT attempts_check",
                "UPDATE attempts SET finished_at = NULL WHERE station = 's1'",
            ], found: [.endedWithoutTime]),
        Damage(
            what: "a verification method no ledger knows",
            sqlite: [
                "PRAGMA ignore_check_constraints = ON",
                "UPDATE attempts SET verify_method = 'guess' WHERE station = 's2'",
                "PRAGMA ignore_check_constraints = OFF",
            ],
            postgres: [
                "ALTER TABLE attempts DROP CONSTRAINT attempts_verify_method_check",
                "UPDATE attempts SET verify_method = 'guess' WHERE station = 's2'",
            ], found: [.verifiedWithoutMethod], sqliteAlso: [.integrity]),
        Damage(
            what: "chip ids that identify no chip",
            sqlite: [
                "DROP TRIGGER chip_id_on_update", "UPDATE attempts SET chip = '00:12:4b:00:00:02' WHERE station = 's2'",
                "UPDATE attempts SET chip = 'FF:FF:FF:FF:FF:FF' WHERE station = 's1'",
            ],
            postgres: [
                "ALTER TABLE attempts DROP CONSTRAINT attempts_chip_check",
                "UPDATE attempts SET chip = '00:12:4b:00:00:02' WHERE station = 's2'",
                "UPDATE attempts SET chip = 'FF:FF:FF:FF:FF:FF' WHERE station = 's1'",
            ], found: [.invalidChipID]),
        Damage(
            what: "an attempt of a station the ledger lost",
            sqlite: [
                "PRAGMA foreign_keys = OFF", "DELETE FROM stations WHERE name = 's2'", "PRAGMA foreign_keys = ON",
            ],
            postgres: [
                "ALTER TABLE attempts DROP CONSTRAINT attempts_station_fkey", "DELETE FROM stations WHERE name = 's2'",
            ], found: [.unknownStation], sqliteAlso: []),
        Damage(
            what: "stations no list could hold",
            sqlite: [
                "DROP TRIGGER station_values_on_update", "UPDATE stations SET major = 70000 WHERE name = 's3'",
                "UPDATE stations SET uuid = lower(uuid) WHERE name = 's2'",
            ],
            postgres: [
                "ALTER TABLE stations DROP CONSTRAINT stations_major_check",
                "ALTER TABLE stations DROP CONSTRAINT stations_uuid_check",
                "UPDATE stations SET major = 70000 WHERE name = 's3'",
                "UPDATE stations SET uuid = lower(uuid) WHERE name = 's2'",
            ], found: [.stationValues]),
        Damage(
            what: "a calibration from too few samples",
            sqlite: [
                "PRAGMA ignore_check_constraints = ON",
                "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES ('s3', 'then', -59, 3, 2, 'x')",
                "PRAGMA ignore_check_constraints = OFF",
            ],
            postgres: [
                "ALTER TABLE calibrations DROP CONSTRAINT calibrations_samples_check",
                "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES ('s3', 'then', -59, 3, 2, 'x')",
            ], found: [.calibrationValues], sqliteAlso: [.integrity]),
    ]

    /// Three stations: s1 and s2 verified, s3 pending.
    static func fill(_ ledger: any ProvisioningLedger) throws {
        try ledger.register(FencedRunTests.stations)
        for chip in FencedRunTests.chips.prefix(2) {
            let (_, attempt) = try #require(try FencedRunTests.claim(ledger, chip: chip))
            try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        }
    }

    /// The problems an invariant found (not the schema's or the file's own checks), in order.
    static func invariantProblems(_ problems: [LedgerProblem]) -> [LedgerProblem] {
        problems.filter { ![.schema, .integrity].contains($0.check) }
    }

    @Test(arguments: damages)
    func bothChecksJudgeADamageAlike(_ damage: Damage) throws {
        let file = try SQLiteLedger(path: temporaryLedgerPath())
        defer { removeLedgerFiles(file.database.path) }
        try Self.fill(file)
        #expect(file.check().isEmpty)
        for sql in damage.sqlite { try file.database.execute(sql, [], "damage") }
        let onFile = file.check()
        #expect(Set(Self.invariantProblems(onFile).map(\.check)) == damage.found, "SQLite: \(onFile)")
        #expect(Set(onFile.map(\.check)).subtracting(damage.found) == damage.sqliteAlso, "SQLite: \(onFile)")
        guard PostgresTestServer.available else { return }
        let url = try PostgresTestServer.freshDatabase()
        let server = try PostgresLedger(url: url, bench: "b")
        try Self.fill(server)
        #expect(server.check().isEmpty, "\(server.check())")
        for sql in damage.postgres { try PostgresTestServer.psql(url, "SET search_path = ccbeacon; " + sql) }
        let onServer = server.check()
        #expect(
            Set(onServer.map(\.check)).subtracting(damage.found) == damage.postgresAlso, "PostgreSQL: \(onServer)")
        #expect(Self.invariantProblems(onServer) == Self.invariantProblems(onFile))
    }
}

/// What the first adversarial review of the fenced runs found (each failed before its fix).
struct FencedRunReviewTests {
    /// A station whose `taken` a hand-made change left set, with no attempt to say so, is put right
    /// and claimed once nothing else is pending (it was never burned: "no pending stations left").
    @Test(arguments: FencedRunTests.backends)
    func aStaleTakenIsPutRightAndTheStationClaimed(_ backend: FencedRunTests.Backend) throws {
        let pool = try backend.make()
        let ledger = try pool.open("bench-a", 90, .current)
        try ledger.register(FencedRunTests.stations)
        try pool.execute("UPDATE stations SET taken = 1 WHERE name = 's1'")
        var claimed: [String] = []
        for chip in FencedRunTests.chips {
            let (station, attempt) = try #require(try FencedRunTests.claim(ledger, chip: chip))
            try ledger.finish(attempt.id, outcome: .verified, reason: nil)
            claimed.append(station.name)
        }
        #expect(claimed == ["s2", "s3", "s1"])
        #expect(try !ledger.hasWork(excluding: []))
    }

    /// A waiting debugger asks whether work is left: a stale `taken` does not make it stop.
    @Test(arguments: FencedRunTests.backends)
    func aStaleTakenIsWorkLeft(_ backend: FencedRunTests.Backend) throws {
        let pool = try backend.make()
        let ledger = try pool.open("bench-a", 90, .current)
        try ledger.register(Array(FencedRunTests.stations.prefix(1)))
        try pool.execute("UPDATE stations SET taken = 1 WHERE name = 's1'")
        #expect(try ledger.hasWork(excluding: []))
    }

    /// A journal line of a build before runs names no run: it is recorded only onto an attempt of
    /// no run, never onto a run's (it matched any attempt in progress).
    @Test(arguments: FencedRunTests.backends)
    func aJournalLineWithoutARunFinishesNoRunsAttempt(_ backend: FencedRunTests.Backend) throws {
        let pool = try backend.make()
        let ledger = try pool.open("bench-a", 90, .current)
        try ledger.register(FencedRunTests.stations)
        let (_, attempt) = try #require(try FencedRunTests.claim(ledger, chip: FencedRunTests.chips[0]))
        #expect(throws: LedgerError.self) {
            try ledger.recordJournaled(
                attempt.id, run: nil, outcome: .verified, reason: nil, readBack: nil, onAir: nil, debugLocked: false)
        }
        #expect(try ledger.attempts().map(\.outcome) == [.inProgress])
        try ledger.recordJournaled(
            attempt.id, run: attempt.run, outcome: .verified, reason: nil, readBack: nil, onAir: nil, debugLocked: false
        )
        #expect(try ledger.attempts().map(\.outcome) == [.verified])
    }

    /// A session holding a run's row (a bench paused inside a change) must not stop another
    /// bench's recovery, nor, through it, a running bench: recovery locks only runs that look
    /// over, and skips one whose owner holds it — it waited for the lock, and held every other
    /// run's row meanwhile.
    @Test(.enabled(if: PostgresTestServer.available))
    func aBenchPausedInsideAChangeStopsNoOther() throws {
        let url = try PostgresTestServer.freshDatabase()
        let paused = try PostgresLedger(url: url, bench: "bench-p")
        try paused.register(FencedRunTests.stations)
        let (_, held) = try #require(try FencedRunTests.claim(paused, chip: FencedRunTests.chips[0]))
        let running = try PostgresLedger(url: url, bench: "bench-c")
        let (_, burning) = try #require(try FencedRunTests.claim(running, chip: FencedRunTests.chips[1]))
        let pausedRun = try #require(paused.lease.runID)
        // The paused bench's lease has run out, and it holds its row inside a change.
        try PostgresTestServer.psql(url, "UPDATE ccbeacon.runs SET lease_until = 0 WHERE id = '\(pausedRun)'")
        let holder = try ChildProcess(
            "/usr/bin/psql",
            [
                url, "-X", "-q", "-c",
                "BEGIN; SELECT 1 FROM ccbeacon.runs WHERE id = '\(pausedRun)' FOR SHARE; SELECT pg_sleep(600); COMMIT",
            ], in: URL(fileURLWithPath: NSTemporaryDirectory()))
        defer {
            _ = try? PostgresTestServer.psql(
                url,
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE '%FOR SHARE%pg_sleep(600)%' AND pid <> pg_backend_pid()"
            )
            holder.killGroup()
            holder.wait()
        }
        #expect(
            FencedRunTests.waitUntilLocked(url, pausedRun), "the stand-in for the paused bench holds its run's row")
        let starting = try PostgresLedger(url: url, bench: "bench-n")
        #expect(try starting.recoverInterrupted().isEmpty, "a run whose owner holds it is left for the next look")
        #expect(holder.isRunning, "recovery did not wait for the paused bench")
        try running.finish(burning.id, outcome: .verified, reason: nil)  // not stopped either
        #expect(holder.isRunning)
        // The paused bench's session ends (its backend, not only its client: a backend asleep does
        // not notice its client gone).
        try PostgresTestServer.psql(
            url,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE '%FOR SHARE%pg_sleep(600)%' AND pid <> pg_backend_pid()"
        )
        holder.wait()
        #expect(try starting.recoverInterrupted().map(\.id) == [held.id])
    }

    /// A server that asks for a password when none was given refuses at once (libpq says so
    /// without a SQLSTATE: it was waited for, --server-wait long, as an absent server).
    @Test(.enabled(if: PrivatePostgres.available))
    func aPasswordAskedForAndNotGivenIsRefusedAtOnce() throws {
        let server = try PrivatePostgres()
        try PostgresTestServer.psql(server.url(), "CREATE ROLE guarded LOGIN PASSWORD 's3kr1t'")
        try server.require(password: "guarded")
        let url = "postgresql://guarded@/postgres?host=\(server.folder)/sock&passfile=/nonexistent"
        do {
            _ = try PostgresLedger(url: url, bench: "bench-a", serverWait: 60, exclusive: true)
            Issue.record("connected without its password")
        } catch {
            #expect(error.code == "28P01" && !error.isConnectionLost, "\(error) (\(error.code ?? "no code"))")
        }
    }
}

extension FencedRunTests {
    /// Waits (up to 30 s) until the stand-in session holds run `id`'s row (it is asleep after
    /// locking it).
    static func waitUntilLocked(_ url: String, _ id: String) -> Bool {
        for _ in 0..<1500 {
            // Its statements run in order: asleep, it holds the row.
            let locked =
                (try? PostgresTestServer.psql(
                    url,
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%FOR SHARE%pg_sleep(600)%'"
                )) ?? ""
            if let count = Int(locked.trimmingCharacters(in: .whitespacesAndNewlines)), count > 0 { return true }
            usleep(20_000)
        }
        return false
    }
}

/// What the second adversarial review found (each failed before its fix).
struct FencedRunSecondReviewTests {
    /// During an upgrade: a bench of an earlier ccbeacon (no runs; it holds its bench's session
    /// lock while it runs) still burning on a pool this build migrated. A new process under its
    /// name is refused, and no recovery takes its burn — until its lock is free.
    @Test(.enabled(if: PostgresTestServer.available))
    func anEarlierCcbeaconsLiveBenchIsNeitherJoinedNorRecovered() throws {
        let url = try PostgresTestServer.freshDatabase()
        let first = try PostgresLedger(url: url, bench: "bench-y")
        try first.register(FencedRunTests.stations)
        // Its burn in progress, as the earlier build recorded it: no run.
        try PostgresTestServer.psql(
            url,
            "INSERT INTO ccbeacon.attempts(station, chip, debugger, bench, template, template_sha256, image_sha256, started_at, outcome, verify_method) VALUES ('s1', '00:12:4B:00:00:01', 'd', 'bench-x', 't', 'x', 'i', 'then', 'in-progress', 'crc'); UPDATE ccbeacon.stations SET taken = 1 WHERE name = 's1'"
        )
        let holder = try ChildProcess(
            "/usr/bin/psql",
            [
                url, "-X", "-q", "-c",
                "SELECT pg_advisory_lock(1128481356::integer, hashtext('bench-x')), pg_sleep(600) AS held_by_an_earlier_build",
            ], in: URL(fileURLWithPath: NSTemporaryDirectory()))
        let terminate =
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE '%held_by_an_earlier_build%' AND pid <> pg_backend_pid()"
        defer {
            _ = try? PostgresTestServer.psql(url, terminate)
            holder.killGroup()
            holder.wait()
        }
        var held = false
        for _ in 0..<1500 where !held {
            held =
                (try? PostgresTestServer.psql(
                    url,
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%held_by_an_earlier_build%'"
                ))?.hasPrefix("1") == true
            if !held { usleep(20_000) }
        }
        #expect(held, "the stand-in for the earlier build holds its bench's lock")
        do {
            _ = try PostgresLedger(url: url, bench: "bench-x", exclusive: true)
            Issue.record("a second process ran as bench-x beside the earlier build")
        } catch {
            #expect(error.kind == .refused(.benchRunning(bench: "bench-x")), "\(error)")
        }
        let other = try PostgresLedger(url: url, bench: "bench-z", exclusive: true)
        #expect(try other.recoverInterrupted().isEmpty, "the earlier build's live burn is left to it")
        try PostgresTestServer.psql(url, terminate)
        holder.wait()
        #expect(try other.recoverInterrupted().map(\.station) == ["s1"])
    }

    /// An earlier ccbeacon writing into a ledger this build migrated under it leaves the stations'
    /// state behind; the next provision (its recovery) puts it right, and `ledger check` is clean.
    @Test(arguments: FencedRunTests.backends)
    func theStationsStateIsPutRightWhenARunStarts(_ backend: FencedRunTests.Backend) throws {
        let pool = try backend.make()
        let ledger = try pool.open("bench-a", 90, .current)
        try ledger.register(FencedRunTests.stations)
        let postgres = backend.name == "PostgreSQL"
        try pool.execute(
            "INSERT INTO attempts(station, chip, debugger, \(postgres ? "bench, " : "")template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES ('s2', '00:12:4B:00:00:02', 'd', \(postgres ? "'b', " : "")'t', 'x', 'i', 'then', 'then', 'verified', 'crc')"
        )
        let next = try pool.open("bench-a", 90, .goneProcess)
        _ = try next.recoverInterrupted()
        let check: [LedgerProblem] =
            if let file = next as? SQLiteLedger { file.check() } else { (next as? PostgresLedger)?.check() ?? [] }
        #expect(check.isEmpty, "\(check)")
        #expect(
            try next.hasWork(excluding: []) && FencedRunTests.claim(next, chip: "00:12:4B:00:00:09")?.0.name == "s1")
    }

    /// A run whose process was killed but not yet reaped by its parent (a zombie) is gone: it no
    /// longer holds its bench name for the rest of its lease.
    @Test func aZombieProcessIsGone() throws {
        let child = try ChildProcess("/bin/true", [], in: URL(fileURLWithPath: NSTemporaryDirectory()))
        defer { child.wait() }
        var zombie = false
        for _ in 0..<500 where !zombie {
            let stat = (try? String(contentsOfFile: "/proc/\(child.processID)/stat", encoding: .utf8)) ?? ""
            zombie = stat.split(separator: ")").last?.split(separator: " ").first == "Z"
            if !zombie { usleep(10_000) }
        }
        #expect(zombie, "the child ended and was not reaped")
        let record = RunRecord(
            id: String(repeating: "a", count: 32), bench: "b", host: "h", process: Int(child.processID),
            machine: RunIdentity.current.machine, startedAt: "", leaseSeconds: 90, leaseUntil: 0, endedAt: nil,
            endedBecause: nil)
        #expect(RunIdentity.current.isGone(record))
    }
}

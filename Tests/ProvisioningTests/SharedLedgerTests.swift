import BeaconPayload
import Foundation
import TestSupport
import Testing

@testable import PostgresLedger
@testable import Provisioning
@testable import StationLedger

/// The shared ledger's promises beyond the contract both backends keep: one process per bench,
/// one list per pool, a lost server that loses nothing (retried, or journaled and replayed), and
/// histories copied between a file and a server unchanged.
struct SharedLedgerTests {
    static let onServer = PostgresTestServer.available
    static let stations = (1...4).map { Station(name: "s\($0)", identity: identity($0)) }
    static let chips = ["00:12:4B:00:00:01", "00:12:4B:00:00:02", "00:12:4B:00:00:03", "00:12:4B:00:00:04"]

    static func claim(_ ledger: any ProvisioningLedger, chip: String, debugger: String = "d") throws -> (
        Station, Attempt
    ) {
        guard
            let claimed = try ledger.claimNextStation(
                chip: chip, debugger: debugger, template: "t", templateSHA256: "x", verifyMethod: "crc", skipping: [],
                image: { _ in ("sha", "C0:00:00:00:00:01") })
        else { throw PostgresTestError("nothing to claim") }
        return claimed
    }

    /// A history with every kind of record: each outcome, a read-back, an on-air check, a
    /// calibration, a note, a station's attributes.
    static func richHistory(_ ledger: any ProvisioningLedger) throws {
        var listed = stations
        listed[1].note = "hall A, \"north\" wall"
        listed[2].attributes = [
            StationAttribute(name: "floor", value: "2"), StationAttribute(name: "x", value: "-12.5"),
            StationAttribute(name: "Room \"A\"", value: "by the door, left"),
        ]
        try ledger.register(listed)
        let (_, verified) = try claim(ledger, chip: chips[0])
        try ledger.finish(
            verified.id, outcome: .verified, reason: nil, readBack: "0x7F00-0x7F2F",
            onAir: OnAirCheck(heard: true, rssiCount: 7, rssiMedian: -61))
        let (_, failed) = try claim(ledger, chip: chips[1])
        try ledger.finish(failed.id, outcome: .failed, reason: "flash write failed; the chip was erased")
        let (_, held) = try claim(ledger, chip: chips[2])
        try ledger.finish(held.id, outcome: .interrupted, reason: "USB unplugged")
        try ledger.recordCalibration(
            CalibrationRecord(station: "s1", recordedAt: "", power: -63, samples: 24, used: 20, source: "r.csv"))
        _ = try claim(ledger, chip: chips[3])  // in progress
    }

    @Test func aFileLedgerIsCopiedToANewFileWholeAndChecked() throws {
        let source = try SQLiteLedger(path: temporaryLedgerPath(), bench: "bench-a")
        try Self.richHistory(source)
        let history = try source.snapshot()
        #expect(history.attempts.map(\.bench) == Array(repeating: "bench-a", count: 4))
        let target = temporaryLedgerPath()
        try SQLiteLedger.createCopy(at: target, of: history)
        let copy = try SQLiteLedger(path: target, access: .readOnly)
        #expect(try copy.snapshot() == history)
        #expect(copy.check().isEmpty)
        // Never over a file, and never into a ledger that holds records.
        #expect(throws: LedgerError.self) { try SQLiteLedger.createCopy(at: target, of: history) }
        #expect(throws: LedgerError.self) { try source.importHistory(history) }
        // A history the target's rules refuse leaves nothing behind.
        var broken = history
        broken.attempts[1].outcome = .verified
        broken.attempts[1].chip = history.attempts[0].chip  // one chip, two verified stations
        let refused = temporaryLedgerPath()
        #expect(throws: LedgerError.self) { try SQLiteLedger.createCopy(at: refused, of: broken) }
        #expect(!FileManager.default.fileExists(atPath: refused))
        let folder = (refused as NSString).deletingLastPathComponent
        let name = (refused as NSString).lastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(name) }.isEmpty)
    }

    @Test(.enabled(if: onServer)) func aHistoryGoesToTheServerAndBackUnchanged() throws {
        let file = try SQLiteLedger(path: temporaryLedgerPath(), bench: "bench-a")
        try Self.richHistory(file)
        let history = try file.snapshot()
        let url = try PostgresTestServer.freshDatabase()
        let server = try PostgresLedger(url: url, bench: "")
        try server.importHistory(history)
        #expect(try server.snapshot() == history)
        #expect(server.check().isEmpty)
        #expect(throws: LedgerError.self) { try server.importHistory(history) }  // not empty now
        // New attempts on the server go on after the copied ids.
        let (_, next) = try Self.claim(PostgresLedger(url: url, bench: "bench-b"), chip: "00:12:4B:00:00:09")
        #expect(next.id == (history.attempts.map(\.id).max() ?? 0) + 1)
        let back = temporaryLedgerPath()
        let served = try server.snapshot()
        try SQLiteLedger.createCopy(at: back, of: served)
        #expect(try SQLiteLedger(path: back, access: .readOnly).snapshot() == served)
    }

    @Test(.enabled(if: onServer)) func aSecondBenchAttachesOnlyWithTheSameList() throws {
        let url = try PostgresTestServer.freshDatabase()
        try PostgresLedger(url: url, bench: "bench-a").register(Self.stations)
        let second = try PostgresLedger(url: url, bench: "bench-b")
        try second.register(Self.stations)  // the same list: attached
        var other = Array(Self.stations.dropFirst())  // s1 missing
        other[0] = Station(name: "s2", identity: identity(22))  // s2 changed
        other.append(Station(name: "s9", identity: identity(9)))  // s9 new
        do {
            try second.register(other)
            Issue.record("another list was attached")
        } catch {
            #expect(error.message.contains("1 station(s) of the list are not in the pool: s9"), "\(error.message)")
            #expect(error.message.contains("1 station(s) of the pool are not in the list: s1"), "\(error.message)")
            #expect(error.message.contains("s2 (pool 7634A485-1732-4B7D-AB44-D505D8A24C60/1/2"), "\(error.message)")
        }
        #expect(try second.states().map(\.station.name) == ["s1", "s2", "s3", "s4"], "nothing registered")
    }

    @Test(.enabled(if: onServer)) func oneProcessRunsAsABenchAtATime() throws {
        let url = try PostgresTestServer.freshDatabase()
        var first: PostgresLedger? = try PostgresLedger(url: url, bench: "bench-a", exclusive: true)
        do {
            _ = try PostgresLedger(url: url, bench: "bench-a", exclusive: true)
            Issue.record("two processes ran as bench-a")
        } catch {
            #expect(error.kind == .refused(.benchRunning(bench: "bench-a")))
        }
        _ = try PostgresLedger(url: url, bench: "bench-b", exclusive: true)
        _ = try PostgresLedger(url: url, bench: "bench-a")  // a reader takes no lock
        #expect(first != nil)
        first = nil  // its connection closes, and the lock with it
        _ = try PostgresLedger(url: url, bench: "bench-a", exclusive: true)
    }

    /// `pg_terminate_backend` mid-run: the next change connects again, takes the bench's lock
    /// again and goes on; nothing is lost.
    @Test(.enabled(if: onServer)) func aTerminatedConnectionIsMadeAgain() throws {
        let outage = try PostgresOutage()
        let ledger = try PostgresLedger(url: outage.url, bench: "bench-a", exclusive: true)
        try ledger.register(Self.stations)
        let (_, attempt) = try Self.claim(ledger, chip: Self.chips[0])
        try outage.begin()
        outage.restore()
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        #expect(try ledger.verifiedStation(forChip: Self.chips[0]) == "s1")
        #expect(throws: LedgerError.self) {
            _ = try PostgresLedger(url: outage.url, bench: "bench-a", exclusive: true)
        }
    }

    /// The server away for a while, and back within the wait: the change waits for it.
    @Test(.enabled(if: onServer)) func aServerBackWithinTheWaitLosesNothing() throws {
        let outage = try PostgresOutage()
        let ledger = try PostgresLedger(url: outage.url, bench: "bench-a", serverWait: 30, exclusive: true)
        try ledger.register(Self.stations)
        let (_, attempt) = try Self.claim(ledger, chip: Self.chips[0])
        try outage.begin()
        // The outage is the scenario: the server stays away 1.5 s, well within the 30 s wait.
        let back = Thread {
            usleep(1_500_000); outage.restore()
        }
        back.start()
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        #expect(try ledger.verifiedStation(forChip: Self.chips[0]) == "s1")
    }

    /// The server away for longer than the wait: the outcome goes to the journal (and the error
    /// stops the run); the next run records it first, and a replay killed before it removed the
    /// journal is harmless.
    @Test(.enabled(if: onServer)) func anOutcomeTheServerCannotTakeIsJournaledAndReplayed() throws {
        let outage = try PostgresOutage()
        let journalPath = NSTemporaryDirectory() + "journal-\(UUID().uuidString).jsonl"
        defer { unlink(journalPath) }
        let journal = OutcomeJournal(path: journalPath)
        var ledgerID = ""
        do {
            // A process of this machine that is gone once the test goes on (as a bench's process
            // is when its next run starts).
            let server = try PostgresLedger(
                url: outage.url, bench: "bench-a", serverWait: 0.5, exclusive: true, identity: .goneProcess)
            ledgerID = server.ledgerID
            #expect(!ledgerID.isEmpty)
            let ledger = JournalingLedger(server, journal: journal, ledgerID: server.ledgerID, bench: "bench-a")
            try ledger.register(Self.stations)
            let (_, attempt) = try Self.claim(ledger, chip: Self.chips[0])
            try outage.begin()
            do {
                try ledger.finish(
                    attempt.id, outcome: .verified, reason: nil, readBack: "0x7F00-0x7F2F",
                    onAir: OnAirCheck(heard: true, rssiCount: 3, rssiMedian: -60))
                Issue.record("recorded with the server away")
            } catch {
                #expect(error.isConnectionLost && error.message.contains("kept in the journal"), "\(error)")
            }
            #expect(
                try journal.entries() == [
                    OutcomeJournal.Entry(
                        ledger: ledgerID, bench: "bench-a", attempt: attempt.id, station: "s1", chip: Self.chips[0],
                        outcome: .verified, reason: nil, readBack: "0x7F00-0x7F2F",
                        onAir: OnAirCheck(heard: true, rssiCount: 3, rssiMedian: -60), run: server.lease.runID)
                ])
            // Nothing new is claimed while the server is away.
            #expect(throws: LedgerError.self) { _ = try Self.claim(ledger, chip: Self.chips[1]) }
        }
        outage.restore()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: journalPath))
        // Another ledger's journal (or another bench's) is not replayed: kept, nothing recorded.
        let elsewhere = try PostgresLedger(url: PostgresTestServer.freshDatabase(), bench: "bench-a")
        try elsewhere.register(Self.stations)
        _ = try Self.claim(elsewhere, chip: Self.chips[0])
        for (id, bench) in [(elsewhere.ledgerID, "bench-a"), (ledgerID, "bench-b")] {
            #expect(throws: LedgerError.self) {
                try JournalingLedger(elsewhere, journal: journal, ledgerID: id, bench: bench).replay()
            }
        }
        #expect(try elsewhere.attempts().map(\.outcome) == [.inProgress])
        #expect(FileManager.default.fileExists(atPath: journalPath))
        let server = try PostgresLedger(url: outage.url, bench: "bench-a", exclusive: true)
        let next = JournalingLedger(server, journal: journal, ledgerID: server.ledgerID, bench: "bench-a")
        #expect(try next.replay().recorded.map(\.station) == ["s1"])
        #expect(!FileManager.default.fileExists(atPath: journalPath))
        let recorded = try #require(try next.attempts().first)
        #expect(recorded.outcome == .verified && recorded.readBack == "0x7F00-0x7F2F" && recorded.onAir?.heard == true)
        // A replay killed before it removed the journal: the next finds the outcome recorded.
        try bytes.write(to: URL(fileURLWithPath: journalPath))
        #expect(try next.replay().alreadyRecorded.map(\.station) == ["s1"])
        // A journal line cut short by a kill is left out; a line that is not an entry is refused.
        try (bytes + Data("{\"version\":1,\"att".utf8)).write(to: URL(fileURLWithPath: journalPath))
        #expect(try journal.entries().count == 1)
        try (Data("not json\n".utf8) + bytes).write(to: URL(fileURLWithPath: journalPath))
        #expect(throws: LedgerError.self) { try journal.entries() }
        // An outcome the ledger settled otherwise meanwhile is a conflict: the journal is kept.
        let (_, second) = try Self.claim(next, chip: Self.chips[1])
        try next.finish(second.id, outcome: .failed, reason: "erased")
        try journal.remove()
        try journal.append(
            OutcomeJournal.Entry(
                ledger: ledgerID, bench: "bench-a", attempt: second.id, station: second.station, chip: second.chip,
                outcome: .verified, reason: nil, readBack: nil, onAir: nil))
        #expect(throws: LedgerError.self) { try next.replay() }
        #expect(FileManager.default.fileExists(atPath: journalPath))
        // A line naming an attempt with another station or chip finishes nothing.
        let (_, third) = try Self.claim(next, chip: Self.chips[2])
        try journal.remove()
        try journal.append(
            OutcomeJournal.Entry(
                ledger: ledgerID, bench: "bench-a", attempt: third.id, station: "s4", chip: third.chip,
                outcome: .verified, reason: nil, readBack: nil, onAir: nil))
        #expect(throws: LedgerError.self) { try next.replay() }
        #expect(try next.attempts().first { $0.id == third.id }?.outcome == .inProgress)
        // A file far larger than any journal is refused before it is read.
        try journal.remove()
        let huge = FileManager.default.createFile(atPath: journalPath, contents: nil)
        #expect(huge)
        truncate(journalPath, off_t(OutcomeJournal.largest + 1))
        #expect(throws: LedgerError.self) { try journal.entries() }
    }

    /// `ledger check` on a server finds what raw SQL broke, without trusting the indexes.
    @Test(.enabled(if: onServer)) func theServersCheckFindsABrokenLedger() throws {
        let url = try PostgresTestServer.freshDatabase()
        let ledger = try PostgresLedger(url: url, bench: "bench-a")
        try Self.richHistory(ledger)
        #expect(ledger.check().isEmpty, "\(ledger.check())")
        try PostgresTestServer.psql(url, "DROP INDEX ccbeacon.one_verified_per_chip")
        try PostgresTestServer.psql(
            url,
            "UPDATE ccbeacon.attempts SET outcome = 'verified', finished_at = 'x', chip = '00:12:4B:00:00:01' WHERE outcome = 'in-progress'"
        )
        try PostgresTestServer.psql(url, "ALTER TABLE ccbeacon.attempts DROP CONSTRAINT attempts_chip_check")
        try PostgresTestServer.psql(
            url, "UPDATE ccbeacon.attempts SET chip = 'FF:FF:FF:FF:FF:FF' WHERE outcome = 'interrupted'")
        let problems = ledger.check()
        let checks = Set(problems.map(\.check))
        #expect(checks == [.schema, .oneVerifiedPerChip, .invalidChipID], "\(problems)")
        #expect(problems.contains { $0.detail.contains("one_verified_per_chip") })
        #expect(problems.contains { $0.detail.contains("attempts_chip_check") })
    }

    /// Whatever else changes what the tables do is found by the check, and a bench refuses to
    /// write to such a ledger: a trigger, a rule, an unlogged table (a crash would empty it),
    /// row security, another default, a table inheriting one of the ledger's, a foreign key's
    /// triggers disabled.
    @Test(
        .enabled(if: onServer),
        arguments: [
            "CREATE FUNCTION ccbeacon.f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$; CREATE TRIGGER t BEFORE UPDATE ON ccbeacon.attempts FOR EACH ROW EXECUTE FUNCTION ccbeacon.f()",
            "CREATE RULE r AS ON DELETE TO ccbeacon.attempts DO INSTEAD NOTHING",
            "ALTER TABLE ccbeacon.calibrations SET UNLOGGED",
            "ALTER TABLE ccbeacon.attempts ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE ccbeacon.attempts ALTER COLUMN outcome SET DEFAULT 'verified'",
            "CREATE TABLE public.more (x int) INHERITS (ccbeacon.stations)",
            "ALTER TABLE ccbeacon.attempts DISABLE TRIGGER ALL",
            // A default calling a look-alike of a built-in function in another schema.
            "CREATE FUNCTION public.nextval(r regclass) RETURNS bigint LANGUAGE sql AS 'SELECT pg_catalog.nextval(r)'; ALTER TABLE ccbeacon.attempts ALTER COLUMN id SET DEFAULT public.nextval('ccbeacon.attempts_id_seq'::regclass)",
            // A function in the ledger's schema that an exact match would prefer to the built-in.
            "CREATE FUNCTION ccbeacon.pg_advisory_xact_lock(k integer) RETURNS void LANGUAGE sql AS 'SELECT pg_catalog.pg_advisory_xact_lock(k::bigint)'",
            "GRANT CREATE ON SCHEMA ccbeacon TO PUBLIC",
        ])
    func aChangedRuleIsFoundAndRefused(change: String) throws {
        let url = try PostgresTestServer.freshDatabase()
        try Self.richHistory(PostgresLedger(url: url, bench: "bench-a"))
        try PostgresTestServer.psql(url, change)
        let problems = try PostgresLedger(url: url, bench: "", creating: false).check()
        #expect(problems.contains { $0.check == .schema }, "\(change): \(problems)")
        do {
            _ = try PostgresLedger(url: url, bench: "bench-a")
            Issue.record("a bench writes to a ledger changed by \(change)")
        } catch {
            guard case .refused(.damaged) = error.kind else {
                Issue.record("\(change): \(error)")
                return
            }
        }
    }

    /// The ledger lives in its own schema whatever search path a session brings: a session
    /// pointed at its temporary schema (or a per-user one) still writes to the one pool.
    @Test(.enabled(if: onServer)) func aSearchPathCannotMakeASecondPool() throws {
        let url = try PostgresTestServer.freshDatabase()
        do {
            let redirected = try PostgresLedger(url: url + "&options=-csearch_path%3Dpg_temp", bench: "bench-a")
            try redirected.register(Self.stations)
            let (_, attempt) = try Self.claim(redirected, chip: Self.chips[0])
            try redirected.finish(attempt.id, outcome: .verified, reason: nil)
        }
        let plain = try PostgresLedger(url: url, bench: "bench-b")
        #expect(try plain.verifiedStation(forChip: Self.chips[0]) == "s1", "the same pool, after the session ended")
    }

    /// A crash or an immediate shutdown of the server (libpq then reports no SQLSTATE and may
    /// still call the connection OK) is a lost connection: waited for, not a failure.
    @Test(.enabled(if: onServer && PrivatePostgres.available)) func aCrashedServerIsWaitedFor() throws {
        let server = try PrivatePostgres()
        let url = try server.createDatabase("pool")
        let ledger = try PostgresLedger(url: url, bench: "bench-a", serverWait: 30, exclusive: true)
        try ledger.register(Self.stations)
        let (_, attempt) = try Self.claim(ledger, chip: Self.chips[0])
        try server.stop(mode: "immediate")
        try server.start()
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        #expect(try ledger.verifiedStation(forChip: Self.chips[0]) == "s1")
    }

    /// A ledger kept in another schema by an earlier build is not started afresh beside (its
    /// stations would be burned again): refused, with how to move it.
    @Test(.enabled(if: onServer)) func aLedgerInAnotherSchemaIsNotStartedAgain() throws {
        let url = try PostgresTestServer.freshDatabase()
        try Self.richHistory(PostgresLedger(url: url, bench: "bench-a"))
        try PostgresTestServer.psql(
            url,
            "ALTER TABLE ccbeacon.ledger_meta SET SCHEMA public; ALTER TABLE ccbeacon.calibrations SET SCHEMA public; ALTER TABLE ccbeacon.hook_runs SET SCHEMA public; ALTER TABLE ccbeacon.attempts SET SCHEMA public; ALTER TABLE ccbeacon.stations SET SCHEMA public; ALTER TABLE ccbeacon.runs SET SCHEMA public; ALTER TABLE ccbeacon.run_journals SET SCHEMA public; DROP SCHEMA ccbeacon"
        )
        for creating in [true, false] {
            do {
                _ = try PostgresLedger(url: url, bench: "bench-a", creating: creating)
                Issue.record("a second ledger beside the one in public")
            } catch {
                #expect(error.message.contains("a ccbeacon ledger is in schema public"), "\(error)")
            }
        }
        #expect(
            try PostgresTestServer.psql(url, "SELECT count(*) FROM pg_namespace WHERE nspname = 'ccbeacon'").hasPrefix(
                "0"))
    }

    /// On a read-only server (a standby) the schema cannot be compared (that needs a temporary
    /// copy): the check says so and checks every invariant, instead of calling the ledger damaged.
    @Test(.enabled(if: onServer)) func aReadOnlyServerIsCheckedWithoutItsSchema() throws {
        let url = try PostgresTestServer.freshDatabase()
        try Self.richHistory(PostgresLedger(url: url, bench: "bench-a"))
        let reader = try PostgresLedger(
            url: url + "&options=-c%20default_transaction_read_only%3Don", bench: "", creating: false)
        let (problems, notes) = reader.checkReport()
        #expect(problems.isEmpty, "\(problems)")
        #expect(notes.first?.contains("the server is read-only") == true)
        #expect(try reader.snapshot().stations.count == 4, "migrate reads it")
    }

    /// Text goes to the server as UTF-8 whatever client encoding the environment or the URL asks.
    @Test(.enabled(if: onServer)) func namesAreStoredAsWrittenWhateverTheClientEncoding() throws {
        let url = try PostgresTestServer.freshDatabase()
        let latin = try PostgresLedger(url: url + "&options=-c%20client_encoding%3DLATIN1", bench: "bench-a")
        try latin.register([Station(name: "Café", identity: identity(1), note: "Straße 5")])
        let station = try #require(try PostgresLedger(url: url, bench: "").states().first?.station)
        #expect(station.name == "Café" && station.note == "Straße 5")
    }
}

/// libpq's messages of several lines become one (a message is shown on one line).
@Test func libpqMessagesBecomeOneLine() {
    #expect(
        PostgresConnection.oneLine(
            "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the server running?\n")
            == "connection to server at \"127.0.0.1\", port 1 failed: Connection refused; Is the server running?")
    #expect(PostgresConnection.oneLine("one line") == "one line")
}

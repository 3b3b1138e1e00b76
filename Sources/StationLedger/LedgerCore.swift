import BeaconPayload
import Synchronization

/// The tables a ledger may lack (an earlier schema, read without migrating it).
package struct LedgerTables: OptionSet, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    /// `calibrations` (SQLite schema version 2 on).
    package static let calibrations = LedgerTables(rawValue: 1)
    /// `hook_runs` (SQLite 4, PostgreSQL 3 on).
    package static let hookRuns = LedgerTables(rawValue: 2)
    /// `runs` (SQLite 5, PostgreSQL 4 on).
    package static let runs = LedgerTables(rawValue: 4)
    /// `stations.taken` (SQLite 5, PostgreSQL 4 on).
    package static let stationState = LedgerTables(rawValue: 8)
    /// Each station's attributes (`Station.attributes`; SQLite schema 6, PostgreSQL 5).
    package static let stationAttributes = LedgerTables(rawValue: 16)
    /// `run_journals`, where each bench's run keeps its journal (PostgreSQL 6 on; a file ledger
    /// keeps no journal).
    package static let runJournals = LedgerTables(rawValue: 32)
}

/// The ledger's contract for runs and attempts, written once over either database (`LedgerDriver`):
/// runs with leases, and every change of an attempt's state — claims, outcomes, recovery,
/// release, supersession — fenced by the run's lease inside its own transaction. Both
/// `SQLiteLedger` and `PostgresLedger` keep their attempts through it.
///
/// The fencing rule, in three lines:
/// - a run changes an attempt only while its lease holds (checked by this process's clock before
///   anything is sent, and by the database's clock inside the transaction);
/// - an attempt in progress belongs to the run that started it; one interrupted belongs to nobody
///   until a run settles it;
/// - a run's attempts in progress are recovered only once it is over: its lease ran out, it ended,
///   or (same machine) its process is gone — or, for a file ledger, whose one-run lock the
///   recovering run holds, always.
package final class LedgerCore: ProvisioningLedger, Sendable {
    /// The connection.
    package let driver: any LedgerDriver
    /// The bench recorded on the attempts and the run (`nil`: a file ledger's run without one).
    package let bench: String?
    /// The columns of `attempts` to select, in `attemptColumns`' order (NULL for those an older
    /// ledger read without migrating lacks).
    package let attemptSelect: String
    /// The outcomes whose `finish` records a hook run.
    package let hookOutcomes: Set<AttemptOutcome>
    /// This process's view of its run's lease.
    package let lease: RunLease
    /// Where this process runs.
    package let identity: RunIdentity
    /// Whether recovery may take every attempt in progress: the caller holds the ledger's one-run
    /// lock (a file ledger), so no other run can be alive.
    package let soleRunner: Bool
    /// The tables the ledger has beyond those every ledger has (an earlier schema read as it is
    /// lacks some).
    package let tables: LedgerTables
    /// A station's columns as every read selects them (`station(_:)` reads them): the
    /// attributes, or NULL where an earlier schema has none.
    package let stationSelect: String
    /// The ledger's name in messages: a file's path, a server's URL as shown.
    package let name: String
    /// Held while the run begins: the process's threads (one per debugger) begin one run, not one each.
    let beginning = Mutex(())

    /// The columns of an attempt, in the order every ledger reads them.
    package static let attemptColumns = [
        "id", "station", "chip", "debugger", "template", "template_sha256", "image_sha256", "started_at", "finished_at",
        "outcome", "reason", "verify_method", "advertiser_address", "read_back", "power", "heard", "rssi_count",
        "rssi_median", "power_source", "bench", "debug_locked", "run",
    ]

    /// The columns of a run, in `RunRecord`'s order.
    package static let runColumnNames = [
        "id", "bench", "host", "process", "machine", "started_at", "lease_seconds", "lease_until", "ended_at",
        "ended_because",
    ]
    /// `runColumnNames` as a select list.
    package static let runColumns = runColumnNames.joined(separator: ", ")

    /// A core over `driver` for the ledger called `name`; `present` says which of
    /// `attemptColumns` the ledger has, `tables` which optional tables. `soleRunner`: a file,
    /// whose one-run lock the caller holds (recovery may take every attempt in progress; the file
    /// may hold several lists; a bench name is not a run's to hold); otherwise a pool: one list,
    /// one live run per bench name.
    package init(
        driver: any LedgerDriver, name: String, bench: String?, present: Set<String>, tables: LedgerTables,
        hookOutcomes: Set<AttemptOutcome>, leaseSeconds: Double, soleRunner: Bool, identity: RunIdentity = .current
    ) {
        self.driver = driver
        self.name = name
        self.tables = tables
        self.bench = bench
        self.hookOutcomes = hookOutcomes
        self.soleRunner = soleRunner
        self.identity = identity
        lease = RunLease(seconds: leaseSeconds)
        attemptSelect = Self.attemptColumns.map { present.contains($0) ? $0 : "NULL AS \($0)" }
            .joined(separator: ", ")
        stationSelect =
            "name, uuid, major, minor, power, note, "
            + (tables.contains(.stationAttributes) ? "attributes" : "NULL AS attributes")
    }

    var dialect: SQLDialect { driver.dialect }
    var now: String { dialect.now }
    var epoch: String { dialect.epochSeconds }

    // MARK: - Runs

    /// Registers this process's run, once: with `exclusive`, a bench name another live run holds
    /// is refused (a run of this machine whose process is gone is ended instead).
    package func beginRun(exclusive: Bool) throws(LedgerError) {
        guard lease.runID == nil else { return }
        try beginning.withLock { (_: inout ()) throws(LedgerError) in try registerRun(exclusive: exclusive) }
    }

    /// Registers this process's run; on a pool a bench name another live run holds is refused
    /// (a file has one run at a time: its one-run lock).
    package func beginRun() throws(LedgerError) { try beginRun(exclusive: !soleRunner) }

    func registerRun(exclusive: Bool) throws(LedgerError) {
        guard lease.runID == nil else { return }
        let id = RunIdentity.randomHex()
        let sentAt = RunLease.now()
        try driver.inTransaction("starting a run") { () throws(LedgerError) in
            if let serialize = dialect.serializeRuns { _ = try driver.rows(serialize, [], "starting a run") }
            // Repeated after a lost COMMIT: the first try may have registered it.
            if driver.isRepeating,
                try !driver.rows("SELECT 1 FROM runs WHERE id = ?", [.text(id)], "starting a run").isEmpty
            {
                return
            }
            if exclusive, let bench, let free = dialect.legacyBenchFree {
                // An earlier ccbeacon, still running since before this ledger was migrated, holds
                // its bench's session lock instead of a run.
                guard try driver.rows(free, [.text(bench)], "starting a run").first?.first?.int == 1 else {
                    throw LedgerError(
                        operation: "starting bench '\(bench)'",
                        message:
                            "another process is running as bench '\(bench)' on this ledger (an earlier ccbeacon, which holds the bench's lock); one process per bench name",
                        kind: .refused(.benchRunning(bench: bench)))
                }
            }
            if exclusive, let bench {
                let live = try driver.rows(
                    "SELECT \(Self.runColumns), lease_until - \(epoch) FROM runs WHERE bench = ? AND ended_at IS NULL AND lease_until > \(epoch)",
                    [.text(bench)], "starting a run")
                for row in live {
                    let other = try Self.run(row)
                    let left = Int((row[10].double ?? 0).rounded(.up))
                    guard identity.isGone(other) else {
                        throw LedgerError(
                            operation: "starting bench '\(bench)'",
                            message:
                                "another process is running as bench '\(bench)' on this ledger (\(other.described), its lease holds for \(left) s more unless renewed); one process per bench name",
                            kind: .refused(.benchRunning(bench: bench)))
                    }
                    try end(other.id, because: "its process ended (found by a run of the same machine)")
                }
            }
            try driver.rows(
                "INSERT INTO runs(\(Self.runColumns)) VALUES (?, ?, ?, ?, ?, \(now), ?, \(epoch) + ?, NULL, NULL)",
                [
                    .text(id), bench.map { .text($0) } ?? .null, .text(identity.host), .integer(identity.process),
                    .text(identity.machine), .real(lease.seconds), .real(lease.seconds),
                ], "starting a run")
            if tables.contains(.runJournals), let journal = identity.journal {
                try driver.rows(
                    "INSERT INTO run_journals(run, token, path) VALUES (?, ?, ?)",
                    [.text(id), .text(journal.token), .text(journal.path)], "starting a run")
            }
        }
        lease.granted(id: id, sentAt: sentAt)
    }

    /// Renews this run's lease; a lease over (by this process's clock, or the database's, or
    /// because another run ended it) is `Kind.leaseLost`, for good.
    package func renewLease() throws(LedgerError) {
        guard let id = lease.runID else { return }
        let operation = "renewing the run's lease"
        if let lost = lease.lostBecause {
            lease.lose(lost)
            throw .leaseLost(operation, "this run's lease is over: \(lost)")
        }
        let sentAt = RunLease.now()
        let renewed = try driver.inTransaction(operation) { () throws(LedgerError) -> Bool in
            try !driver.rows(
                "UPDATE runs SET lease_until = \(epoch) + lease_seconds WHERE id = ? AND ended_at IS NULL AND lease_until > \(epoch) RETURNING id",
                [.text(id)], operation
            ).isEmpty
        }
        guard renewed else {
            let why = try whyOver(id)
            lease.lose(why)
            throw .leaseLost(operation, "this run's lease is over: \(why)")
        }
        lease.granted(id: id, sentAt: sentAt)
    }

    /// Ends this run (its lease with it), once; a run whose lease is over is left as it is.
    /// Tried once, without waiting for a server that went away.
    package func endRun() {
        guard let id = lease.runID, lease.lostBecause == nil else { return }
        lease.lose("the run ended")
        _ = try? driver.inTransaction("ending the run") { () throws(LedgerError) in
            try driver.rows(
                "UPDATE runs SET ended_at = \(now), ended_because = 'finished', lease_until = \(epoch) WHERE id = ? AND ended_at IS NULL",
                [.text(id)], "ending the run")
        }
    }

    /// Why run `id` is over, in words.
    func whyOver(_ id: String) throws(LedgerError) -> String {
        guard
            let record = try driver.rows(
                "SELECT \(Self.runColumns) FROM runs WHERE id = ?", [.text(id)], "reading the run"
            ).map(Self.run).first
        else { return "the ledger has no record of it" }
        if let because = record.endedBecause { return "it was ended: \(because)" }
        return "its lease of \(RunLease.seconds(record.leaseSeconds)) s ran out"
    }

    func end(_ id: String, because reason: String) throws(LedgerError) {
        try driver.rows(
            "UPDATE runs SET ended_at = \(now), ended_because = ? WHERE id = ? AND ended_at IS NULL",
            [.text(reason), .text(id)], "ending a run")
    }

    /// Inside a transaction: the run's lease still holds, by this process's clock and then by the
    /// database's, with the run's row kept from changing until the transaction ends. Returns the
    /// run's id.
    @discardableResult
    func fence(_ operation: String) throws(LedgerError) -> String {
        guard let id = lease.runID else {
            throw LedgerError(operation: operation, message: "this process has not started a run", kind: .leaseLost)
        }
        if let lost = lease.lostBecause { throw .leaseLost(operation, "this run's lease is over: \(lost)") }
        // The row is locked first (a wait here is only for a recovery ending this very run), and
        // the lease judged after, by the clock as it is then.
        try driver.rows("SELECT 1 FROM runs WHERE id = ? \(dialect.forShare)", [.text(id)], operation)
        let holds =
            try driver.rows(
                "SELECT CASE WHEN ended_at IS NULL AND lease_until > \(epoch) THEN 1 ELSE 0 END FROM runs WHERE id = ?",
                [.text(id)], operation
            ).first?.first?.int == 1
        guard holds else {
            let why = try whyOver(id)
            lease.lose(why)
            throw .leaseLost(operation, "this run's lease is over: \(why)")
        }
        return id
    }

    /// Every run, oldest first (none in a ledger of an earlier schema read as it is).
    package func runs() throws(LedgerError) -> [RunRecord] {
        guard tables.contains(.runs) else { return [] }
        return try driver.reading("reading runs") { () throws(LedgerError) -> [RunRecord] in
            try driver.rows("SELECT \(Self.runColumns) FROM runs ORDER BY started_at, id", [], "reading runs")
                .map(Self.run)
        }
    }

    // MARK: - Claims

    /// Claims the first pending station in list order that no other run is claiming (its row is
    /// locked, others skip it), recording an in-progress attempt of this run, in one transaction.
    package func claimNextStation(
        chip: String, debugger: String, template: String, templateSHA256: String, verifyMethod: String,
        skipping: Set<String>, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt)? {
        try beginRun(exclusive: false)
        let claimed = try driver.inTransaction("claiming the next station") {
            () throws(LedgerError) -> (Station, Attempt)? in
            let run = try fence("claiming the next station")
            if driver.isRepeating,
                let started = try startedBefore(run: run, chip: chip, debugger: debugger, image: image)
            {
                return started
            }
            var passed = skipping
            while true {
                guard
                    let row = try driver.rows(
                        """
                        SELECT \(stationSelect) FROM stations s
                        WHERE taken = 0 AND \(dialect.notInList("s.name"))
                        ORDER BY position LIMIT 1 \(dialect.forUpdateSkipLocked)
                        """, [dialect.listParameter(passed.sorted())], "finding pending stations"
                    ).first
                else {
                    // None pending by `taken`: unless a hand-made change left it set on a station
                    // no attempt holds (put right here, then looked for again), none is.
                    if try repairTaken() > 0 { continue }
                    return nil
                }
                let station = try Self.station(row)
                // A server takes the row lock after the statement's snapshot: a run that claimed
                // this station and committed in between is only seen by a new statement. Looked
                // at again under the lock; `one_live_per_station` refuses what this would miss.
                let live = try driver.rows(
                    "SELECT 1 FROM attempts WHERE station = ? AND outcome IN ('verified', 'in-progress', 'interrupted')",
                    [.text(station.name)], "checking the claimed station")
                if !live.isEmpty {
                    // `taken` was not kept (a hand-made change): put right, and passed over.
                    try retake(station.name)
                    passed.insert(station.name)
                    continue
                }
                return try start(
                    station, run: run, chip: chip, debugger: debugger, template: template,
                    templateSHA256: templateSHA256, verifyMethod: verifyMethod, image: image)
            }
        }
        if claimed != nil { try leaseHeldThroughCommit("claiming the next station") }
        return claimed
    }

    /// After a claim's COMMIT: this run's lease still holds by its own clock. A process paused
    /// between its fence and the COMMIT may find it ran out meanwhile, so that another run may
    /// already have recovered the attempt: nothing is burned for it (it stays in progress, to be
    /// recovered as interrupted, its chip untouched).
    func leaseHeldThroughCommit(_ operation: String) throws(LedgerError) {
        if let lost = lease.lostBecause {
            throw .leaseLost(operation, "this run's lease ran out before its claim was committed: \(lost)")
        }
    }

    /// Supersedes the chip's verified attempt of `name` and starts a new one of this run on it,
    /// in one transaction: no moment in which the station is pending while its chip carries it.
    package func claimAgain(
        station name: String, chip: String, debugger: String, template: String, templateSHA256: String,
        verifyMethod: String, reason: String, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt) {
        try beginRun(exclusive: false)
        let claimed = try driver.inTransaction("burning \(name) again") {
            () throws(LedgerError) -> (Station, Attempt) in
            let run = try fence("burning \(name) again")
            if driver.isRepeating,
                let started = try startedBefore(run: run, chip: chip, debugger: debugger, image: image),
                started.0.name == name
            {
                return started
            }
            let changed = try driver.rows(
                "UPDATE attempts SET outcome = 'superseded', reason = ? WHERE chip = ? AND station = ? AND outcome = 'verified' RETURNING id",
                [.text(reason), .text(chip), .text(name)], "burning \(name) again")
            guard changed.count == 1,
                let row = try driver.rows(
                    "SELECT \(stationSelect) FROM stations WHERE name = ? \(dialect.forUpdate)",
                    [.text(name)], "burning \(name) again"
                ).first
            else {
                throw LedgerRefusal.notVerifiedThere(name, chip: chip)
            }
            return try start(
                try Self.station(row), run: run, chip: chip, debugger: debugger, template: template,
                templateSHA256: templateSHA256, verifyMethod: verifyMethod, image: image)
        }
        try leaseHeldThroughCommit("burning \(name) again")
        return claimed
    }

    /// The attempt this run's `debugger` started on `chip` in a try of the claim whose COMMIT's
    /// answer was lost, if it went through: the claim is that attempt. (A debugger of a run has
    /// no other attempt in progress when it claims: each is finished first.)
    func startedBefore(
        run: String, chip: String, debugger: String, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt)? {
        guard
            let attempt = try driver.rows(
                "SELECT \(attemptSelect) FROM attempts WHERE run = ? AND debugger = ? AND chip = ? AND outcome = 'in-progress' ORDER BY id DESC LIMIT 1",
                [.text(run), .text(debugger), .text(chip)], "looking for a claim already made"
            ).map(Self.attempt).first,
            let row = try driver.rows(
                "SELECT \(stationSelect) FROM stations WHERE name = ?", [.text(attempt.station)],
                "looking for a claim already made"
            ).first
        else { return nil }
        let station = try Self.station(row)
        // The caller learns the image it is to burn from this call, as from a new claim.
        guard image(station).sha256 == attempt.imageSHA256 else { return nil }
        return (station, attempt)
    }

    /// Records the start of an attempt of run `run` inside the caller's transaction.
    func start(
        _ station: Station, run: String, chip: String, debugger: String, template: String, templateSHA256: String,
        verifyMethod: String, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt) {
        let record = image(station)
        let source =
            try latestCalibration(of: station.name) == Int(station.identity.measuredPower)
            ? MeasuredPowerOrigin.calibration.label : "registered"
        do throws(LedgerError) {
            guard
                let row = try driver.rows(
                    "INSERT INTO attempts(station, chip, debugger, bench, template, template_sha256, image_sha256, started_at, outcome, verify_method, advertiser_address, power, power_source, run) VALUES (?, ?, ?, ?, ?, ?, ?, \(now), 'in-progress', ?, ?, ?, ?, ?) RETURNING \(attemptSelect)",
                    [
                        .text(station.name), .text(chip), .text(debugger), bench.map { .text($0) } ?? .null,
                        .text(template), .text(templateSHA256), .text(record.sha256), .text(verifyMethod),
                        record.advertiserAddress.map { .text($0) } ?? .null,
                        .integer(Int(station.identity.measuredPower)), .text(source), .text(run),
                    ], "recording the start of \(station.name)"
                ).first
            else {
                throw LedgerError(
                    operation: "recording the start of \(station.name)", message: "the new row cannot be read back",
                    kind: .database)
            }
            try retake(station.name)
            return (station, try Self.attempt(row))
        } catch  where error.kind == .invalidChipID {
            throw LedgerError(
                operation: error.operation,
                message: "chip id '\(chip)' cannot identify a chip (\(ChipID.refusal)); set the chip aside",
                kind: .invalidChipID)
        }
    }

    /// Records whether `station` has an attempt verified, in progress or interrupted in its
    /// `taken` (inside the caller's transaction): every change of an attempt's state calls it.
    func retake(_ station: String) throws(LedgerError) {
        try driver.rows(
            "UPDATE stations SET taken = CASE WHEN EXISTS (SELECT 1 FROM attempts WHERE station = ? AND outcome IN ('verified', 'in-progress', 'interrupted')) THEN 1 ELSE 0 END WHERE name = ?",
            [.text(station), .text(station)], "recording the state of '\(station)'")
    }

    /// Clears `taken` where no attempt verified, in progress or interrupted says it (a hand-made
    /// change; `ledger check` reports it), inside the caller's transaction; how many it cleared.
    /// Asked only when no station looks pending, so it costs one scan at a list's end.
    func repairTaken() throws(LedgerError) -> Int {
        try driver.rows(
            "UPDATE stations SET taken = 0 WHERE taken = 1 AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.station = stations.name AND a.outcome IN ('verified', 'in-progress', 'interrupted')) RETURNING name",
            [], "putting the stations' state right"
        ).count
    }

    /// `retake` for every station (a migration, a history copied in).
    package static let retakeAll =
        "UPDATE stations SET taken = 1 - taken WHERE taken <> CASE WHEN EXISTS (SELECT 1 FROM attempts a WHERE a.station = stations.name AND a.outcome IN ('verified', 'in-progress', 'interrupted')) THEN 1 ELSE 0 END"

    /// The power of a station's latest calibration, if any.
    package func latestCalibration(of station: String) throws(LedgerError) -> Int? {
        try driver.rows(
            "SELECT power FROM calibrations WHERE station = ? ORDER BY id DESC LIMIT 1", [.text(station)],
            "reading the calibration of '\(station)'"
        ).first?.first?.int
    }
}

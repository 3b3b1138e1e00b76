import BeaconPayload
import StructuredText
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
package final class LedgerCore: Sendable {
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
                        operation: "starting bench '\(visible: bench)'",
                        message:
                            "another process is running as bench '\(visible: bench)' on this ledger (an earlier ccbeacon, which holds the bench's lock); one process per bench name",
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
                            operation: "starting bench '\(visible: bench)'",
                            message:
                                "another process is running as bench '\(visible: bench)' on this ledger (\(other.described), its lease holds for \(left) s more unless renewed); one process per bench name",
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

    /// Every run, oldest first.
    package func runs() throws(LedgerError) -> [RunRecord] {
        try driver.reading("reading runs") { () throws(LedgerError) -> [RunRecord] in
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
        return try driver.inTransaction("claiming the next station") { () throws(LedgerError) -> (Station, Attempt)? in
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
                        SELECT name, uuid, major, minor, power, note FROM stations s
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
    }

    /// Supersedes the chip's verified attempt of `name` and starts a new one of this run on it,
    /// in one transaction: no moment in which the station is pending while its chip carries it.
    package func claimAgain(
        station name: String, chip: String, debugger: String, template: String, templateSHA256: String,
        verifyMethod: String, reason: String, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt) {
        try beginRun(exclusive: false)
        return try driver.inTransaction("burning \(name) again") { () throws(LedgerError) -> (Station, Attempt) in
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
                    "SELECT name, uuid, major, minor, power, note FROM stations WHERE name = ? \(dialect.forUpdate)",
                    [.text(name)], "burning \(name) again"
                ).first
            else {
                throw LedgerRefusal.notVerifiedThere(name, chip: chip)
            }
            return try start(
                try Self.station(row), run: run, chip: chip, debugger: debugger, template: template,
                templateSHA256: templateSHA256, verifyMethod: verifyMethod, image: image)
        }
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
                "SELECT name, uuid, major, minor, power, note FROM stations WHERE name = ?", [.text(attempt.station)],
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
                message: "chip id '\(visible: chip)' cannot identify a chip (\(ChipID.refusal)); set the chip aside",
                kind: .invalidChipID)
        }
    }

    /// Records whether `station` has an attempt verified, in progress or interrupted in its
    /// `taken` (inside the caller's transaction): every change of an attempt's state calls it.
    func retake(_ station: String) throws(LedgerError) {
        try driver.rows(
            "UPDATE stations SET taken = CASE WHEN EXISTS (SELECT 1 FROM attempts WHERE station = ? AND outcome IN ('verified', 'in-progress', 'interrupted')) THEN 1 ELSE 0 END WHERE name = ?",
            [.text(station), .text(station)], "recording the state of '\(visible: station)'")
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
            "reading the calibration of '\(visible: station)'"
        ).first?.first?.int
    }

    // MARK: - Outcomes

    /// Ends an attempt: one of this run's in progress, or one interrupted (nobody's until settled;
    /// it becomes this run's). One settled meanwhile keeps what it says and this outcome is
    /// refused; one that belongs to another run now (taken over after this run's lease ran out)
    /// is `Kind.leaseLost`. With a hook for the outcome, its hook run is recorded with it.
    package func finish(
        _ attemptID: Int, outcome: AttemptOutcome, reason: String?, readBack: String?, onAir: OnAirCheck?,
        debugLocked: Bool
    ) throws(LedgerError) {
        let operation = "recording an outcome"
        try beginRun(exclusive: false)
        try driver.inTransaction(operation) { () throws(LedgerError) in
            // Repeated after a lost COMMIT: the first try may have recorded it.
            if driver.isRepeating, let id = lease.runID,
                let row = try driver.rows(
                    "SELECT outcome, run FROM attempts WHERE id = ?", [.integer(attemptID)], operation
                ).first, row[0].string == outcome.rawValue, row[1].string == id
            {
                return
            }
            let run = try fence(operation)
            let changed = try driver.rows(
                "UPDATE attempts SET outcome = ?, reason = ?, read_back = ?, heard = ?, rssi_count = ?, rssi_median = ?, debug_locked = ?, finished_at = \(now), run = ? WHERE id = ? AND (outcome = 'interrupted' OR (outcome = 'in-progress' AND run = ?)) RETURNING station",
                Self.outcomeValues(outcome, reason, readBack, onAir, debugLocked) + [
                    .text(run), .integer(attemptID), .text(run),
                ], operation)
            guard changed.count == 1, let station = changed[0][0].string else {
                throw try refusal(attemptID, outcome: outcome, run: run)
            }
            try retake(station)
            try recordHookRun(attemptID, outcome: outcome)
        }
    }

    /// Records an outcome a run of this bench kept in its journal (`JournalingLedger`): the
    /// attempt must still be open and still the journaling run's (a journal of a build before runs
    /// names none: then only an attempt of no run, recorded before ledgers kept runs). No lease is
    /// asked for: the journaling run burned it while its lease held.
    package func recordJournaled(
        _ attemptID: Int, run: String?, outcome: AttemptOutcome, reason: String?, readBack: String?,
        onAir: OnAirCheck?, debugLocked: Bool
    ) throws(LedgerError) {
        let operation = "recording an outcome from the journal"
        try driver.inTransaction(operation) { () throws(LedgerError) in
            let changed = try driver.rows(
                "UPDATE attempts SET outcome = ?, reason = ?, read_back = ?, heard = ?, rssi_count = ?, rssi_median = ?, debug_locked = ?, finished_at = \(now) WHERE id = ? AND outcome IN ('in-progress', 'interrupted') AND coalesce(run, '') = coalesce(?, '') RETURNING station",
                Self.outcomeValues(outcome, reason, readBack, onAir, debugLocked) + [
                    .integer(attemptID), run.map { .text($0) } ?? .null,
                ], operation)
            guard changed.count == 1 else {
                let now = try driver.rows(
                    "SELECT outcome FROM attempts WHERE id = ?", [.integer(attemptID)], operation
                ).first?.first?.string
                if driver.isRepeating, now == outcome.rawValue { return }
                throw LedgerRefusal.settled(attemptID, as: now, outcome: outcome)
            }
            if let station = changed[0][0].string { try retake(station) }
            try recordHookRun(attemptID, outcome: outcome)
        }
    }

    static func outcomeValues(
        _ outcome: AttemptOutcome, _ reason: String?, _ readBack: String?, _ onAir: OnAirCheck?, _ debugLocked: Bool
    ) -> [SQLValue] {
        [
            .text(outcome.rawValue), reason.map { .text($0) } ?? .null, readBack.map { .text($0) } ?? .null,
            onAir.map { .integer($0.heard ? 1 : 0) } ?? .null, onAir.map { .integer($0.rssiCount) } ?? .null,
            onAir?.rssiMedian.map { .integer($0) } ?? .null, debugLocked ? .integer(1) : .null,
        ]
    }

    func recordHookRun(_ attemptID: Int, outcome: AttemptOutcome) throws(LedgerError) {
        guard hookOutcomes.contains(outcome) else { return }
        try driver.rows(
            "INSERT INTO hook_runs(event_id, attempt, hook, bench, created_at) VALUES (\(dialect.randomID), ?, ?, ?, \(now))",
            [.integer(attemptID), .text(outcome.rawValue), bench.map { .text($0) } ?? .null],
            "recording the hook run of an outcome")
    }

    /// Why an outcome for `attemptID` could not be recorded by run `run`.
    func refusal(_ attemptID: Int, outcome: AttemptOutcome, run: String) throws(LedgerError) -> LedgerError {
        let row = try driver.rows(
            "SELECT outcome, run FROM attempts WHERE id = ?", [.integer(attemptID)], "recording an outcome"
        ).first
        if let row, row[0].string == AttemptOutcome.inProgress.rawValue, row[1].string != run {
            return .leaseLost(
                "recording the outcome of attempt \(attemptID)", "the attempt belongs to another run now")
        }
        return LedgerRefusal.settled(attemptID, as: row?[0].string, outcome: outcome)
    }

    // MARK: - Recovery

    /// Marks as interrupted the attempts in progress of every run that is over (see the type's
    /// rule), ending those runs; returns the attempts. Attempts recorded before ledgers kept runs
    /// are recovered by a run of their own bench (or by a sole runner).
    package func recoverInterrupted() throws(LedgerError) -> [Attempt] {
        try beginRun(exclusive: false)
        let operation = "recovering interrupted attempts"
        return try driver.inTransaction(operation) { () throws(LedgerError) -> [Attempt] in
            let me = try fence(operation)
            // Live runs are never locked (a paused one holding its row would stop this run, and
            // through it every other): only a run that looks over is locked — skipped when its
            // owner is inside a change right now — and judged again under the lock.
            let open = try driver.rows(
                "SELECT \(Self.runColumns), lease_until - \(epoch) FROM runs WHERE ended_at IS NULL AND id <> ?",
                [.text(me)], operation)
            for row in open where try overBecause(row) != nil {
                guard
                    let locked = try driver.rows(
                        "SELECT \(Self.runColumns), lease_until - \(epoch) FROM runs WHERE id = ? AND ended_at IS NULL \(dialect.forUpdateSkipLocked)",
                        [row[0]], operation
                    ).first, let because = try overBecause(locked)
                else { continue }
                try end(try Self.run(locked).id, because: because)
            }
            let interrupt =
                "UPDATE attempts SET outcome = 'interrupted', finished_at = \(now), reason = 'the run stopped while burning' WHERE outcome = 'in-progress'"
            var recovered = try driver.rows(
                "\(interrupt) AND (? = 1 OR run IN (SELECT id FROM runs WHERE ended_at IS NOT NULL)) RETURNING \(attemptSelect)",
                [.integer(soleRunner ? 1 : 0)], operation)
            // Attempts of an earlier ccbeacon (no run): only once no process of theirs runs — its
            // bench's session lock, which those builds held while they ran, is free.
            if let free = dialect.legacyBenchFree {
                let benches = try driver.rows(
                    "SELECT DISTINCT bench FROM attempts WHERE outcome = 'in-progress' AND run IS NULL", [], operation)
                for row in benches where try driver.rows(free, [row[0]], operation).first?.first?.int == 1 {
                    recovered += try driver.rows(
                        "\(interrupt) AND run IS NULL AND bench = ? RETURNING \(attemptSelect)", [row[0]], operation)
                }
            }
            // What an earlier ccbeacon wrote into a ledger migrated under it lacks each station's
            // state: put right here, once per run.
            try driver.rows(Self.retakeAll, [], "recording each station's state")
            return try recovered.map(Self.attempt).sorted { $0.id < $1.id }
        }
    }

    /// Why the run of `row` (`runColumns` and its lease's seconds left) is over, or `nil` while it
    /// may still run.
    func overBecause(_ row: [SQLValue]) throws(LedgerError) -> String? {
        let other = try Self.run(row)
        if (row[10].double ?? 0) <= 0 { return "its lease ran out" }
        if identity.isGone(other) { return "its process ended (found by a run of the same machine)" }
        if soleRunner { return "found over by the next run on this ledger file (whose one-run lock it held)" }
        return nil
    }

    /// Releases a held station: its interrupted attempt becomes failed and the station pending.
    package func release(station: String) throws(LedgerError) {
        try beginRun(exclusive: false)
        try driver.inTransaction("releasing a held station") { () throws(LedgerError) in
            try fence("releasing a held station")
            try driver.rows(
                "UPDATE attempts SET outcome = 'failed', reason = 'released after an interruption' WHERE station = ? AND outcome = 'interrupted'",
                [.text(station)], "releasing \(station)")
            try retake(station)
        }
    }

    /// Marks the verified attempt of a chip superseded, saying why.
    package func supersede(chip: String, reason: String) throws(LedgerError) {
        try beginRun(exclusive: false)
        try driver.inTransaction("superseding a chip's station") { () throws(LedgerError) in
            try fence("superseding a chip's station")
            let superseded = try driver.rows(
                "UPDATE attempts SET outcome = 'superseded', reason = ? WHERE chip = ? AND outcome = 'verified' RETURNING station",
                [.text(reason), .text(chip)], "superseding a chip's station")
            for row in superseded { if let station = row[0].string { try retake(station) } }
        }
    }

    // MARK: - Reading

    /// The station a chip carries (verified), if any.
    package func verifiedStation(forChip chip: String) throws(LedgerError) -> String? {
        try driver.reading("looking up a chip") { () throws(LedgerError) -> String? in
            try driver.rows(
                "SELECT station FROM attempts WHERE chip = ? AND outcome = 'verified'", [.text(chip)],
                "looking up a chip"
            ).first?.first?.string
        }
    }

    /// The interrupted attempt whose chip this is, if any.
    package func interruptedAttempt(forChip chip: String) throws(LedgerError) -> Attempt? {
        try driver.reading("looking up a chip") { () throws(LedgerError) -> Attempt? in
            try driver.rows(
                "SELECT \(attemptSelect) FROM attempts WHERE chip = ? AND outcome = 'interrupted' ORDER BY id LIMIT 1",
                [.text(chip)], "looking up a chip"
            ).map(Self.attempt).first
        }
    }

    /// Whether a station not in `excluding` is pending (`taken` 0, by its index) or held (an
    /// interrupted attempt, by its index).
    package func hasWork(excluding: Set<String>) throws(LedgerError) -> Bool {
        let names = dialect.listParameter(excluding.sorted())
        let found = try driver.reading("looking for stations left") { () throws(LedgerError) -> Bool in
            try !driver.rows(
                """
                SELECT 1 FROM stations WHERE taken = 0 AND \(dialect.notInList("name"))
                UNION ALL SELECT 1 FROM attempts WHERE outcome = 'interrupted' AND \(dialect.notInList("station"))
                LIMIT 1
                """, [names, names], "looking for stations left"
            ).isEmpty
        }
        // Before a debugger stops for want of work: `taken` left set by a hand-made change is put
        // right (the station is pending after all).
        if found { return true }
        return try driver.inTransaction("looking for stations left") { () throws(LedgerError) -> Bool in
            try repairTaken() > 0
        }
    }

    /// One station, if the ledger has one of that name.
    package func station(named name: String) throws(LedgerError) -> Station? {
        try driver.reading("reading a station") { () throws(LedgerError) -> Station? in
            try driver.rows(
                "SELECT name, uuid, major, minor, power, note FROM stations WHERE name = ?", [.text(name)],
                "reading station '\(visible: name)'"
            ).first.map(Self.station)
        }
    }

    /// Whether any chip is recorded as verified and debug-locked.
    package func hasLockedChips() throws(LedgerError) -> Bool {
        try driver.reading("looking for locked chips") { () throws(LedgerError) -> Bool in
            try !driver.rows(
                "SELECT 1 FROM attempts WHERE outcome = 'verified' AND debug_locked = ? LIMIT 1", [.integer(1)],
                "looking for locked chips"
            ).isEmpty
        }
    }

    /// Adds the list's stations in one transaction; a station already known must keep its
    /// identity (a calibrated one keeps its calibrated power when the list gives none of its own).
    /// `oneList` (a shared pool): a ledger that holds stations takes only the list it was
    /// registered with (`LedgerRefusal.otherList`, naming `ledgerName`); registrations run one
    /// after the other where the dialect orders them.
    package func register(_ stations: [Station], oneList: Bool, ledgerName: String) throws(LedgerError) {
        try driver.inTransaction("registering the station list") { () throws(LedgerError) in
            // Benches starting with one list register it one after the other, each seeing what
            // the one before added.
            if let serialize = dialect.serializeRuns { try driver.rows(serialize, [], "locking the station list") }
            let count =
                try driver.rows("SELECT count(*) FROM stations", [], "counting stations").first?.first?.int ?? 0
            if oneList, count > 0 { try attach(stations, ledgerName: ledgerName) }
            var mismatches: [String] = []
            for (index, station) in stations.enumerated() {
                let identity = station.identity
                if let row = try driver.rows(
                    "SELECT uuid, major, minor, power FROM stations WHERE name = ?", [.text(station.name)],
                    "reading station '\(visible: station.name)'"
                ).first {
                    guard
                        row[0].string == identity.uuid.uuidString && row[1].int == Int(identity.major)
                            && row[2].int == Int(identity.minor)
                    else { throw LedgerRefusal.otherIdentity(station.name) }
                    if let recorded = row[3].int, recorded != Int(identity.measuredPower) {
                        // A calibrated station keeps its calibrated power when the list gives it
                        // none of its own (the board's figure stands in for it).
                        let listGivesPower = station.powerOrigin == .list || station.powerOrigin == .explicit
                        if !listGivesPower, try latestCalibration(of: station.name) == recorded { continue }
                        // Since measured power follows the TX power, a list without power values
                        // registered before may now come out with another: every such station is
                        // named at once.
                        mismatches.append(
                            "\(station.name) (ledger \(recorded) dBm, list \(identity.measuredPower) dBm)")
                    }
                    continue
                }
                do throws(LedgerError) {
                    try driver.rows(
                        "INSERT INTO stations(position, name, uuid, major, minor, power, note) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [
                            .integer(count + index), .text(station.name), .text(identity.uuid.uuidString),
                            .integer(Int(identity.major)), .integer(Int(identity.minor)),
                            .integer(Int(identity.measuredPower)), station.note.map { .text($0) } ?? .null,
                        ], "registering station '\(visible: station.name)'")
                } catch  where error.isConstraint {
                    throw LedgerRefusal.identityTaken(station.name, identity)
                }
            }
            if !mismatches.isEmpty { throw LedgerRefusal.otherPowers(mismatches) }
        }
    }

    /// A pool registers one list: a list attaches only when it is the pool's (the same names with
    /// the same identities); otherwise every difference is named and nothing is registered.
    func attach(_ stations: [Station], ledgerName: String) throws(LedgerError) {
        let pool = try driver.rows(
            "SELECT name, uuid, major, minor FROM stations ORDER BY position", [], "reading the pool's stations")
        var known: [String: [SQLValue]] = [:]
        for row in pool { if let name = row[0].string { known[name] = Array(row[1...]) } }
        let listed = Set(stations.map(\.name))
        var onlyInList: [String] = []
        var otherIdentity: [String] = []
        for station in stations {
            guard let identity = known[station.name] else {
                onlyInList.append(station.name)
                continue
            }
            let wanted = station.identity
            if identity != [.text(wanted.uuid.uuidString), .integer(Int(wanted.major)), .integer(Int(wanted.minor))] {
                let shown = identity.map { $0.string ?? $0.int.map(String.init) ?? "?" }
                otherIdentity.append(
                    "\(station.name) (pool \(shown.joined(separator: "/")), list \(wanted.uuid.uuidString)/\(wanted.major)/\(wanted.minor))"
                )
            }
        }
        let onlyInPool = pool.compactMap { $0[0].string }.filter { !listed.contains($0) }
        guard onlyInList.isEmpty, onlyInPool.isEmpty, otherIdentity.isEmpty else {
            throw LedgerRefusal.otherList(
                onlyInList: onlyInList, onlyInPool: onlyInPool, otherIdentity: otherIdentity, pool: ledgerName)
        }
    }

    /// Every station with its state, in list order, read in one snapshot where the database gives
    /// one.
    package func states() throws(LedgerError) -> [StationState] {
        try driver.reading("reading the ledger") { () throws(LedgerError) -> [StationState] in
            if let snapshot = dialect.snapshot { try driver.rows(snapshot, [], "reading the ledger") }
            let stations = try driver.rows(
                "SELECT name, uuid, major, minor, power, note FROM stations ORDER BY position", [], "reading stations"
            ).map(Self.station)
            return StationState.states(of: stations, attempts: try attempts())
        }
    }

    /// Records a calibration and makes its power the station's, in one transaction; a station the
    /// ledger does not know is refused.
    package func recordCalibration(_ calibration: CalibrationRecord) throws(LedgerError) {
        let operation = "recording a calibration of '\(visible: calibration.station)'"
        try driver.inTransaction(operation) { () throws(LedgerError) in
            let updated = try driver.rows(
                "UPDATE stations SET power = ? WHERE name = ? RETURNING name",
                [.integer(calibration.power), .text(calibration.station)], operation)
            guard updated.count == 1 else { throw LedgerRefusal.unknownStation(calibrating: calibration.station) }
            try driver.rows(
                "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES (?, \(now), ?, ?, ?, ?)",
                [
                    .text(calibration.station), .integer(calibration.power), .integer(calibration.samples),
                    .integer(calibration.used), .text(calibration.source),
                ], operation)
        }
    }

    /// Every calibration, oldest first (none when the ledger has no calibrations table: `present`
    /// false, an earlier schema read without migrating).
    package func calibrations(present: Bool = true) throws(LedgerError) -> [CalibrationRecord] {
        guard present else { return [] }
        return try driver.reading("reading calibrations") { () throws(LedgerError) -> [CalibrationRecord] in
            try driver.rows(
                "SELECT station, recorded_at, power, samples, used, source FROM calibrations ORDER BY id", [],
                "reading calibrations"
            ).map { row throws(LedgerError) -> CalibrationRecord in
                guard let station = row[0].string, let at = row[1].string, let power = row[2].int,
                    let samples = row[3].int, let used = row[4].int, let source = row[5].string
                else { throw Self.unreadable("a calibration has values that are not a calibration's") }
                return CalibrationRecord(
                    station: station, recordedAt: at, power: power, samples: samples, used: used, source: source)
            }
        }
    }

    /// Every attempt, oldest first.
    package func attempts() throws(LedgerError) -> [Attempt] {
        try driver.reading("reading attempts") { () throws(LedgerError) -> [Attempt] in
            try driver.rows("SELECT \(attemptSelect) FROM attempts ORDER BY id", [], "reading attempts")
                .map(Self.attempt)
        }
    }

    // MARK: - Rows

    /// A row that cannot be read as what it should be: the ledger is damaged.
    package static func unreadable(_ what: String) -> LedgerError {
        LedgerError(
            operation: "reading the ledger", message: "a record cannot be read: \(what)",
            kind: .refused(.damaged(report: [what])))
    }

    /// A value from the database in a report: text quoted with control characters escaped (a
    /// damaged or tampered ledger can hold anything), numbers as they are.
    package static func text(_ value: SQLValue) -> String {
        switch value {
        case .integer(let number): String(number)
        case .real(let number): String(number)
        case .text(let text): text.debugDescription
        case .null: "NULL"
        }
    }

    /// A station row (name, uuid, major, minor, power, note); a row whose values cannot be a
    /// station (a damaged or hand-edited ledger: a major of 70000, a power of 200, no UUID) is an
    /// error naming it — never a crash, and never a station silently left out.
    package static func station(_ row: [SQLValue]) throws(LedgerError) -> Station {
        let name = row[0].string
        guard let name, let uuidText = row[1].string, let uuid = try? IdentityParser.uuid(uuidText),
            let major = row[2].int.flatMap(UInt16.init(exactly:)),
            let minor = row[3].int.flatMap(UInt16.init(exactly:)),
            let power = row[4].int.flatMap(Int8.init(exactly:))
        else {
            throw unreadable(
                "station \(name.map(\.debugDescription) ?? "without a name") has \(row.prefix(5).map(text).joined(separator: ", ")), not a name, UUID, major and minor 0…65535 and power −128…127"
            )
        }
        return Station(
            name: name, identity: IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: power),
            note: row[5].string)
    }

    /// An attempt row in `attemptColumns`' order; one that cannot be an attempt is an error
    /// naming it.
    package static func attempt(_ row: [SQLValue]) throws(LedgerError) -> Attempt {
        guard row.count == attemptColumns.count, let id = row[0].int, let station = row[1].string,
            let chip = row[2].string, let debugger = row[3].string, let template = row[4].string,
            let templateSHA = row[5].string, let imageSHA = row[6].string, let started = row[7].string,
            let outcome = row[9].string.flatMap(AttemptOutcome.init), let method = row[11].string
        else { throw unreadable("attempt \(row.first.map(text) ?? "?") has values that are not an attempt's") }
        return Attempt(
            id: id, station: station, chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA,
            imageSHA256: imageSHA, startedAt: started, finishedAt: row[8].string, outcome: outcome,
            reason: row[10].string, verifyMethod: method, advertiserAddress: row[12].string, readBack: row[13].string,
            power: row[14].int,
            onAir: row[15].int.map { OnAirCheck(heard: $0 == 1, rssiCount: row[16].int ?? 0, rssiMedian: row[17].int) },
            powerSource: row[18].string, bench: row[19].string, debugLocked: row[20].int == 1, run: row[21].string)
    }

    /// A run row in `runColumns`' order.
    package static func run(_ row: [SQLValue]) throws(LedgerError) -> RunRecord {
        guard row.count >= 10, let id = row[0].string, let host = row[2].string, let process = row[3].int,
            let machine = row[4].string, let started = row[5].string, let seconds = row[6].double,
            let until = row[7].double
        else { throw unreadable("run \(row.first.map(text) ?? "?") has values that are not a run's") }
        return RunRecord(
            id: id, bench: row[1].string, host: host, process: process, machine: machine, startedAt: started,
            leaseSeconds: seconds, leaseUntil: until, endedAt: row[8].string, endedBecause: row[9].string)
    }
}

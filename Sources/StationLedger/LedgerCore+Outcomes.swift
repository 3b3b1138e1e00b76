import BeaconPayload
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension LedgerCore {
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
    /// A file ledger's run holds the one-run lock: no other run can have kept anything. On a pool,
    /// the run that was burning it may have put the attempt's outcome into its bench's journal
    /// (its server away), which only a run of that bench from that folder on that machine records.
    /// So a station is released only by a run of the same bench, and only once the burning run is
    /// settled (`settleJournals`: a run found its token beside its own journal and recorded that
    /// journal) or recorded no journal (an earlier ccbeacon's run); `givingUpJournals`: also
    /// unsettled, unless a file is at that run's journal path here (it may be that journal).
    @discardableResult
    package func release(station: String, givingUpJournals: Bool) throws(LedgerError) -> ReleaseResult {
        try beginRun(exclusive: false)
        let operation = "releasing \(station)"
        return try driver.inTransaction(operation) { () throws(LedgerError) -> ReleaseResult in
            try fence(operation)
            let journals = tables.contains(.runJournals)
            let held = try driver.rows(
                journals
                    ? "SELECT a.id, a.bench, j.settled, j.path, r.host FROM attempts AS a LEFT JOIN run_journals AS j ON j.run = a.run LEFT JOIN runs AS r ON r.id = a.run WHERE a.station = ? AND a.outcome = 'interrupted' ORDER BY a.id"
                    : "SELECT id, bench, NULL, NULL, NULL FROM attempts WHERE station = ? AND outcome = 'interrupted' ORDER BY id",
                [.text(station)], operation)
            var kept: ReleaseResult?
            for row in held {
                guard let id = row[0].int else { continue }
                let site = row[3].string.map { JournalSite(host: row[4].string ?? "?", path: $0) }
                if let keeper = heldBy(bench: row[1].string, settled: row[2].int == 1, site, givingUpJournals) {
                    kept = kept ?? .kept(bench: keeper, journal: site)
                    continue
                }
                try driver.rows(
                    "UPDATE attempts SET outcome = 'failed', reason = 'released after an interruption' WHERE id = ? AND outcome = 'interrupted' RETURNING id",
                    [.integer(id)], operation)
            }
            try retake(station)
            return kept ?? .released
        }
    }

    /// The bench whose journal may hold the outcome of an interrupted attempt of bench `bench`,
    /// whose run kept its journal at `site` (`settled` or not); `nil` when this run may release it.
    private func heldBy(bench attemptBench: String?, settled: Bool, _ site: JournalSite?, _ givingUp: Bool)
        -> String?
    {
        guard !soleRunner, let bench, let attemptBench else { return nil }
        guard attemptBench == bench else { return attemptBench }
        guard let site, !settled else { return nil }
        return givingUp && Self.isAbsent(site.path) ? nil : bench
    }

    /// Whether nothing is at `path` for certain (a folder it needs missing included): a path
    /// that cannot be looked at may hold a journal.
    static func isAbsent(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) != 0 && (errno == ENOENT || errno == ENOTDIR)
    }

    /// Marks the run of this bench that left `placeToken` in the very file `place` names settled.
    package func settleJournals(placeToken: String, place: String) throws(LedgerError) {
        try changingPlaces("settling the run whose journal this run recorded") { (bench) throws(LedgerError) in
            try driver.rows(
                "UPDATE run_journals SET settled = 1 WHERE token = ? AND place = ? AND run IN (SELECT id FROM runs WHERE bench = ?) RETURNING run",
                [.text(placeToken), .text(place), .text(bench)], "settling the run whose journal this run recorded")
        }
    }

    /// Records where this run left its place token.
    package func recordPlace(_ place: String) throws(LedgerError) {
        guard let run = lease.runID else { return }
        try changingPlaces("recording where this run left its place token") { (_) throws(LedgerError) in
            try driver.rows(
                "UPDATE run_journals SET place = ? WHERE run = ? RETURNING run", [.text(place), .text(run)],
                "recording where this run left its place token")
        }
    }

    /// Runs `change` (given this run's bench) in a transaction fenced by this run's lease; nothing
    /// on a ledger without journal places or for a run without a bench.
    private func changingPlaces(_ operation: String, _ change: (String) throws(LedgerError) -> Void)
        throws(LedgerError)
    {
        guard tables.contains(.runJournals), let bench else { return }
        try beginRun(exclusive: false)
        try driver.inTransaction(operation) { () throws(LedgerError) in
            try fence(operation)
            try change(bench)
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
}

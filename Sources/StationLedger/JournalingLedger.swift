import Storage
import Synchronization

/// A shared ledger with the bench's outcome journal beside it: every call goes to the ledger,
/// and an outcome the ledger cannot take because its server stayed away (the connection lost for
/// longer than the ledger waits) goes into the journal instead — durably, before the error that
/// stops the run is thrown. Claims are never journaled: a station not claimed on the server is
/// not burned, so a bench whose server is away finishes the chip in hand and starts no other.
public final class JournalingLedger: ForwardingLedger, Sendable {
    /// The ledger on the server.
    public let base: any ProvisioningLedger & Sendable
    /// The bench's journal.
    public let journal: OutcomeJournal
    /// The ledger's identity and the bench, written on every journal line and checked on replay.
    public let ledgerID: String
    /// The bench.
    public let bench: String
    let kept = Mutex<[OutcomeJournal.Entry]>([])
    let started = Mutex<[Int: (station: String, chip: String)]>([:])
    /// `base`: every call this ledger does not change goes there.
    public var forwardee: any ProvisioningLedger { base }

    /// `base` (the ledger `ledgerID`, written by bench `bench`) with `journal` for the outcomes
    /// it cannot take.
    public init(_ base: any ProvisioningLedger & Sendable, journal: OutcomeJournal, ledgerID: String, bench: String) {
        self.base = base
        self.journal = journal
        self.ledgerID = ledgerID
        self.bench = bench
    }

    /// The outcomes this process wrote into the journal.
    public var journaled: [OutcomeJournal.Entry] { kept.withLock { $0 } }

    /// What replaying the journal did: the entries recorded now, and those the ledger already had.
    public struct Replay: Sendable, Equatable {
        /// Recorded on the ledger by this replay.
        public var recorded: [OutcomeJournal.Entry] = []
        /// Already on the ledger with the same outcome (a replay killed before it removed the
        /// journal).
        public var alreadyRecorded: [OutcomeJournal.Entry] = []
    }

    /// Records every outcome of the journal on the ledger, oldest first, then removes the
    /// journal. Run once the list is known to be the pool's, before the bench recovers its
    /// interrupted attempts: an attempt journaled is still in progress on the server. Only a
    /// journal of this ledger and this bench is replayed, and only onto the attempt it names with
    /// its station, chip and bench; anything else — another ledger's journal, an attempt the
    /// ledger settled otherwise meanwhile — is a conflict a person must look at: the replay stops
    /// there, keeping the journal.
    public func replay() throws(LedgerError) -> Replay {
        var result = Replay()
        let entries = try journal.entries()
        guard !entries.isEmpty else {
            // An empty journal (or one holding only a line cut short) has nothing to give.
            if journal.exists { try journal.remove() }
            return result
        }
        let attempts = try base.attempts()
        for entry in entries {
            let recorded = attempts.first { $0.id == entry.attempt }
            guard entry.ledger == ledgerID, entry.bench == bench, let recorded, recorded.station == entry.station,
                recorded.chip == entry.chip, recorded.bench == entry.bench
            else {
                throw LedgerError(
                    operation: "recording the journal \(journal.path)",
                    message:
                        "its outcome of attempt \(entry.attempt) ('\(entry.station)' on chip \(entry.chip), bench '\(entry.bench)') is not this ledger's: "
                        + (entry.ledger != ledgerID
                            ? "the journal was written for another ledger (id \(entry.ledger), this one is \(ledgerID))"
                            : entry.bench != bench
                                ? "it was written by bench '\(entry.bench)', this is '\(bench)'"
                                : "the ledger's attempt \(entry.attempt) is \(recorded.map { "'\($0.station)' on chip \($0.chip), bench '\($0.bench ?? "?")'" } ?? "not there")")
                        + "; the journal is kept: run this bench against the ledger it was written for",
                    kind: .constraint)
            }
            do throws(LedgerError) {
                try base.recordJournaled(
                    entry.attempt, run: entry.run, outcome: entry.outcome, reason: entry.reason,
                    readBack: entry.readBack, onAir: entry.onAir, debugLocked: entry.debugLocked)
                result.recorded.append(entry)
            } catch  where error.isConstraint {
                let now = try base.attempts().first { $0.id == entry.attempt }
                guard let now, now.outcome == entry.outcome, now.station == entry.station, now.chip == entry.chip
                else {
                    throw LedgerError(
                        operation: "recording the journal \(journal.path)",
                        message:
                            "attempt \(entry.attempt) ('\(entry.station)' on chip \(entry.chip)) was burned \(entry.outcome.rawValue), but the ledger now records it \(now.map { "as \($0.outcome.rawValue) ('\($0.station)' on \($0.chip))" } ?? "not at all") — settled otherwise while the outcome waited (released with --release-interrupted, or another process ran as this bench?); the journal is kept: check chip \(entry.chip), then remove its line from the journal",
                        kind: .constraint)
                }
                result.alreadyRecorded.append(entry)
            }
            // Recorded now or before: the run that journaled it had a hook for it, so its hook run
            // is recorded whatever this run's hooks are (delivered by a run of this bench that has
            // the hook).
            if entry.hooked { try base.ensureHookRun(attempt: entry.attempt, hook: entry.outcome) }
        }
        try journal.remove()
        return result
    }

    /// After `replay`: the run that left its token beside this journal (in this very file) is
    /// settled (`settleJournals`) — whatever it kept here is recorded now, so its held stations
    /// may be released — and this run's token takes its place (where it is recorded,
    /// `recordPlace`), for the next run from this folder to settle this one. The bench's lock is
    /// held since the run opened the ledger, so no other process has touched the token meanwhile.
    public func settlePlace() throws(LedgerError) {
        if let found = journal.placeToken() {
            try base.settleJournals(placeToken: found.token, place: found.identity)
        }
        if let token = journal.runToken { try base.recordPlace(try journal.leavePlaceToken(token)) }
    }

    // MARK: - ProvisioningLedger

    /// Ends an attempt on the ledger, or — its server away for longer than the ledger waits —
    /// in the journal, throwing the error that stops the run.
    public func finish(
        _ attemptID: Int, outcome: AttemptOutcome, reason: String?, readBack: String?, onAir: OnAirCheck?,
        debugLocked: Bool
    ) throws(LedgerError) {
        do throws(LedgerError) {
            try base.finish(
                attemptID, outcome: outcome, reason: reason, readBack: readBack, onAir: onAir, debugLocked: debugLocked)
            _ = started.withLock { $0.removeValue(forKey: attemptID) }
        } catch  where error.isConnectionLost {
            // The server away: the outcome cannot be recorded now. It is kept only while this
            // run's lease holds — until then no other run can have taken the attempt over; after
            // it, the run must not stand by its burn (it erases the chip instead).
            if let lost = base.lease.lostBecause {
                throw .leaseLost(
                    "recording the outcome of attempt \(attemptID)",
                    "the server did not answer (\(error.message)) and this run's lease is over: \(lost)")
            }
            let (station, chip) = started.withLock { $0[attemptID] } ?? ("?", "?")
            let entry = OutcomeJournal.Entry(
                ledger: ledgerID, bench: bench, attempt: attemptID, station: station, chip: chip, outcome: outcome,
                reason: reason, readBack: readBack, onAir: onAir, debugLocked: debugLocked,
                hooked: base.hookOutcomes.contains(outcome), run: base.lease.runID)
            do { try journal.append(entry) } catch let unwritten {
                // Recorded nowhere: the attempt stays in progress on the server (its station held
                // until the chip is attached again), and the person holding the chip must know. No
                // later run may settle this one (its token found, its journal "recorded"): the
                // token goes, so only --journal-lost releases the station.
                let held =
                    journal.withdrawPlaceToken().map {
                        "and this run's token in \(journal.placePath) could not be taken away (\($0)): remove that file before this bench runs again, or a run of it from this folder would let --release-interrupted burn '\(station)' on another chip"
                    } ?? "'\(station)' stays held until then, or until --release-interrupted --journal-lost"
                var lost = LedgerError(
                    operation: "recording the outcome of '\(station)' on chip \(chip)",
                    message:
                        "\(error.message), and the journal could not be written either (\(unwritten.description)): the outcome (\(outcome.rawValue)) is recorded nowhere; chip \(chip) \(outcome == .verified ? "carries" : "may carry") '\(station)': set it aside and attach it to a bench later (its flash is checked and recorded), or erase it (\(held))",
                    kind: .database)
                lost.code = error.isConnectionLost ? error.code : "08006"
                throw lost
            }
            kept.withLock { $0.append(entry) }
            var stopped = LedgerError(
                operation: "recording the outcome of '\(station)' on chip \(chip)",
                message:
                    "\(error.message); the outcome (\(outcome.rawValue)) is kept in the journal \(journal.currentPath), and the next run of this bench records it on the server before anything else",
                kind: .database)
            stopped.code = error.isConnectionLost ? error.code : "08006"
            throw stopped
        }
    }

    /// The server ledger's, remembered for a journal line.
    public func interruptedAttempt(forChip chip: String) throws(LedgerError) -> Attempt? {
        let attempt = try base.interruptedAttempt(forChip: chip)
        if let attempt { remember(attempt) }
        return attempt
    }

    /// The server ledger's, remembered for a journal line.
    public func claimNextStation(
        chip: String, debugger: String, template: String, templateSHA256: String, verifyMethod: String,
        skipping: Set<String>, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt)? {
        let claimed = try base.claimNextStation(
            chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA256,
            verifyMethod: verifyMethod, skipping: skipping, image: image)
        if let claimed { remember(claimed.1) }
        return claimed
    }

    /// The server ledger's, remembered for a journal line.
    public func claimAgain(
        station: String, chip: String, debugger: String, template: String, templateSHA256: String,
        verifyMethod: String, reason: String, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt) {
        let claimed = try base.claimAgain(
            station: station, chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA256,
            verifyMethod: verifyMethod, reason: reason, image: image)
        remember(claimed.1)
        return claimed
    }

    /// The station and chip of an attempt this run may finish, for its journal line.
    func remember(_ attempt: Attempt) {
        started.withLock { $0[attempt.id] = (attempt.station, attempt.chip) }
    }
}

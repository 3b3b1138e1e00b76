/// A ledger in an SQL database whose contract is the ledger core's: the SQLite file and the
/// PostgreSQL pool. Every `ProvisioningLedger` requirement is answered here once, by the core;
/// what differs between a file and a pool (one list or several, whether a bench name is held, the
/// tables an earlier schema lacks) is the core's to know.
public protocol SQLLedger: ProvisioningLedger {
    /// The core this ledger runs on.
    var sqlCore: SQLLedgerCore { get }
}

/// The core of an `SQLLedger` (its statements, runs and leases), as the protocol holds it.
public struct SQLLedgerCore: Sendable {
    /// The contract.
    package let core: LedgerCore

    /// Wraps `core`.
    package init(_ core: LedgerCore) { self.core = core }
}

extension SQLLedger {
    /// The core (named apart from the ledgers' own `core`).
    var contract: LedgerCore { sqlCore.core }

    /// Adds the list's stations; a known station must keep its identity; a pool takes only the
    /// list it was registered with, a file may hold several lists (`LedgerCore.register`).
    public func register(_ stations: [Station]) throws(LedgerError) {
        try contract.register(stations, oneList: !contract.soleRunner, ledgerName: contract.name)
    }

    /// Marks as interrupted the attempts in progress of every run that is over; on a pool, other
    /// runs' attempts are live and left alone (`LedgerCore.recoverInterrupted`).
    public func recoverInterrupted() throws(LedgerError) -> [Attempt] { try contract.recoverInterrupted() }

    /// The station a chip carries (verified), if any.
    public func verifiedStation(forChip chip: String) throws(LedgerError) -> String? {
        try contract.verifiedStation(forChip: chip)
    }

    /// The interrupted attempt whose chip this is, if any (whichever bench it was interrupted on).
    public func interruptedAttempt(forChip chip: String) throws(LedgerError) -> Attempt? {
        try contract.interruptedAttempt(forChip: chip)
    }

    /// Claims the first pending station in list order that no other run is claiming
    /// (`LedgerCore.claimNextStation`).
    public func claimNextStation(
        chip: String, debugger: String, template: String, templateSHA256: String, verifyMethod: String,
        skipping: Set<String>, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt)? {
        try contract.claimNextStation(
            chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA256,
            verifyMethod: verifyMethod, skipping: skipping, image: image)
    }

    /// Burns a station again on the chip that carries it (`LedgerCore.claimAgain`).
    public func claimAgain(
        station name: String, chip: String, debugger: String, template: String, templateSHA256: String,
        verifyMethod: String, reason: String, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt) {
        try contract.claimAgain(
            station: name, chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA256,
            verifyMethod: verifyMethod, reason: reason, image: image)
    }

    /// Ends an attempt, fenced by this run's lease (`LedgerCore.finish`).
    public func finish(
        _ attemptID: Int, outcome: AttemptOutcome, reason: String?, readBack: String?, onAir: OnAirCheck?,
        debugLocked: Bool
    ) throws(LedgerError) {
        try contract.finish(
            attemptID, outcome: outcome, reason: reason, readBack: readBack, onAir: onAir, debugLocked: debugLocked)
    }

    /// Records a journaled outcome (`LedgerCore.recordJournaled`).
    public func recordJournaled(
        _ attemptID: Int, run: String?, outcome: AttemptOutcome, reason: String?, readBack: String?,
        onAir: OnAirCheck?, debugLocked: Bool
    ) throws(LedgerError) {
        try contract.recordJournaled(
            attemptID, run: run, outcome: outcome, reason: reason, readBack: readBack, onAir: onAir,
            debugLocked: debugLocked)
    }

    /// The outcomes whose `finish` records a hook run (`provision --on-verified/--on-failed`).
    public var hookOutcomes: Set<AttemptOutcome> { contract.hookOutcomes }

    /// Every hook run (or the pending ones), oldest first (none in a ledger of an earlier schema
    /// read without migrating).
    public func hookRuns(pendingOnly: Bool) throws(LedgerError) -> [HookRun] {
        try contract.hookRuns(pendingOnly: pendingOnly, present: contract.tables.contains(.hookRuns))
    }

    /// Records attempt `attempt`'s hook run for `hook` unless it is there already.
    public func ensureHookRun(attempt: Int, hook: AttemptOutcome) throws(LedgerError) {
        try contract.ensureHookRun(attempt: attempt, hook: hook)
    }

    /// Records one try of a hook run.
    public func recordHookTry(eventID: String, status: String, delivered: Bool) throws(LedgerError) {
        try contract.recordHookTry(eventID: eventID, status: status, delivered: delivered)
    }

    /// Marks a chip's verified attempt superseded.
    public func supersede(chip: String, reason: String) throws(LedgerError) {
        try contract.supersede(chip: chip, reason: reason)
    }

    /// Releases a held station.
    public func release(station: String) throws(LedgerError) { try contract.release(station: station) }

    /// This process's run's lease.
    public var lease: RunLease { contract.lease }

    /// Registers this process's run; on a pool a bench name another live run holds is refused
    /// (a file has one run at a time: its one-run lock).
    public func beginRun() throws(LedgerError) { try contract.beginRun(exclusive: !contract.soleRunner) }

    /// Renews this process's run's lease (`LedgerCore.renewLease`).
    public func renewLease() throws(LedgerError) { try contract.renewLease() }

    /// Ends this process's run.
    public func endRun() { contract.endRun() }

    /// Every run the ledger records (none in a ledger of an earlier schema read as it is).
    public func runs() throws(LedgerError) -> [RunRecord] { contract.tables.contains(.runs) ? try contract.runs() : [] }

    /// Whether a station could still take a chip (`LedgerCore.hasWork`).
    public func hasWork(excluding: Set<String>) throws(LedgerError) -> Bool {
        try contract.hasWork(excluding: excluding)
    }

    /// One station (`LedgerCore.station(named:)`).
    public func station(named name: String) throws(LedgerError) -> Station? { try contract.station(named: name) }

    /// Whether any verified chip is debug-locked (`LedgerCore.hasLockedChips`).
    public func hasLockedChips() throws(LedgerError) -> Bool { try contract.hasLockedChips() }

    /// Every station with its state, in list order.
    public func states() throws(LedgerError) -> [StationState] { try contract.states() }

    /// Every attempt, oldest first.
    public func attempts() throws(LedgerError) -> [Attempt] { try contract.attempts() }

    /// Records a calibration and makes its power the station's (`LedgerCore.recordCalibration`).
    public func recordCalibration(_ calibration: CalibrationRecord) throws(LedgerError) {
        try contract.recordCalibration(calibration)
    }

    /// Every calibration, oldest first (none in a ledger from before calibrations, read as it is).
    public func calibrations() throws(LedgerError) -> [CalibrationRecord] {
        try contract.calibrations(present: contract.tables.contains(.calibrations))
    }
}

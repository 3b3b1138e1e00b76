/// A ledger that hands every call to another one (`forwardee`) unless it says otherwise: the
/// SQLite file and the PostgreSQL pool around the one ledger core, a ledger that adds one thing
/// to another (a journal for outcomes a server could not take, a fault for a test). Each
/// implements only the calls it changes; the forwarding list lives here once, so a requirement
/// added to `ProvisioningLedger` is forwarded everywhere.
public protocol ForwardingLedger: ProvisioningLedger {
    /// The ledger the calls go to.
    var forwardee: any ProvisioningLedger { get }
}

extension ForwardingLedger {
    /// The forwardee's.
    public func register(_ stations: [Station]) throws(LedgerError) { try forwardee.register(stations) }

    /// The forwardee's.
    public func recoverInterrupted() throws(LedgerError) -> [Attempt] { try forwardee.recoverInterrupted() }

    /// The forwardee's.
    public func verifiedStation(forChip chip: String) throws(LedgerError) -> String? {
        try forwardee.verifiedStation(forChip: chip)
    }

    /// The forwardee's.
    public func interruptedAttempt(forChip chip: String) throws(LedgerError) -> Attempt? {
        try forwardee.interruptedAttempt(forChip: chip)
    }

    /// The forwardee's.
    public func claimNextStation(
        chip: String, debugger: String, template: String, templateSHA256: String, verifyMethod: String,
        skipping: Set<String>, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt)? {
        try forwardee.claimNextStation(
            chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA256,
            verifyMethod: verifyMethod, skipping: skipping, image: image)
    }

    /// The forwardee's.
    public func claimAgain(
        station: String, chip: String, debugger: String, template: String, templateSHA256: String,
        verifyMethod: String, reason: String, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt) {
        try forwardee.claimAgain(
            station: station, chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA256,
            verifyMethod: verifyMethod, reason: reason, image: image)
    }

    /// The forwardee's.
    public func finish(
        _ attemptID: Int, outcome: AttemptOutcome, reason: String?, readBack: String?, onAir: OnAirCheck?,
        debugLocked: Bool
    ) throws(LedgerError) {
        try forwardee.finish(
            attemptID, outcome: outcome, reason: reason, readBack: readBack, onAir: onAir, debugLocked: debugLocked)
    }

    /// The forwardee's.
    public func hookRuns(pendingOnly: Bool) throws(LedgerError) -> [HookRun] {
        try forwardee.hookRuns(pendingOnly: pendingOnly)
    }

    /// The forwardee's.
    public var hookOutcomes: Set<AttemptOutcome> { forwardee.hookOutcomes }

    /// The forwardee's.
    public func ensureHookRun(attempt: Int, hook: AttemptOutcome) throws(LedgerError) {
        try forwardee.ensureHookRun(attempt: attempt, hook: hook)
    }

    /// The forwardee's.
    public func recordHookTry(eventID: String, status: String, delivered: Bool) throws(LedgerError) {
        try forwardee.recordHookTry(eventID: eventID, status: status, delivered: delivered)
    }

    /// The forwardee's.
    public func supersede(chip: String, reason: String) throws(LedgerError) {
        try forwardee.supersede(chip: chip, reason: reason)
    }

    /// The forwardee's.
    @discardableResult
    public func release(station: String, givingUpJournals: Bool) throws(LedgerError) -> ReleaseResult {
        try forwardee.release(station: station, givingUpJournals: givingUpJournals)
    }

    /// The forwardee's.
    public func states() throws(LedgerError) -> [StationState] { try forwardee.states() }

    /// The forwardee's.
    public func attempts() throws(LedgerError) -> [Attempt] { try forwardee.attempts() }

    /// The forwardee's.
    public func recordCalibration(_ calibration: CalibrationRecord) throws(LedgerError) {
        try forwardee.recordCalibration(calibration)
    }

    /// The forwardee's.
    public func calibrations() throws(LedgerError) -> [CalibrationRecord] { try forwardee.calibrations() }

    /// The forwardee's.
    public var lease: RunLease { forwardee.lease }

    /// The forwardee's.
    public func beginRun() throws(LedgerError) { try forwardee.beginRun() }

    /// The forwardee's.
    public func renewLease() throws(LedgerError) { try forwardee.renewLease() }

    /// The forwardee's.
    public func endRun() { forwardee.endRun() }

    /// The forwardee's.
    public func runs() throws(LedgerError) -> [RunRecord] { try forwardee.runs() }

    /// The forwardee's.
    public func settleJournals(placeToken: String, place: String) throws(LedgerError) {
        try forwardee.settleJournals(placeToken: placeToken, place: place)
    }

    /// The forwardee's.
    public func recordPlace(_ place: String) throws(LedgerError) { try forwardee.recordPlace(place) }

    /// The forwardee's.
    public func recordJournaled(
        _ attemptID: Int, run: String?, outcome: AttemptOutcome, reason: String?, readBack: String?,
        onAir: OnAirCheck?, debugLocked: Bool
    ) throws(LedgerError) {
        try forwardee.recordJournaled(
            attemptID, run: run, outcome: outcome, reason: reason, readBack: readBack, onAir: onAir,
            debugLocked: debugLocked)
    }

    /// The forwardee's.
    public func hasWork(excluding: Set<String>) throws(LedgerError) -> Bool {
        try forwardee.hasWork(excluding: excluding)
    }

    /// The forwardee's.
    public func station(named name: String) throws(LedgerError) -> Station? { try forwardee.station(named: name) }

    /// The forwardee's.
    public func hasLockedChips() throws(LedgerError) -> Bool { try forwardee.hasLockedChips() }
}

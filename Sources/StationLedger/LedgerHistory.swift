import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// A ledger's whole record, as `ledger migrate` copies it: the stations in list order (with
/// their current power), every attempt with its id, and every calibration, oldest first.
public struct LedgerHistory: Sendable, Equatable {
    /// Every station, in list order.
    public var stations: [Station]
    /// Every attempt, oldest first, with the ids it has.
    public var attempts: [Attempt]
    /// Every calibration, oldest first.
    public var calibrations: [CalibrationRecord]
    /// Every hook run, delivered or pending, oldest first (a pending one must survive a move).
    public var hookRuns: [HookRun]
    /// Every run, oldest first (the attempts name them).
    public var runs: [RunRecord]

    /// A history of these records.
    public init(
        stations: [Station], attempts: [Attempt], calibrations: [CalibrationRecord], hookRuns: [HookRun] = [],
        runs: [RunRecord] = []
    ) {
        self.stations = stations
        self.attempts = attempts
        self.calibrations = calibrations
        self.hookRuns = hookRuns
        self.runs = runs
    }
}

/// A ledger backend that can take a whole history into an empty ledger (`ledger migrate`).
public protocol HistoryImporting: ProvisioningLedger {
    /// The whole record, read in one snapshot.
    func snapshot() throws(LedgerError) -> LedgerHistory
    /// Whether the ledger holds no station, attempt or calibration.
    func isEmpty() throws(LedgerError) -> Bool
    /// Writes `history` into this empty ledger in one transaction, its rules checking every row
    /// on the way (a history that breaks one is refused and nothing is written).
    func importHistory(_ history: LedgerHistory) throws(LedgerError)
}

extension ProvisioningLedger {
    /// The ledger's whole record.
    public func history() throws(LedgerError) -> LedgerHistory {
        LedgerHistory(
            stations: try states().map(\.station), attempts: try attempts(), calibrations: try calibrations(),
            hookRuns: try hookRuns(), runs: try runs())
    }
}

extension SQLiteLedger: HistoryImporting {
    /// Whether the file holds no station, attempt or calibration.
    public func isEmpty() throws(LedgerError) -> Bool { try core.isEmpty() }

    /// Writes `history` into this empty ledger in one transaction (attempt ids kept).
    public func importHistory(_ history: LedgerHistory) throws(LedgerError) {
        try core.importHistory(history, empty: { () throws(LedgerError) in try isEmpty() })
    }
}

extension LedgerCore {
    /// Whether the ledger holds no record: no station, attempt, calibration, hook run or run.
    package func isEmpty() throws(LedgerError) -> Bool {
        let counted: [(table: String, present: Bool)] = [
            ("stations", true), ("attempts", true), ("calibrations", tables.contains(.calibrations)),
            ("hook_runs", tables.contains(.hookRuns)), ("runs", tables.contains(.runs)),
        ]
        let sum = counted.filter(\.present).map { "(SELECT count(*) FROM \($0.table))" }.joined(separator: " + ")
        return try driver.reading("counting records") { () throws(LedgerError) -> Bool in
            try driver.rows("SELECT \(sum)", [], "counting records").first?.first?.int == 0
        }
    }

    /// Writes `history` into this empty ledger in one transaction (attempt ids kept), every rule
    /// of the schema checking each row on the way in. `empty` says whether the ledger holds no
    /// record; a repeat after a lost COMMIT that finds `history` there already (`copied`) is done.
    /// `unrecordedBench`: the bench written for a record without one (a server requires one);
    /// `afterAttempts`: a statement run once the attempts are in (a server moves its id sequence on).
    package func importHistory(
        _ history: LedgerHistory, empty: () throws(LedgerError) -> Bool,
        copied: () throws(LedgerError) -> Bool = { false }, unrecordedBench: String? = nil,
        afterAttempts: String? = nil
    ) throws(LedgerError) {
        let operation = "copying the history in"
        try driver.inTransaction(operation) { () throws(LedgerError) in
            // Taken before the emptiness check: two copies into one database run one after the other.
            if let serialize = dialect.serializeRuns { try driver.rows(serialize, [], "locking the ledger") }
            guard try empty() else {
                if driver.isRepeating, try copied() { return }
                throw LedgerError(operation: operation, message: "the target ledger is not empty", kind: .constraint)
            }
            let text = { (value: String?) -> SQLValue in value.map { .text($0) } ?? .null }
            for (position, station) in history.stations.enumerated() {
                try insertStation(station, position: position, "copying station '\(station.name)'")
            }
            for run in history.runs {
                try driver.rows(
                    "INSERT INTO runs(\(Self.runColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", Self.runValues(run),
                    "copying run \(run.id)")
            }
            let placeholders = Array(repeating: "?", count: Self.attemptColumns.count).joined(separator: ", ")
            for attempt in history.attempts {
                try driver.rows(
                    "INSERT INTO attempts(\(Self.attemptColumns.joined(separator: ", "))) VALUES (\(placeholders))",
                    [
                        .integer(attempt.id), .text(attempt.station), .text(attempt.chip), .text(attempt.debugger),
                        .text(attempt.template), .text(attempt.templateSHA256), .text(attempt.imageSHA256),
                        .text(attempt.startedAt), text(attempt.finishedAt), .text(attempt.outcome.rawValue),
                        text(attempt.reason), .text(attempt.verifyMethod), text(attempt.advertiserAddress),
                        text(attempt.readBack), attempt.power.map { .integer($0) } ?? .null,
                        attempt.onAir.map { .integer($0.heard ? 1 : 0) } ?? .null,
                        attempt.onAir.map { .integer($0.rssiCount) } ?? .null,
                        attempt.onAir?.rssiMedian.map { .integer($0) } ?? .null, text(attempt.powerSource),
                        text(attempt.bench ?? unrecordedBench), attempt.debugLocked ? .integer(1) : .null,
                        text(attempt.run),
                    ], "copying attempt \(attempt.id)")
            }
            if let afterAttempts { try driver.rows(afterAttempts, [], "moving the attempt ids on") }
            try driver.rows(Self.retakeAll, [], "recording each station's state")
            for run in history.hookRuns {
                try driver.rows(
                    "INSERT INTO hook_runs(event_id, attempt, hook, bench, created_at, tries, last_status, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        .text(run.eventID), .integer(run.attempt.id), .text(run.hook.rawValue),
                        text(run.bench ?? unrecordedBench), .text(run.createdAt), .integer(run.tries),
                        text(run.lastStatus), text(run.deliveredAt),
                    ], "copying hook run \(run.eventID)")
            }
            for calibration in history.calibrations {
                try driver.rows(
                    "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        .text(calibration.station), .text(calibration.recordedAt), .integer(calibration.power),
                        .integer(calibration.samples), .integer(calibration.used), .text(calibration.source),
                    ], "copying a calibration of '\(calibration.station)'")
            }
        }
    }

    /// A run's values in `runColumns`' order, to copy it.
    package static func runValues(_ run: RunRecord) -> [SQLValue] {
        [
            .text(run.id), run.bench.map { .text($0) } ?? .null, .text(run.host), .integer(run.process),
            .text(run.machine), .text(run.startedAt), .real(run.leaseSeconds), .real(run.leaseUntil),
            run.endedAt.map { .text($0) } ?? .null, run.endedBecause.map { .text($0) } ?? .null,
        ]
    }
}

extension SQLiteLedger {
    /// The whole record read in one transaction (one snapshot of the file).
    public func snapshot() throws(LedgerError) -> LedgerHistory {
        try database.transaction("reading the ledger") { () throws(LedgerError) -> LedgerHistory in try history() }
    }

    /// Why a copy may not be made at `path`: a file is there, or a symbolic link to nothing (the
    /// copy goes only where nothing is); `nil` when it may. Asked first by a caller that must not
    /// lock or change anything for a copy that cannot be made.
    public static func copyRefusal(at path: String) -> LedgerError? {
        let path = LedgerFile.canonical(path)
        guard Files.exists(path) else { return nil }
        return LedgerError(
            operation: "copying the ledger to \(path)",
            message: Files.isFile(path) || Files.nonFileKind(path) != nil
                ? "a file is there; the copy goes only where no file is"
                : "a symbolic link to nothing is there; the copy goes only where no file is: give its own path",
            kind: .constraint)
    }

    /// Writes `history` as a new ledger file at `path`, where nothing may be: built under a
    /// temporary name beside it (a ledger's creation name, so a killed copy's leftover is removed
    /// like a killed creation's), checked — every rule on the way in, then `check()` and the
    /// history read back equal to `history` — and only then linked into place. Nothing is ever
    /// at `path` but a whole, checked copy.
    public static func createCopy(at path: String, of history: LedgerHistory) throws(LedgerError) {
        if let refusal = copyRefusal(at: path) { throw refusal }
        let path = LedgerFile.canonical(path)
        LedgerFile.removeAbandonedCreations(of: path)
        let temporary = LedgerFile.creationName(path)
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) } }
        // Made at the creation name itself, not created through another beside it: that name
        // would be the path's creation name's, twice as long, and unknown to a later run's tidying.
        try LedgerFile.makeEmpty(at: temporary, for: path)
        do {
            let copy = try SQLiteLedger(path: temporary)
            try copy.importHistory(history)
            let problems = copy.check()
            guard problems.isEmpty else {
                throw LedgerError(
                    operation: "checking the copy",
                    message: problems.prefix(3).map { "\($0.check.rawValue): \($0.detail)" }.joined(separator: "; "),
                    kind: .constraint)
            }
            guard try copy.snapshot() == history else {
                throw LedgerError(
                    operation: "checking the copy", message: "the records read back differ from those copied",
                    kind: .database)
            }
        }  // the connection closes: the WAL is checkpointed into the file
        guard link(temporary, path) == 0 else {
            if errno == EEXIST {
                throw LedgerError(
                    operation: "copying the ledger to \(path)",
                    message: "a file appeared there meanwhile; it was left alone", kind: .constraint)
            }
            throw LedgerFile.systemError("copying the ledger to \(path)")
        }
        try? Files.syncDirectory(Files.directory(of: path))
    }
}

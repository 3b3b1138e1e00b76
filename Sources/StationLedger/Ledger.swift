import BeaconPayload
import Storage

/// How an attempt to burn a station ended.
public enum AttemptOutcome: String, Sendable, Equatable, CaseIterable {
    /// Started; the chip is being written (a crash leaves it so).
    case inProgress = "in-progress"
    /// Burned and verified.
    case verified
    /// Failed, with a reason.
    case failed
    /// Found in progress after a crash: the chip may carry the identity. The station is held until
    /// that chip is seen again (and checked) or the station is released.
    case interrupted
    /// Verified once, then the chip was deliberately reprovisioned with another station.
    case superseded
}

/// One attempt to burn one station into one chip.
public struct Attempt: Sendable, Equatable {
    /// Row ID.
    public var id: Int
    /// Station name.
    public var station: String
    /// Chip IEEE address (primary, MSB first, `XX:XX:…`; see `ChipID`).
    public var chip: String
    /// Debugger (`bus:address` or serial).
    public var debugger: String
    /// Template name and image SHA-256.
    public var template: String
    /// SHA-256 of the template image.
    public var templateSHA256: String
    /// SHA-256 of the station image burned.
    public var imageSHA256: String
    /// When it started and ended (ISO 8601, UTC).
    public var startedAt: String
    /// When it ended; `nil` while in progress.
    public var finishedAt: String?
    /// The outcome.
    public var outcome: AttemptOutcome
    /// Why it failed, if it did.
    public var reason: String?
    /// `crc` or `read`.
    public var verifyMethod: String
    /// The advertiser address the image carries (`C0:FF:…`), for templates that have one;
    /// `nil` for others and for attempts recorded before ledgers kept it.
    public var advertiserAddress: String? = nil
    /// Which flash bytes were read back and compared byte for byte when the attempt was verified:
    /// inclusive address ranges, upper-case hex, ascending, comma-separated, no spaces
    /// (`0x7F00-0x7F2F,0x7F30-0x7F3F`; `BurnReport.describe` writes it). `nil` when nothing was read back (a
    /// CRC verification) or the attempt was recorded before ledgers kept it.
    public var readBack: String? = nil
    /// The measured power the image carries (dBm): the station's when it was claimed. `nil` for
    /// attempts recorded before ledgers kept it (schema version 2).
    public var power: Int? = nil
    /// What a scan heard of the station after its burn (`provision --scan-verify`); `nil` when
    /// nobody listened.
    public var onAir: OnAirCheck? = nil
    /// Where `power` came from: `calibration` (the station's latest calibration), or
    /// `registered` (its list's value or the board's, as it was registered); `nil` for attempts
    /// recorded before ledgers kept it.
    public var powerSource: String? = nil
    /// The bench (machine) that made the attempt (`provision --bench`, default its host name);
    /// `nil` for attempts recorded before ledgers kept it (schema version 3).
    public var bench: String? = nil
    /// Whether the chip's debug interface was locked after its verified burn (`provision
    /// --lock-debug`) and the lock was seen taking effect; false for every other attempt.
    public var debugLocked = false
    /// The run (`RunRecord.id`) it belongs to: the one that started it, or the one that settled it
    /// after an interruption; `nil` for attempts recorded before ledgers kept runs (schema
    /// version 5 of a file, 4 of a server).
    public var run: String? = nil

    /// An attempt as a ledger backend read it.
    public init(
        id: Int, station: String, chip: String, debugger: String, template: String, templateSHA256: String,
        imageSHA256: String, startedAt: String, finishedAt: String?, outcome: AttemptOutcome, reason: String?,
        verifyMethod: String, advertiserAddress: String? = nil, readBack: String? = nil, power: Int? = nil,
        onAir: OnAirCheck? = nil, powerSource: String? = nil, bench: String? = nil, debugLocked: Bool = false,
        run: String? = nil
    ) {
        self.id = id
        self.station = station
        self.chip = chip
        self.debugger = debugger
        self.template = template
        self.templateSHA256 = templateSHA256
        self.imageSHA256 = imageSHA256
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.outcome = outcome
        self.reason = reason
        self.verifyMethod = verifyMethod
        self.advertiserAddress = advertiserAddress
        self.readBack = readBack
        self.power = power
        self.onAir = onAir
        self.powerSource = powerSource
        self.bench = bench
        self.debugLocked = debugLocked
        self.run = run
    }
}

/// What a scan heard of a station just burned: whether its exact advertising data came from its
/// address, and the RSSI of those reports.
public struct OnAirCheck: Sendable, Equatable {
    /// Heard with exactly its bytes from its address.
    public var heard: Bool
    /// Reports heard from it with its bytes.
    public var rssiCount: Int
    /// Their median RSSI (dBm); `nil` when none was heard.
    public var rssiMedian: Int?
    /// Advertisements from its address with other bytes (for the reason; not kept in the ledger).
    public var othersFromAddress: Int

    /// A result.
    public init(heard: Bool, rssiCount: Int, rssiMedian: Int?, othersFromAddress: Int = 0) {
        self.heard = heard
        self.rssiCount = rssiCount
        self.rssiMedian = rssiMedian
        self.othersFromAddress = othersFromAddress
    }
}

/// A station's measured power calibrated from RSSI samples taken 1 m away (`ccbeacon calibrate
/// --write`): from then on the station is burned with it.
public struct CalibrationRecord: Sendable, Equatable {
    /// The station.
    public var station: String
    /// When it was recorded (ISO 8601, UTC).
    public var recordedAt: String
    /// The measured power (dBm at 1 m).
    public var power: Int
    /// Samples given, and samples averaged.
    public var samples: Int
    /// Samples averaged (the lowest and highest tenth left out).
    public var used: Int
    /// Where the samples came from (a file, a capture and address).
    public var source: String

    /// A calibration.
    public init(station: String, recordedAt: String, power: Int, samples: Int, used: Int, source: String) {
        self.station = station
        self.recordedAt = recordedAt
        self.power = power
        self.samples = samples
        self.used = used
        self.source = source
    }
}

/// Where a station of the list stands.
public struct StationState: Sendable, Equatable {
    /// The station.
    public var station: Station
    /// Its state.
    public var state: State
    /// Attempts so far.
    public var attempts: Int

    /// The states.
    public enum State: Sendable, Equatable {
        /// Not burned yet (possibly failed before).
        case pending(lastFailure: String?)
        /// Burned and verified into this chip.
        case done(chip: String, at: String)
        /// Interrupted while burning this chip; waits for that chip or a release.
        case held(chip: String)
        /// Being burned now (by another process, or a crash not yet recovered).
        case inProgress(chip: String)
    }

    /// Each of `stations` (in their order) with its state by `attempts` (oldest first): done
    /// when an attempt is verified, else held when one is interrupted, else in progress, else
    /// pending with its last failure. Every ledger backend derives states this one way.
    public static func states(of stations: [Station], attempts: [Attempt]) -> [StationState] {
        let byStation = Dictionary(grouping: attempts, by: \.station)
        return stations.map { station in
            let own = byStation[station.name] ?? []
            let state: State
            if let done = own.last(where: { $0.outcome == .verified }) {
                state = .done(chip: done.chip, at: done.finishedAt ?? done.startedAt)
            } else if let held = own.last(where: { $0.outcome == .interrupted }) {
                state = .held(chip: held.chip)
            } else if let running = own.last(where: { $0.outcome == .inProgress }) {
                state = .inProgress(chip: running.chip)
            } else {
                state = .pending(lastFailure: own.last(where: { $0.outcome == .failed })?.reason)
            }
            return StationState(station: station, state: state, attempts: own.count)
        }
    }
}

/// What releasing a held station did (`ProvisioningLedger.release(station:givingUpJournals:)`).
public enum ReleaseResult: Sendable, Equatable {
    /// Its interrupted attempt is failed now and the station pending (or it was not held).
    case released
    /// Kept held: on a pool, the run of `bench` that was burning it may keep the attempt's outcome
    /// in its journal — at `journal` where the run recorded it — which only a run of that bench
    /// from that folder on that machine records. Either another bench's, or this bench's journal
    /// this run has not recorded (another folder, another machine).
    case kept(bench: String, journal: JournalSite?)
}

/// Where a run kept its bench's journal, as the ledger recorded it when the run began.
public struct JournalSite: Sendable, Equatable {
    /// The host the run ran on (its name, for people).
    public var host: String
    /// The journal's path there.
    public var path: String
}

/// The record of provisioning: which chip received which identity, and every attempt. Kept behind
/// this protocol so a shared server database can serve several benches later.
public protocol ProvisioningLedger: AnyObject {
    /// Adds the list's stations; a station already known must have the same identity.
    func register(_ stations: [Station]) throws(LedgerError)
    /// Marks attempts left in progress by a crash as interrupted; returns them.
    func recoverInterrupted() throws(LedgerError) -> [Attempt]
    /// The station a chip carries (verified), if any.
    func verifiedStation(forChip chip: String) throws(LedgerError) -> String?
    /// The interrupted attempt whose chip this is, if any.
    func interruptedAttempt(forChip chip: String) throws(LedgerError) -> Attempt?
    /// Atomically picks the first pending station (list order) not in `skipping` and records an
    /// in-progress attempt for it; `nil` when none is left.
    func claimNextStation(
        chip: String, debugger: String, template: String, templateSHA256: String, verifyMethod: String,
        skipping: Set<String>, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt)?
    /// Atomically supersedes `chip`'s verified attempt of `station` with `reason` and starts a new
    /// attempt of it on the same chip (burned again with its calibrated power).
    func claimAgain(
        station: String, chip: String, debugger: String, template: String, templateSHA256: String,
        verifyMethod: String, reason: String, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt)
    /// Ends an attempt; `readBack` says which flash bytes were read back to verify it (see
    /// `Attempt.readBack`), `onAir` what a scan heard of it, `debugLocked` whether the chip's
    /// debug interface was locked after it. When the ledger was opened with hooks for this
    /// outcome, a hook run for it is recorded in the same transaction (`HookRun`).
    func finish(
        _ attemptID: Int, outcome: AttemptOutcome, reason: String?, readBack: String?, onAir: OnAirCheck?,
        debugLocked: Bool
    ) throws(LedgerError)
    /// Every hook run recorded, oldest first; `pendingOnly`: only those not delivered yet.
    func hookRuns(pendingOnly: Bool) throws(LedgerError) -> [HookRun]
    /// The outcomes whose `finish` records a hook run (the run's hooks).
    var hookOutcomes: Set<AttemptOutcome> { get }
    /// Records the hook run of attempt `attempt`'s outcome `hook` unless it is there already: an
    /// outcome kept in a bench's journal gets the hook run its run asked for when it is replayed.
    func ensureHookRun(attempt: Int, hook: AttemptOutcome) throws(LedgerError)
    /// Records one try of hook run `eventID`: its status in words, and whether it was delivered
    /// (the hook exited 0). A run already delivered is left as it is.
    func recordHookTry(eventID: String, status: String, delivered: Bool) throws(LedgerError)
    /// Marks the verified attempt of a chip superseded, saying why: the chip gets another station,
    /// or its flash was erased (its station is pending again).
    func supersede(chip: String, reason: String) throws(LedgerError)
    /// Releases a held station: its interrupted attempt becomes failed and the station pending —
    /// on a pool only by a run of the bench that was burning it, once that run is settled
    /// (`settleJournals`; `ReleaseResult.kept`). `givingUpJournals`: a person says that run's
    /// journal is lost (its machine or folder gone); this bench's held stations are released
    /// unless a file is at that journal's path on this machine.
    @discardableResult
    func release(station: String, givingUpJournals: Bool) throws(LedgerError) -> ReleaseResult
    /// Every station of the ledger with its state, in list order.
    func states() throws(LedgerError) -> [StationState]
    /// Every attempt, oldest first.
    func attempts() throws(LedgerError) -> [Attempt]
    /// Records a calibration of `station` and makes its power the station's from now on.
    func recordCalibration(_ calibration: CalibrationRecord) throws(LedgerError)
    /// Every calibration, oldest first.
    func calibrations() throws(LedgerError) -> [CalibrationRecord]
    /// This process's run's lease (`RunLease`): its id once the run began, and whether it holds.
    var lease: RunLease { get }
    /// Registers this process's run (done by the first change otherwise); a shared ledger
    /// refuses a bench name another live run holds (`LedgerFileProblem.benchRunning`).
    func beginRun() throws(LedgerError)
    /// Renews this run's lease; a lease that is over is `LedgerError.Kind.leaseLost`, for good.
    func renewLease() throws(LedgerError)
    /// Ends this run, its lease with it (tried once; a crash leaves it to run out).
    func endRun()
    /// Every run recorded, oldest first.
    func runs() throws(LedgerError) -> [RunRecord]
    /// Records an outcome a run kept in its bench's journal while the server was away: the attempt
    /// must still be open and, when `run` is given, still that run's.
    func recordJournaled(
        _ attemptID: Int, run: String?, outcome: AttemptOutcome, reason: String?, readBack: String?,
        onAir: OnAirCheck?, debugLocked: Bool
    ) throws(LedgerError)
    /// Marks the run of this bench that left `placeToken` beside its journal, in the file `place`
    /// names (`OutcomeJournal.placeToken`), settled: the caller found that token in that very file
    /// beside its own journal and recorded that journal, so nothing of that run waits in a journal
    /// any more and its held stations may be released.
    func settleJournals(placeToken: String, place: String) throws(LedgerError)
    /// Records where this run left its place token (`OutcomeJournal.leavePlaceToken`).
    func recordPlace(_ place: String) throws(LedgerError)
    /// Whether a station not in `excluding` could still take a chip: one pending or held (what a
    /// waiting debugger asks every second). Answered by counting, not by reading every state.
    func hasWork(excluding: Set<String>) throws(LedgerError) -> Bool
    /// One station of the ledger, if it has one of that name.
    func station(named name: String) throws(LedgerError) -> Station?
    /// Whether any chip is recorded as verified and debug-locked.
    func hasLockedChips() throws(LedgerError) -> Bool
}

extension ProvisioningLedger {
    /// Releases a held station unless its outcome may wait in a journal this run does not keep.
    @discardableResult
    public func release(station: String) throws(LedgerError) -> ReleaseResult {
        try release(station: station, givingUpJournals: false)
    }

    /// Marks the verified attempt of a chip superseded because the chip is reprovisioned.
    public func supersede(chip: String) throws(LedgerError) {
        try supersede(chip: chip, reason: "chip reprovisioned")
    }

    /// Ends an attempt that read nothing back.
    public func finish(_ attemptID: Int, outcome: AttemptOutcome, reason: String?) throws(LedgerError) {
        try finish(attemptID, outcome: outcome, reason: reason, readBack: nil, onAir: nil)
    }

    /// Ends an attempt nobody listened for on air.
    public func finish(_ attemptID: Int, outcome: AttemptOutcome, reason: String?, readBack: String?)
        throws(LedgerError)
    {
        try finish(attemptID, outcome: outcome, reason: reason, readBack: readBack, onAir: nil)
    }

    /// Every hook run recorded, delivered or not, oldest first.
    public func hookRuns() throws(LedgerError) -> [HookRun] { try hookRuns(pendingOnly: false) }

    /// Ends an attempt whose chip was not debug-locked.
    public func finish(
        _ attemptID: Int, outcome: AttemptOutcome, reason: String?, readBack: String?, onAir: OnAirCheck?
    ) throws(LedgerError) {
        try finish(attemptID, outcome: outcome, reason: reason, readBack: readBack, onAir: onAir, debugLocked: false)
    }
}

/// The ledger in an SQLite file (WAL; every change in a transaction; invariants in the schema).
///
/// The file carries its identity: `PRAGMA application_id` is `applicationID` and `PRAGMA
/// user_version` the schema version. Opening checks both, and the file's health, before anything
/// is written (see `LedgerAccess`); a file that is not a ledger this ccbeacon may use is refused
/// with `LedgerError.Kind.refused` and left unchanged.
public final class SQLiteLedger: ForwardingLedger, Sendable {
    let database: SQLiteDatabase
    /// The contract of runs and attempts, over this file.
    let core: LedgerCore
    /// The columns of `attemptColumns` to select, as this file has them: a ledger read without
    /// migrating may lack the newer ones, which then read as NULL.
    var attemptSelect: String { core.attemptSelect }
    /// The schema version of the file as opened: `schemaVersion`, or 0 for a ledger of an earlier
    /// ccbeacon opened read-only (and so not migrated).
    public let fileSchemaVersion: Int
    /// The bench recorded on the attempts this process starts (`nil`: none recorded).
    public let bench: String?
    /// The core every `ProvisioningLedger` requirement is answered by: the ledger's contract,
    /// written once over either database (`LedgerCore`).
    public var forwardee: any ProvisioningLedger { core }

    /// The `PRAGMA application_id` of every ccbeacon ledger: "CCBL" (ccbeacon ledger) in ASCII,
    /// so `file(1)` and SQLite tools can tell the file apart from other applications' databases.
    public static let applicationID: UInt32 = 0x4343_424C

    /// The schema version this ccbeacon writes (`PRAGMA user_version`). 0: ledgers of earlier
    /// ccbeacon versions, without an application id (some without `advertiser_address`); 1:
    /// application id, `read_back`, and the chip-id triggers; 2: each attempt's measured power
    /// and on-air check, and the `calibrations` table; 3: each attempt's bench; 4: each attempt's
    /// debug lock, and the `hook_runs` table; 5: runs with leases (`RunRecord`), each attempt's
    /// run; 6: each station's attributes (`Station.attributes`). A newer version is refused.
    public static let schemaVersion = 6

    /// The path a ledger is opened by: symbolic links resolved (of the file, or of its folder
    /// while the file does not exist yet). Whatever is kept beside a ledger (SQLite's journal,
    /// the one-run lock) belongs beside this path, so that every name of the ledger finds it.
    public static func realPath(_ path: String) -> String { LedgerFile.canonical(path) }

    /// Every file a ledger at `path` is kept in, whether it is there yet or not: the database,
    /// SQLite's files beside it (`-wal`, `-shm`, `-journal`) and a run's lock (`.NAME.lock`).
    public static func keptFiles(_ path: String) -> [String] {
        [path] + LedgerFile.journalSuffixes.map { path + $0 }
            + [Files.join(Files.directory(of: path), FolderLock.name(guarding: Files.lastComponent(path)))]
    }

    /// Why SQLite could not open, or make, a ledger at `path`, or `nil`. SQLite opens paths of at
    /// most 511 bytes as its Unix VFS resolves them (absolute), SQLite's journal (`-journal`)
    /// beside them included; beside a new ledger also go its creation name
    /// (`NAME.ccbeacon-creating-PID-RANDOM`, with a journal) and the run lock (`.NAME.lock`), so a
    /// new one's name and full path keep room for them.
    public static func pathProblem(_ path: String) -> String? {
        let full = LedgerFile.canonical(path)
        let exists = Files.exists(full)
        let room = exists ? "-journal".utf8.count : LedgerFile.besideRoom
        if full.utf8.count + room > LedgerFile.sqlitePathMax {
            return
                "its full path is \(full.utf8.count) bytes long, and SQLite opens paths of at most \(LedgerFile.sqlitePathMax) bytes, the names beside \(exists ? "a ledger" : "a new ledger") included: at most \(LedgerFile.sqlitePathMax - room)"
        }
        return exists ? nil : Files.lengthProblem(full, room: LedgerFile.besideRoom, nameRoom: LedgerFile.besideRoom)
    }

    /// Opens the ledger at `path` for `access`. For `.readWrite` a new ledger is created if, and
    /// only if, no file is at `path`; an existing file is checked read-only first, then opened
    /// read-write and, if an earlier ccbeacon made it, migrated in one transaction. Read-only
    /// access never writes, migrates or switches journal modes. `hooks`: the outcomes whose
    /// `finish` records a hook run to deliver; `leaseSeconds`: how long each renewal of this
    /// process's run's lease lasts (`RunLease`); `identity`: where the run says it runs.
    public init(
        path given: String, access: LedgerAccess = .readWrite, bench: String? = nil, hooks: Set<AttemptOutcome> = [],
        leaseSeconds: Double = RunLease.defaultSeconds, identity: RunIdentity = .current
    ) throws(LedgerError) {
        self.bench = bench
        let path = LedgerFile.canonical(given)
        if access == .readWrite, !Files.exists(path) {
            // A new ledger is not made beside journal names that lead elsewhere: it would be
            // refused at once and left behind.
            try LedgerFile.checkJournals(path)
            try LedgerFile.create(path)
        }
        var (database, shape) = try LedgerFile.openChecked(path, access: access)
        if access == .readWrite {
            database = try SQLiteDatabase(path: path, mode: .readWrite)
            guard !database.isReadOnly else {
                throw LedgerError(
                    operation: "opening \(path)",
                    message: "the file cannot be written; provisioning records every attempt in it",
                    kind: .database)
            }
            // The file is identified again: it may have been replaced since the check.
            shape = try LedgerFile.identify(database, path)
            if shape.version < Self.schemaVersion {
                try LedgerFile.migrate(database, path)
                shape = try LedgerFile.identify(database, path)
            }
            try database.execute("PRAGMA journal_mode=WAL", [], "enabling WAL")
            try database.execute("PRAGMA synchronous=FULL", [], "setting durability")
            try database.execute("PRAGMA foreign_keys=ON", [], "enabling foreign keys")
        }
        self.database = database
        fileSchemaVersion = shape.version
        // A file's provisioning holds the file's one-run lock: recovery may take every attempt in
        // progress.
        var tables: LedgerTables = []
        if shape.hasCalibrations { tables.insert(.calibrations) }
        if shape.hasHookRuns { tables.insert(.hookRuns) }
        if shape.hasRuns { tables.insert(.runs) }
        if shape.hasTaken { tables.insert(.stationState) }
        if shape.hasAttributes { tables.insert(.stationAttributes) }
        core = LedgerCore(
            driver: database, name: database.path, bench: bench, present: shape.attemptColumns, tables: tables,
            hookOutcomes: hooks, leaseSeconds: leaseSeconds, soleRunner: true, identity: identity)
    }

    /// This process's run ends with the ledger object (a crash leaves it to the next run).
    deinit { core.endRun() }

    /// The tables of a new ledger. What must never happen is refused by the database itself, here
    /// and in `rules`:
    /// - two stations with one name (primary key) or one identity (unique UUID, major, minor);
    /// - "verified" without a verification method (check constraint).
    static let tables = [
        runsTable,
        """
        CREATE TABLE stations(
            position INTEGER NOT NULL, name TEXT PRIMARY KEY, uuid TEXT NOT NULL, major INTEGER NOT NULL,
            minor INTEGER NOT NULL, power INTEGER NOT NULL, note TEXT, taken \(takenColumn), attributes TEXT,
            UNIQUE(uuid, major, minor))
        """,
        """
        CREATE TABLE attempts(
            id INTEGER PRIMARY KEY AUTOINCREMENT, station TEXT NOT NULL REFERENCES stations(name),
            chip TEXT NOT NULL, debugger TEXT NOT NULL, template TEXT NOT NULL, template_sha256 TEXT NOT NULL,
            image_sha256 TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT,
            outcome TEXT NOT NULL CHECK(outcome IN ('in-progress','verified','failed','interrupted','superseded')),
            reason TEXT, verify_method TEXT NOT NULL CHECK(verify_method IN ('crc','read')), advertiser_address TEXT,
            read_back TEXT, power INTEGER, heard INTEGER, rssi_count INTEGER, rssi_median INTEGER, power_source TEXT, bench TEXT,
            debug_locked INTEGER, run TEXT REFERENCES runs(id))
        """,
        calibrationsTable,
        hookRunsTable,
    ]

    /// Calibrations: a station's measured power from samples 1 m away; a power outside the
    /// signed byte, fewer than 20 samples or a station not in the ledger is refused by the
    /// database itself.
    static let calibrationsTable = """
        CREATE TABLE calibrations(
            id INTEGER PRIMARY KEY AUTOINCREMENT, station TEXT NOT NULL REFERENCES stations(name),
            recorded_at TEXT NOT NULL, power INTEGER NOT NULL CHECK(power BETWEEN -128 AND 127),
            samples INTEGER NOT NULL CHECK(samples >= 20), used INTEGER NOT NULL CHECK(used BETWEEN 1 AND samples),
            source TEXT NOT NULL)
        """
    static let calibrationColumns = ["id", "station", "recorded_at", "power", "samples", "used", "source"]

    /// Runs (`RunRecord`): the id is 32 lower-case hex digits, a lease lasts a positive time.
    static let runsTable = """
        CREATE TABLE runs(
            id TEXT PRIMARY KEY CHECK(length(id) = 32 AND id NOT GLOB '*[^0-9a-f]*'), bench TEXT, host TEXT NOT NULL,
            process INTEGER NOT NULL, machine TEXT NOT NULL, started_at TEXT NOT NULL,
            lease_seconds REAL NOT NULL CHECK(lease_seconds > 0), lease_until REAL NOT NULL, ended_at TEXT,
            ended_because TEXT)
        """

    /// Hook runs (`HookRun`): one per outcome a hook was asked for, recorded with the outcome and
    /// kept until the hook ran and exited 0. The event id is 32 lower-case hex digits; one run
    /// per attempt and hook.
    static let hookRunsTable = """
        CREATE TABLE hook_runs(
            event_id TEXT PRIMARY KEY CHECK(length(event_id) = 32 AND event_id NOT GLOB '*[^0-9a-f]*'),
            attempt INTEGER NOT NULL REFERENCES attempts(id), hook TEXT NOT NULL CHECK(hook IN ('verified','failed')),
            bench TEXT, created_at TEXT NOT NULL, tries INTEGER NOT NULL DEFAULT 0 CHECK(tries >= 0), last_status TEXT,
            delivered_at TEXT, UNIQUE(attempt, hook))
        """
    static let hookRunColumns = [
        "event_id", "attempt", "hook", "bench", "created_at", "tries", "last_status", "delivered_at",
    ]

    /// The indexes and triggers that keep the ledger's promises, added to new and migrated ledgers
    /// alike:
    /// - one station verified twice, or on two chips (partial unique index on verified attempts);
    /// - one chip carrying two verified stations (partial unique index on chip);
    /// - two attempts in progress for one station (partial unique index), so two debuggers or two
    ///   processes can never burn the same identity at once;
    /// - a chip id that cannot identify a chip (`ChipID`). Triggers rather than a CHECK constraint,
    ///   because SQLite can add a trigger to an existing table but a CHECK only by rebuilding it:
    ///   so ledgers of earlier versions get the very same rule, and their recorded history stays as
    ///   it was (`check()` reports an old invalid id instead of the migration failing on it).
    static let rules: [(name: String, isIndex: Bool, sql: String)] = [
        (
            "one_verified_per_station", true,
            "CREATE UNIQUE INDEX IF NOT EXISTS one_verified_per_station ON attempts(station) WHERE outcome = 'verified'"
        ),
        (
            "one_verified_per_chip", true,
            "CREATE UNIQUE INDEX IF NOT EXISTS one_verified_per_chip ON attempts(chip) WHERE outcome = 'verified'"
        ),
        (
            "one_active_per_station", true,
            "CREATE UNIQUE INDEX IF NOT EXISTS one_active_per_station ON attempts(station) WHERE outcome IN ('in-progress', 'interrupted')"
        ),
        (
            "one_live_per_station", true,
            "CREATE UNIQUE INDEX IF NOT EXISTS one_live_per_station ON attempts(station) WHERE outcome IN ('verified', 'in-progress', 'interrupted')"
        ),
        (
            "in_progress_by_run", true,
            "CREATE INDEX IF NOT EXISTS in_progress_by_run ON attempts(run) WHERE outcome = 'in-progress'"
        ),
        (
            "open_runs_by_bench", true,
            "CREATE INDEX IF NOT EXISTS open_runs_by_bench ON runs(bench) WHERE ended_at IS NULL"
        ),
        (
            "pending_by_position", true,
            "CREATE INDEX IF NOT EXISTS pending_by_position ON stations(position) WHERE taken = 0"
        ),
        (
            "interrupted_by_chip", true,
            "CREATE INDEX IF NOT EXISTS interrupted_by_chip ON attempts(chip) WHERE outcome = 'interrupted'"
        ),
        (
            "chip_id_on_insert", false,
            "CREATE TRIGGER IF NOT EXISTS chip_id_on_insert BEFORE INSERT ON attempts WHEN NOT \(ChipID.sqlCondition("NEW.chip", .sqlite)) BEGIN SELECT RAISE(ABORT, '\(ChipID.refusal)'); END"
        ),
        (
            "chip_id_on_update", false,
            "CREATE TRIGGER IF NOT EXISTS chip_id_on_update BEFORE UPDATE OF chip ON attempts WHEN NOT \(ChipID.sqlCondition("NEW.chip", .sqlite)) BEGIN SELECT RAISE(ABORT, '\(ChipID.refusal)'); END"
        ),
        (
            "ended_time_on_insert", false,
            "CREATE TRIGGER IF NOT EXISTS ended_time_on_insert BEFORE INSERT ON attempts WHEN NEW.outcome IS NOT 'in-progress' AND NEW.finished_at IS NULL BEGIN SELECT RAISE(ABORT, '\(endedRefusal)'); END"
        ),
        (
            "ended_time_on_update", false,
            "CREATE TRIGGER IF NOT EXISTS ended_time_on_update BEFORE UPDATE OF outcome, finished_at ON attempts WHEN NEW.outcome IS NOT 'in-progress' AND NEW.finished_at IS NULL BEGIN SELECT RAISE(ABORT, '\(endedRefusal)'); END"
        ),
        (
            "station_values_on_insert", false,
            "CREATE TRIGGER IF NOT EXISTS station_values_on_insert BEFORE INSERT ON stations WHEN NOT \(stationValues) BEGIN SELECT RAISE(ABORT, '\(stationRefusal)'); END"
        ),
        (
            "station_values_on_update", false,
            "CREATE TRIGGER IF NOT EXISTS station_values_on_update BEFORE UPDATE ON stations WHEN NOT \(stationValues) BEGIN SELECT RAISE(ABORT, '\(stationRefusal)'); END"
        ),
    ]

    /// A station row's values over `NEW` (what PostgreSQL's CHECKs say; SQLite can add triggers
    /// to an existing table, not checks).
    static let stationValues = LedgerInvariant.stationValues("NEW.", .sqlite)
    static let stationRefusal = "invalid station: a name, a UUID, major and minor 0…65535 and a power −128…127"
    /// What the ended-time triggers raise (PostgreSQL's CHECK on `attempts` says the same).
    static let endedRefusal = "invalid attempt: an attempt no longer in progress needs the time it ended"

    /// The columns ledgers gained after version 0, with their types and the version that brought
    /// them; a migration adds those missing.
    static let addedColumns: [(name: String, type: String, since: Int)] = [
        ("advertiser_address", "TEXT", 1), ("read_back", "TEXT", 1), ("power", "INTEGER", 2),
        ("heard", "INTEGER", 2), ("rssi_count", "INTEGER", 2), ("rssi_median", "INTEGER", 2),
        ("power_source", "TEXT", 2), ("bench", "TEXT", 3), ("debug_locked", "INTEGER", 4),
        ("run", "TEXT REFERENCES runs(id)", 5),
    ]

    static let stationColumns = ["position", "name", "uuid", "major", "minor", "power", "note"]

    /// `stations.taken` (schema version 5 on): 1 while the station has an attempt verified, in
    /// progress or interrupted (`LedgerCore.retake`), so that a claim and a waiting debugger find
    /// the pending stations by an index instead of reading every one.
    static let takenColumn = "INTEGER NOT NULL DEFAULT 0 CHECK(taken IN (0, 1))"
    static let legacyAttemptColumns = [
        "id", "station", "chip", "debugger", "template", "template_sha256", "image_sha256", "started_at", "finished_at",
        "outcome", "reason", "verify_method",
    ]
}

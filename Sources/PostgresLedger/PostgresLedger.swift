import BeaconPayload
public import StationLedger

/// The ledger on a PostgreSQL server, shared by several benches: the same records and promises as
/// the SQLite ledger, each kept by the server itself — unique and partial unique indexes, CHECK
/// constraints (the chip-id rule among them) and foreign keys — so that no client, and no bug in
/// one, can break them. Every change is one transaction; claims lock the station row they take
/// (`FOR UPDATE SKIP LOCKED`), so benches never wait on each other's claims; a transaction the
/// server aborts for a serialization failure or a deadlock is run again.
///
/// Each bench has a name, recorded on its attempts; what protects a burn is its run's lease
/// (`LedgerCore`): one live run per bench name, every change of an attempt fenced by the lease,
/// and only the attempts of runs that are over recovered, whichever bench recovers them.
///
/// A lost connection is made again and the transaction run again (`PostgresConnection`); the
/// changes that may be repeated after a COMMIT whose answer was lost find their own work and
/// accept it (a finish already recorded, an attempt already started by this run's debugger).
public final class PostgresLedger: ForwardingLedger, Sendable {
    let connection: PostgresConnection
    /// The bench this process is.
    public let bench: String
    /// The ledger's own identity (`ledger_meta.ledger_id`, a random UUID made with it): a bench's
    /// journal names the ledger it was written for.
    public let ledgerID: String

    /// The schema that holds the ledger in its database, whoever connects.
    public static let schemaName = "ccbeacon"

    /// The schema version this ccbeacon writes (`ledger_meta.schema_version`); a newer one is
    /// refused. 3: each attempt's debug lock, and the hook runs; 4: runs with leases
    /// (`RunRecord`), each attempt's run; 5: each station's attributes; 6: where each run keeps
    /// its bench's journal (`run_journals`).
    public static let schemaVersion = 6

    /// The schema version of the database as opened: `schemaVersion` for a writer (an earlier one
    /// is migrated when it opens), possibly an earlier one for a reader, which writes nothing.
    public let databaseVersion: Int
    /// The contract of runs and attempts, over this connection.
    let core: LedgerCore
    /// The core every `ProvisioningLedger` requirement is answered by: the ledger's contract,
    /// written once over either database (`LedgerCore`).
    public var forwardee: any ProvisioningLedger { core }

    /// Connects to `url` as bench `bench`, creates the schema in an empty database when `creating`
    /// (under an advisory lock, so two benches starting at once create it once; readers refuse an
    /// empty database instead) and checks an existing one: a database that holds other tables, or
    /// a newer schema, is refused.
    ///
    /// `serverWait`: how long a change keeps trying to reach a server that went away. `exclusive`
    /// (provisioning): registers this process's run at once, refusing a bench name another live
    /// run holds (`beginRun`). `leaseSeconds`: how long each renewal of the run's lease lasts;
    /// `identity`: where the run says it runs.
    public init(
        url: String, bench: String, creating: Bool = true, serverWait: Double = 60, exclusive: Bool = false,
        hooks: Set<AttemptOutcome> = [], leaseSeconds: Double = RunLease.defaultSeconds,
        identity: RunIdentity = .current
    ) throws(LedgerError) {
        // A bench's sessions are told apart in pg_stat_activity by its name.
        // Every session resolves the ledger's names in its own schema, whatever the role's or the
        // URL's search path says (a per-user or temporary schema would make several pools of
        // one database).
        // A bench waits for a server that does not answer yet, as it would mid-run; a reader is
        // told at once.
        let connection = try PostgresConnection(
            url: url, applicationName: bench.isEmpty ? "ccbeacon" : "ccbeacon " + bench,
            searchPath: "\(Self.schemaName), pg_temp", waitingForServer: exclusive ? serverWait : 0)
        self.connection = connection
        connection.serverWait = serverWait
        self.bench = bench
        let opened = try connection.transaction("opening the ledger on \(connection.name)") {
            () throws(LedgerError) -> Int in
            // "CCBL", the SQLite ledger's application id: the lock only orders ccbeacons opening
            // this database at once.
            try connection.execute(
                "SELECT pg_catalog.pg_advisory_xact_lock(1128481356::bigint)", [], "locking the schema")
            let tables = try connection.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [.text(Self.schemaName)],
                "reading the schema"
            ).compactMap { $0.first ?? nil }
            if tables.isEmpty {
                // A ledger an earlier build kept elsewhere (in the session's first schema) is not
                // started afresh beside: its stations would be burned again.
                let elsewhere = try connection.execute(
                    "SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'ledger_meta' AND c.relkind = 'r' AND n.nspname <> $1 AND n.nspname NOT LIKE 'pg\\_temp%' ORDER BY 1",
                    [.text(Self.schemaName)], "looking for a ledger elsewhere"
                ).compactMap { $0.first ?? nil }
                if let schema = elsewhere.first {
                    throw LedgerError(
                        operation: "opening \(connection.name)",
                        message:
                            "a ccbeacon ledger is in schema \(schema), not in schema \(Self.schemaName) where this ccbeacon keeps it; move it there first (CREATE SCHEMA \(Self.schemaName); then ALTER TABLE \(schema).ledger_meta SET SCHEMA \(Self.schemaName), and the same for stations, attempts, calibrations, hook_runs and runs); nothing was written",
                        kind: .refused(.notALedger(tables: ["\(schema).ledger_meta"])))
                }
                guard creating else {
                    // Whether the first provision, as this user, could set the ledger up here.
                    let mayCreate =
                        try connection.execute(
                            "SELECT pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE') OR EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1 AND pg_catalog.has_schema_privilege(oid, 'CREATE'))",
                            [.text(Self.schemaName)], "checking who may set the ledger up"
                        ).first?.first == "t"
                    guard mayCreate else {
                        var error = LedgerError(
                            operation: "opening \(connection.name)",
                            message:
                                "the database holds no ccbeacon ledger, and this user may not create its schema \(Self.schemaName) there, so provision cannot set it up: have the database's owner GRANT CREATE ON DATABASE to this user, or run the first provision as the owner",
                            kind: .database)
                        error.code = "42501"
                        throw error
                    }
                    throw LedgerError(
                        operation: "opening \(connection.name)",
                        message:
                            "the database holds no ccbeacon ledger (no tables in its schema \(Self.schemaName)); a reader creates none",
                        kind: .refused(.notALedger(tables: [])))
                }
                try connection.execute(
                    "CREATE SCHEMA IF NOT EXISTS \(Self.schemaName)", [], "creating the ledger's schema")
                for statement in Self.schema { try connection.execute(statement, [], "creating the ledger") }
                try connection.execute(
                    "INSERT INTO ledger_meta(key, value) VALUES ('application', 'ccbeacon ledger'), ('schema_version', $1), ('ledger_id', pg_catalog.gen_random_uuid()::text)",
                    [.text(String(Self.schemaVersion))], "creating the ledger")
                return Self.schemaVersion
            }
            guard tables.contains("ledger_meta") else {
                throw LedgerError(
                    operation: "opening \(connection.name)",
                    message:
                        "its schema \(Self.schemaName) holds other tables (\(tables.prefix(5).joined(separator: ", "))), not a ccbeacon ledger; give a database without that schema",
                    kind: .refused(.notALedger(tables: tables)))
            }
            let meta = try connection.execute("SELECT key, value FROM ledger_meta", [], "reading the schema")
            let values = Dictionary(meta.compactMap { row in row[0].map { ($0, row[1] ?? "") } }) { first, _ in first }
            guard values["application"] == "ccbeacon ledger", let version = values["schema_version"].flatMap(Int.init)
            else {
                throw LedgerError(
                    operation: "opening \(connection.name)", message: "its ledger_meta is not a ccbeacon ledger's",
                    kind: .refused(.notALedger(tables: tables)))
            }
            guard version <= Self.schemaVersion else {
                throw LedgerError(
                    operation: "opening \(connection.name)",
                    message:
                        "it is a ccbeacon ledger of schema version \(version); this ccbeacon knows versions up to \(Self.schemaVersion)",
                    kind: .refused(.newerSchema(version: version)))
            }
            // A writer brings a ledger of an earlier schema up to this one, in this transaction.
            if creating, version < Self.schemaVersion {
                try Self.migrate(from: version, on: connection)
            }
            // A bench writes only to a ledger whose rules are all there and unchanged: with an
            // index dropped or a trigger added, the server would no longer keep the promises.
            if creating {
                try connection.execute(
                    "INSERT INTO ledger_meta(key, value) VALUES ('ledger_id', pg_catalog.gen_random_uuid()::text) ON CONFLICT DO NOTHING",
                    [], "naming the ledger")
                let gaps = try Self.schemaGaps(on: connection)
                guard gaps.isEmpty else {
                    throw LedgerError(
                        operation: "opening \(connection.name)",
                        message:
                            "its schema is not the one ccbeacon makes: \(gaps.prefix(3).joined(separator: "; "))\(gaps.count > 3 ? "; …" : ""); nothing was written to it",
                        kind: .refused(.damaged(report: gaps)))
                }
            }
            return creating ? Self.schemaVersion : version
        }
        databaseVersion = opened
        var tables: LedgerTables = [.calibrations]
        if opened >= 3 { tables.insert(.hookRuns) }
        if opened >= 4 { tables.formUnion([.runs, .stationState]) }
        if opened >= 5 { tables.insert(.stationAttributes) }
        if opened >= 6 { tables.insert(.runJournals) }
        core = LedgerCore(
            driver: connection, name: connection.name, bench: bench,
            present: Set(LedgerCore.attemptColumns).subtracting(
                (opened < 3 ? ["debug_locked"] : []) + (opened < 4 ? ["run"] : [])),
            tables: tables, hookOutcomes: hooks, leaseSeconds: leaseSeconds, soleRunner: false, identity: identity)
        ledgerID =
            (try connection.transaction("reading the ledger's identity") { () throws(LedgerError) -> String? in
                try connection.execute(
                    "SELECT value FROM ledger_meta WHERE key = 'ledger_id'", [], "reading the ledger"
                )
                .first?.first ?? nil
            }) ?? ""
        if exclusive { try core.beginRun(exclusive: true) }
    }

    /// This process's run ends with the ledger object, tried once (a crash, or a server away,
    /// leaves its lease to run out).
    deinit {
        connection.serverWait = 0
        connection.lockTries = 1
        core.endRun()
    }

    /// The ledger's tables, indexes and rules. Timestamps are ISO 8601 text in UTC, as the SQLite
    /// ledger writes them.
    static let schema =
        [
            "CREATE TABLE ledger_meta(key text PRIMARY KEY, value text NOT NULL)",
            runsTable,
            """
            CREATE TABLE stations(
                position integer NOT NULL, name text PRIMARY KEY CHECK (name <> ''),
                uuid text NOT NULL CHECK (uuid ~ '^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$'),
                major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
                minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
                power integer NOT NULL CHECK (power BETWEEN -128 AND 127), note text,
                taken integer NOT NULL DEFAULT 0 CHECK (taken IN (0, 1)), attributes text, UNIQUE (uuid, major, minor))
            """,
            """
            CREATE TABLE attempts(
                id bigserial PRIMARY KEY, station text NOT NULL REFERENCES stations(name),
                chip text NOT NULL CONSTRAINT attempts_chip_check
                    CHECK (chip ~ '^[0-9A-F]{2}(:[0-9A-F]{2}){5}$' AND chip NOT IN ('00:00:00:00:00:00', 'FF:FF:FF:FF:FF:FF')),
                debugger text NOT NULL, bench text NOT NULL, template text NOT NULL, template_sha256 text NOT NULL,
                image_sha256 text NOT NULL, started_at text NOT NULL, finished_at text,
                outcome text NOT NULL CHECK (outcome IN ('in-progress', 'verified', 'failed', 'interrupted', 'superseded')),
                reason text, verify_method text NOT NULL CHECK (verify_method IN ('crc', 'read')),
                advertiser_address text, read_back text, power integer CHECK (power BETWEEN -128 AND 127),
                heard boolean, rssi_count integer, rssi_median integer, power_source text, debug_locked boolean,
                run text REFERENCES runs(id), CHECK (outcome = 'in-progress' OR finished_at IS NOT NULL))
            """,
            "CREATE UNIQUE INDEX one_verified_per_station ON attempts(station) WHERE outcome = 'verified'",
            "CREATE UNIQUE INDEX one_verified_per_chip ON attempts(chip) WHERE outcome = 'verified'",
            "CREATE UNIQUE INDEX one_active_per_station ON attempts(station) WHERE outcome IN ('in-progress', 'interrupted')",
            // A station verified, in progress or held has exactly one such attempt: none may start
            // while it is verified anywhere.
            "CREATE UNIQUE INDEX one_live_per_station ON attempts(station) WHERE outcome IN ('verified', 'in-progress', 'interrupted')",
            """
            CREATE TABLE calibrations(
                id bigserial PRIMARY KEY, station text NOT NULL REFERENCES stations(name), recorded_at text NOT NULL,
                power integer NOT NULL CHECK (power BETWEEN -128 AND 127), samples integer NOT NULL CHECK (samples >= 20),
                used integer NOT NULL CHECK (used BETWEEN 1 AND samples), source text NOT NULL)
            """,
            hookRunsTable,
            runJournalsTable,
        ] + runIndexes

    /// Runs (`RunRecord`), as in the SQLite ledger (schema version 4 on).
    static let runsTable = """
        CREATE TABLE runs(
            id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'), bench text, host text NOT NULL, process integer NOT NULL,
            machine text NOT NULL, started_at text NOT NULL,
            lease_seconds double precision NOT NULL CHECK (lease_seconds > 0), lease_until double precision NOT NULL,
            ended_at text, ended_because text)
        """

    /// Where each run keeps its bench's journal (schema version 6 on): the path, the token it left
    /// beside it (`RunIdentity.journal`) and where that file is (`OutcomeJournal.placeToken`), and
    /// whether a later run of the bench found both and recorded the journal (`settled`: its held
    /// stations may be released; `LedgerCore.release`).
    static let runJournalsTable = """
        CREATE TABLE run_journals(
            run text PRIMARY KEY REFERENCES runs(id), token text NOT NULL CHECK (token ~ '^[0-9a-f]{32}$'),
            path text NOT NULL, place text, settled integer NOT NULL DEFAULT 0 CHECK (settled IN (0, 1)))
        """

    /// What recovery, the start of a run and a claim look up (schema version 4 on).
    static let runIndexes = [
        "CREATE INDEX in_progress_by_run ON attempts(run) WHERE outcome = 'in-progress'",
        "CREATE INDEX open_runs_by_bench ON runs(bench) WHERE ended_at IS NULL",
        "CREATE INDEX pending_by_position ON stations(position) WHERE taken = 0",
        "CREATE INDEX interrupted_by_chip ON attempts(chip) WHERE outcome = 'interrupted'",
    ]

    /// Hook runs (`HookRun`), as in the SQLite ledger (schema version 3 on).
    static let hookRunsTable = """
        CREATE TABLE hook_runs(
            event_id text PRIMARY KEY CHECK (event_id ~ '^[0-9a-f]{32}$'), attempt bigint NOT NULL REFERENCES attempts(id),
            hook text NOT NULL CHECK (hook IN ('verified', 'failed')), bench text NOT NULL, created_at text NOT NULL,
            tries integer NOT NULL DEFAULT 0 CHECK (tries >= 0), last_status text, delivered_at text,
            UNIQUE (attempt, hook))
        """

    /// Brings the ledger from schema `version` to this one (inside the caller's transaction, under
    /// the schema's lock): 3 added each attempt's debug lock and the hook runs, 4 the runs, 5 each
    /// station's attributes, 6 where each run keeps its journal.
    static func migrate(from version: Int, on connection: PostgresConnection) throws(LedgerError) {
        if version < 3 {
            try connection.execute(
                "ALTER TABLE attempts ADD COLUMN debug_locked boolean", [], "adding the attempts' debug lock")
            try connection.execute(hookRunsTable, [], "adding the hook runs")
        }
        if version < 4 {
            try connection.execute(runsTable, [], "adding the runs")
            try connection.execute(
                "ALTER TABLE attempts ADD COLUMN run text REFERENCES runs(id)", [], "adding the attempts' run")
            try connection.execute(
                "ALTER TABLE stations ADD COLUMN taken integer NOT NULL DEFAULT 0 CHECK (taken IN (0, 1))", [],
                "adding the stations' state")
            try connection.execute(LedgerCore.retakeAll, [], "recording each station's state")
            for statement in runIndexes { try connection.execute(statement, [], "adding the runs' indexes") }
        }
        if version < 5 {
            try connection.execute(
                "ALTER TABLE stations ADD COLUMN attributes text", [], "adding the stations' attributes")
        }
        if version < 6 {
            try connection.execute(runJournalsTable, [], "adding where each run keeps its journal")
        }
        try connection.execute(
            "UPDATE ledger_meta SET value = $1 WHERE key = 'schema_version'", [.text(String(schemaVersion))],
            "recording the schema version")
    }

}

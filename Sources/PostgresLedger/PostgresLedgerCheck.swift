public import StationLedger

extension PostgresLedger {
    /// Checks the ledger on the server without trusting its indexes: the schema's indexes and
    /// constraints are those ccbeacon makes (compared with a copy of the schema made in a
    /// temporary schema and rolled back), every index valid, and each invariant by a query that
    /// scans the tables. Returns every problem found (empty when the ledger is sound); a check
    /// that cannot run is itself a problem. Nothing is written.
    public func check() -> [LedgerProblem] { checkReport().problems }

    /// `check()`'s problems, and what could not be checked: on a read-only server (a standby, or
    /// `default_transaction_read_only`) the schema is not compared — that needs a temporary copy
    /// — and the note says so; the invariants are checked all the same.
    public func checkReport() -> (problems: [LedgerProblem], notes: [String]) {
        var problems: [LedgerProblem] = []
        var notes: [String] = []
        do throws(LedgerError) {
            let readOnly = try connection.transaction("checking the schema") { () throws(LedgerError) -> Bool in
                try connection.execute("SELECT pg_catalog.current_setting('transaction_read_only')", [], "checking")
                    .first?.first == "on"
            }
            if databaseVersion < Self.schemaVersion {
                // An earlier ccbeacon's schema is not this one's: the first bench migrates it.
                notes.append(
                    "schema version \(databaseVersion), from an earlier ccbeacon: every invariant checked; provision migrates it to version \(Self.schemaVersion)"
                )
            } else if readOnly {
                notes.append("schema not compared: the server is read-only (a standby?); every invariant was checked")
            } else {
                problems += try Self.schemaGaps(on: connection).map { LedgerProblem(check: .schema, detail: $0) }
            }
        } catch { problems.append(LedgerProblem(check: .schema, detail: "cannot be checked: \(error.message)")) }
        problems += core.invariantProblems()
        return (problems, notes)
    }

    /// What the schema lacks or has changed: each of ccbeacon's tables, indexes (unique, valid)
    /// and constraints compared with the schema as this ccbeacon makes it.
    static func schemaGaps(on connection: PostgresConnection) throws(LedgerError) -> [String] {
        try connection.transaction("checking the schema") { () throws(LedgerError) -> [String] in
            let present = try schemaShape(temporary: false, on: connection)
            // The expected shape: the schema made in this session's temporary schema and rolled
            // back (needs only the TEMP privilege every role has by default).
            try connection.execute("SAVEPOINT expected_shape", [], "checking the schema")
            try connection.execute("SET LOCAL search_path = pg_temp", [], "checking the schema")
            for statement in schema { try connection.execute(statement, [], "checking the schema") }
            let expected = try schemaShape(temporary: true, on: connection)
            try connection.execute("ROLLBACK TO SAVEPOINT expected_shape", [], "checking the schema")
            var gaps: [String] = []
            for item in expected.sorted() where !present.contains(item) { gaps.append("missing or changed: \(item)") }
            for item in present.sorted() where !expected.contains(item) { gaps.append("not ccbeacon's: \(item)") }
            let invalid = try connection.execute(
                "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = '\(schemaName)'::regnamespace AND NOT (i.indisvalid AND i.indisready)",
                [], "checking the indexes")
            gaps += invalid.map { "index \($0[0] ?? "?") is not valid (a failed CREATE INDEX CONCURRENTLY?)" }
            // Only the schema's owner may put anything in it, and owns all of it: a function or
            // operator someone else adds there can take the place of a built-in one.
            let owners = try connection.execute(
                """
                SELECT 'relation ' || c.relname || ' is owned by ' || c.relowner::regrole::text || ', not by the schema''s owner '
                    || n.nspowner::regrole::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = $1 AND c.relowner <> n.nspowner
                UNION ALL SELECT CASE WHEN a.grantee = 0 THEN 'every role (PUBLIC)' ELSE 'role ' || a.grantee::regrole::text END
                    || ' may create objects in schema ' || n.nspname || ' (only its owner may)'
                    FROM pg_namespace n, aclexplode(n.nspacl) a
                    WHERE n.nspname = $1 AND a.privilege_type = 'CREATE' AND a.grantee <> n.nspowner
                """, [.text(schemaName)], "checking who owns the schema")
            gaps += owners.compactMap { $0.first ?? nil }
            return gaps
        }
    }

    /// The ledger's schema (or, `temporary`, the session's temporary schema) as lines: each
    /// ccbeacon table's columns, each index's definition and each constraint's, without the
    /// schema's name.
    static func schemaShape(temporary: Bool, on connection: PostgresConnection) throws(LedgerError) -> Set<String> {
        let tables = "ARRAY['ledger_meta', 'stations', 'attempts', 'calibrations', 'hook_runs', 'runs', 'run_journals']"
        let schema = temporary ? "pg_my_temp_schema()" : "'\(schemaName)'::regnamespace"
        let columns = try connection.execute(
            "SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relnamespace = \(schema) AND c.relname = ANY(\(tables)) AND a.attnum > 0 AND NOT a.attisdropped",
            [], "reading the columns")
        let indexes = try connection.execute(
            "SELECT 'index ' || c.relname || ': ' || regexp_replace(pg_get_indexdef(c.oid), ' ON [^ ]*\\.', ' ON ') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid WHERE c.relnamespace = \(schema) AND t.relname = ANY(\(tables))",
            [], "reading the indexes")
        let constraints = try connection.execute(
            "SELECT 'constraint ' || t.relname || '.' || k.conname || ': ' || regexp_replace(pg_get_constraintdef(k.oid), 'REFERENCES [^ ]*\\.', 'REFERENCES ') FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid WHERE t.relnamespace = \(schema) AND t.relname = ANY(\(tables))",
            [], "reading the constraints")
        // What else changes what a table does or keeps: triggers (and disabled internal ones, such
        // as a foreign key's), rules, row security, persistence, defaults, inheritance.
        let ours = "c.relnamespace = \(schema) AND c.relname = ANY(\(tables))"
        let behaviour = try connection.execute(
            """
            SELECT 'trigger ' || c.relname || '.' || t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                WHERE \(ours) AND NOT t.tgisinternal
            UNION ALL SELECT 'disabled internal trigger on ' || c.relname FROM pg_trigger t
                JOIN pg_class c ON c.oid = t.tgrelid WHERE \(ours) AND t.tgisinternal AND t.tgenabled = 'D'
            UNION ALL SELECT 'rule ' || c.relname || '.' || r.rulename FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
                WHERE \(ours)
            UNION ALL SELECT 'policy ' || c.relname || '.' || p.polname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
                WHERE \(ours)
            UNION ALL SELECT 'table ' || c.relname || ': ' || CASE c.relpersistence WHEN 'u' THEN 'unlogged' ELSE 'logged' END
                || CASE WHEN c.relrowsecurity OR c.relforcerowsecurity THEN ', row security' ELSE '' END
                || ', kind ' || c.relkind::text FROM pg_class c WHERE \(ours)
            UNION ALL SELECT 'default ' || c.relname || '.' || a.attname || ': '
                || regexp_replace(pg_get_expr(d.adbin, d.adrelid), '(\(schemaName)|pg_temp(_[0-9]+)?)\\.', '', 'g')
                FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid
                JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE \(ours)
            UNION ALL SELECT 'relation ' || c.relname || ' (' || c.relkind::text || ')' FROM pg_class c
                WHERE c.relnamespace = \(schema)
            UNION ALL SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = \(schema)
            UNION ALL SELECT 'operator ' || o.oid::regoperator::text FROM pg_operator o WHERE o.oprnamespace = \(schema)
            UNION ALL SELECT 'type ' || t.typname FROM pg_type t WHERE t.typnamespace = \(schema) AND t.typrelid = 0
                AND t.typelem = 0
            UNION ALL SELECT 'inherited by ' || c.relname || ': ' || child.relname FROM pg_inherits i
                JOIN pg_class c ON c.oid = i.inhparent JOIN pg_class child ON child.oid = i.inhrelid WHERE \(ours)
            """, [], "reading the tables' rules")
        return Set((columns + indexes + constraints + behaviour).compactMap { $0.first ?? nil })
    }
}

extension PostgresLedger: HistoryImporting {
    /// The whole record, read in one REPEATABLE READ transaction (one snapshot, whatever the
    /// benches do meanwhile).
    public func snapshot() throws(LedgerError) -> LedgerHistory {
        try connection.transaction("reading the ledger") { () throws(LedgerError) -> LedgerHistory in
            try connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", [], "reading the ledger")
            return try history()
        }
    }

    /// Whether the ledger holds no station, attempt or calibration.
    public func isEmpty() throws(LedgerError) -> Bool { try core.isEmpty() }

    /// Writes `history` into this empty ledger in one transaction (attempt ids kept, the id
    /// sequence moved past them; `LedgerCore.importHistory`). File attempts without a bench get
    /// `unrecorded`.
    public func importHistory(_ history: LedgerHistory) throws(LedgerError) {
        try core.importHistory(
            history, empty: { () throws(LedgerError) in try isEmpty() },
            copied: { () throws(LedgerError) in try self.history() == history }, unrecordedBench: "unrecorded",
            afterAttempts:
                "SELECT pg_catalog.setval(pg_catalog.pg_get_serial_sequence('ccbeacon.attempts', 'id'), greatest((SELECT max(id) FROM attempts), 1), (SELECT count(*) > 0 FROM attempts))"
        )
    }
}

import StructuredText

/// A value bound to, or read from, a ledger statement. Both drivers speak it: SQLite's own types,
/// and PostgreSQL's columns by their type (integers and booleans as `.integer`, floating point as
/// `.real`, the rest as `.text`).
package enum SQLValue: Sendable, Equatable {
    /// An integer (a boolean is 1 or 0).
    case integer(Int)
    /// A floating-point number (lease times, in seconds).
    case real(Double)
    /// Text.
    case text(String)
    /// NULL.
    case null

    /// The integer, if it is one.
    package var int: Int? { if case .integer(let value) = self { value } else { nil } }
    /// The text, if it is text.
    package var string: String? { if case .text(let value) = self { value } else { nil } }
    /// The number, integer or real.
    package var double: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        default: nil
        }
    }
}

/// What differs between the ledger's two databases in the statements the ledger core writes once.
package struct SQLDialect: Sendable {
    /// The current time as ISO 8601 text in UTC, with milliseconds, on the database's clock.
    package var now: String
    /// The current time in seconds since 1970 (a real number), on the database's clock: the one
    /// clock every run's lease is judged by.
    package var epochSeconds: String
    /// The clause that locks the rows a SELECT reads for a change (`FOR UPDATE`), or nothing where
    /// a write transaction already excludes every other writer (SQLite's `BEGIN IMMEDIATE`).
    package var forUpdate: String
    /// As `forUpdate`, skipping rows another transaction holds (`FOR UPDATE SKIP LOCKED`).
    package var forUpdateSkipLocked: String
    /// The clause that keeps a row from changing until the transaction ends (`FOR SHARE`).
    package var forShare: String
    /// 32 random lower-case hex digits, made by the database.
    package var randomID: String
    /// The first statement of a read that must see one snapshot across its statements, or `nil`
    /// where the connection's lock is all a read gets.
    package var snapshot: String?
    /// Whether no earlier ccbeacon (before runs) runs as a bench: 1 when the session lock such a
    /// build held for as long as it ran, for the bench given as the parameter, is free — taken
    /// then until the transaction ends; `nil` where there was no such lock.
    package var legacyBenchFree: String?
    /// A statement that orders the transactions starting runs one after the other (taken
    /// inside each), or `nil` where write transactions are one at a time anyway.
    package var serializeRuns: String?
    /// A condition true when `column` is not one of the names given as one parameter
    /// (`listParameter`).
    package var notInList: @Sendable (_ column: String) -> String
    /// The names as the one parameter `notInList` takes.
    package var listParameter: @Sendable ([String]) -> SQLValue
    /// `table` under `alias`, read without its indexes (`ledger check`: the indexes are what could
    /// be damaged or missing, so they must not answer).
    package var tableScan: @Sendable (_ table: String, _ alias: String) -> String
    /// The statements that begin a read of `ledger check`: read only, and, where the SQL cannot
    /// say it per table, no index scans.
    package var scanTablesOnly: [String]
    /// The false value of the database's conditions as the ledger's schema spells it.
    package var falseValue: String
    /// A condition true when `column` holds text, or nil where the column's type already says so.
    package var isText: @Sendable (_ column: String) -> String?
    /// A condition true when `column` holds an integer, or nil where the column's type already
    /// says so.
    package var isInteger: @Sendable (_ column: String) -> String?
    /// A condition true when `column` is upper-case hex digits in groups of the given lengths,
    /// separated by `separator` (a UUID: 8, 4, 4, 4, 12 and `-`), case-sensitive.
    package var matchesHex: @Sendable (_ column: String, _ groups: [Int], _ separator: String) -> String

    /// SQLite: one writer at a time, so no row locks.
    package static let sqlite = SQLDialect(
        now: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        epochSeconds: "((julianday('now') - 2440587.5) * 86400.0)",
        forUpdate: "", forUpdateSkipLocked: "", forShare: "",
        randomID: "lower(hex(randomblob(16)))", snapshot: nil, legacyBenchFree: nil, serializeRuns: nil,
        notInList: { "\($0) NOT IN (SELECT value FROM json_each(?))" },
        listParameter: { .text(JSONValue.array($0.map { .string($0) }).compact()) },
        tableScan: { "\($0) AS \($1) NOT INDEXED" }, scanTablesOnly: [], falseValue: "0",
        // SQLite keeps any value in any column: the type is part of the rule.
        isText: { "typeof(\($0)) = 'text'" }, isInteger: { "typeof(\($0)) = 'integer'" },
        // GLOB is case-sensitive: lower-case hex fails.
        matchesHex: { column, groups, separator in
            let pattern = groups.map { String(repeating: "[0-9A-F]", count: $0) }.joined(separator: separator)
            return "\(column) GLOB '\(pattern)'"
        })

    /// PostgreSQL: the server's clock (`clock_timestamp()`, not the transaction's start).
    package static let postgres = SQLDialect(
        now: "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
        epochSeconds: "extract(epoch FROM clock_timestamp())::float8",
        forUpdate: "FOR UPDATE", forUpdateSkipLocked: "FOR UPDATE SKIP LOCKED", forShare: "FOR SHARE",
        randomID: "pg_catalog.replace(pg_catalog.gen_random_uuid()::text, '-', '')",
        snapshot: "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        legacyBenchFree:
            "SELECT pg_catalog.pg_try_advisory_xact_lock(1128481356::integer, pg_catalog.hashtext(?))::integer",
        // "CCBL", as every ccbeacon lock of a database: runs start one at a time.
        serializeRuns: "SELECT pg_catalog.pg_advisory_xact_lock(1128481356::bigint)",
        notInList: { "NOT (\($0) = ANY(?::text[]))" },
        listParameter: { names in
            // A PostgreSQL array literal: each name quoted, quotes and backslashes escaped.
            .text(
                "{"
                    + names.map { "\"" + $0.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\"" }
                    .joined(separator: ",") + "}")
        },
        tableScan: { "\($0) AS \($1)" },
        scanTablesOnly: [
            "SET TRANSACTION READ ONLY", "SET LOCAL enable_indexscan = off", "SET LOCAL enable_bitmapscan = off",
            "SET LOCAL enable_indexonlyscan = off",
        ], falseValue: "false", isText: { _ in nil }, isInteger: { _ in nil },
        matchesHex: { column, groups, separator in
            "\(column) ~ '^\(groups.map { "[0-9A-F]{\($0)}" }.joined(separator: separator))$'"
        })
}

/// The connection a ledger's core runs its statements on: SQLite's C API or libpq. Statements are
/// written with `?` placeholders (a driver that needs `$1…` numbers them). One transaction at a
/// time per connection; a transaction called inside another joins it.
package protocol LedgerDriver: AnyObject, Sendable {
    /// The SQL that differs.
    var dialect: SQLDialect { get }
    /// Runs one statement; returns its rows.
    @discardableResult
    func rows(_ sql: String, _ values: [SQLValue], _ operation: String) throws(LedgerError) -> [[SQLValue]]
    /// Runs `body`, which only reads, on one snapshot where the database gives one (a server's
    /// read is retried after a lost connection like a transaction).
    func reading<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T
    /// Runs `body` in one write transaction.
    @discardableResult
    func inTransaction<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T
    /// Whether the transaction running now repeats one whose COMMIT's answer was lost (it may
    /// have been applied): its body must then accept finding its own work done.
    var isRepeating: Bool { get }
}

import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// A database operation that failed.
public struct LedgerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done.
    public var operation: String
    /// SQLite's message.
    public var message: String
    /// True when a constraint (uniqueness, check) refused the change.
    public var isConstraint: Bool

    /// Plain-words reason.
    public var description: String { "ledger: \(operation): \(message)" }
}

/// A recursive mutex: a transaction holds it while the statements inside take it again.
final class RecursiveLock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()

    init() {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(&mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}

/// A small SQLite connection: statements with bound values, transactions, rows as arrays. Safe to
/// share between threads: every statement, and every whole transaction, runs under one lock.
final class SQLiteDatabase: @unchecked Sendable {
    let handle: OpaquePointer
    let path: String
    let lock = RecursiveLock()
    /// Write transactions run so far on this connection (guarded by `lock`).
    private var transactionCount = 0

    /// Fault injection for the crash-safety tests: with `CCBEACON_TEST_KILL_IN_LEDGER_WRITE=N` the
    /// process kills itself (SIGKILL) inside its Nth write transaction, after the writes and before
    /// COMMIT — a moment that a kill from outside only hits by luck.
    static let killInLedgerWrite: Int? = getenv("CCBEACON_TEST_KILL_IN_LEDGER_WRITE").flatMap {
        Int(String(cString: $0))
    }

    /// SQLite's "destructor" constant telling it to copy bound text.
    static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    init(path: String) throws(LedgerError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite3_close(handle) }
            throw LedgerError(operation: "opening \(path)", message: message, isConstraint: false)
        }
        self.handle = handle
        self.path = path
        sqlite3_busy_timeout(handle, 10_000)
    }

    deinit { sqlite3_close(handle) }

    enum Value: Equatable {
        case integer(Int)
        case text(String)
        case null
    }

    func execute(_ sql: String, _ values: [Value] = [], _ operation: String) throws(LedgerError) {
        _ = try query(sql, values, operation)
    }

    /// Runs one statement; returns its rows.
    func query(_ sql: String, _ values: [Value] = [], _ operation: String) throws(LedgerError) -> [[Value]] {
        try lock.locked { () throws(LedgerError) in try run(sql, values, operation) }
    }

    private func run(_ sql: String, _ values: [Value], _ operation: String) throws(LedgerError) -> [[Value]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw error(operation)
        }
        defer { sqlite3_finalize(statement) }
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            switch value {
            case .integer(let number): sqlite3_bind_int64(statement, position, Int64(number))
            case .text(let text): sqlite3_bind_text(statement, position, text, -1, Self.transient)
            case .null: sqlite3_bind_null(statement, position)
            }
        }
        var rows: [[Value]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw error(operation) }
            rows.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    switch sqlite3_column_type(statement, column) {
                    case SQLITE_INTEGER: return .integer(Int(sqlite3_column_int64(statement, column)))
                    case SQLITE_NULL: return .null
                    default: return .text(String(cString: sqlite3_column_text(statement, column)))
                    }
                })
        }
        return rows
    }

    /// Runs `body` in one IMMEDIATE transaction (so two processes never interleave writes).
    func transaction<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try lock.locked { () throws(LedgerError) -> T in
            try execute("BEGIN IMMEDIATE", [], operation)
            do throws(LedgerError) {
                let result = try body()
                transactionCount += 1
                if transactionCount == Self.killInLedgerWrite { raise(SIGKILL) }
                try execute("COMMIT", [], operation)
                return result
            } catch {
                _ = try? execute("ROLLBACK", [], operation)
                throw error
            }
        }
    }

    func error(_ operation: String) -> LedgerError {
        let code = sqlite3_errcode(handle)
        return LedgerError(
            operation: operation, message: String(cString: sqlite3_errmsg(handle)),
            isConstraint: code == SQLITE_CONSTRAINT)
    }
}

extension SQLiteDatabase.Value {
    var int: Int? { if case .integer(let value) = self { value } else { nil } }
    var string: String? { if case .text(let value) = self { value } else { nil } }
}

import CSQLite
import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// A recursive mutex: a transaction holds it while the statements inside take it again.
/// `@unchecked Sendable` as C glue: a pthread mutex (Synchronization's `Mutex` is not recursive).
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
/// `@unchecked Sendable` as C glue: the sqlite3 handle is used only under `lock`.
final class SQLiteDatabase: @unchecked Sendable {
    let handle: OpaquePointer
    let path: String
    let lock = RecursiveLock()
    /// Write transactions run so far on this connection (guarded by `lock`).
    /// Transactions open (guarded by `lock`): 1 inside one.
    private var depth = 0

    /// SQLite's "destructor" constant telling it to copy bound text.
    static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// How a connection opens its file.
    enum OpenMode {
        /// Read and write, creating the file if there is none (tests and scratch files only: a
        /// ledger is created by `LedgerFile.create`, never by opening a path).
        case create
        /// Read and write an existing file.
        case readWrite
        /// Read only, with SQLite's locks (and, for a WAL file, its -wal and -shm files).
        case readOnly
        /// Read only, without locks or -wal/-shm files (`immutable=1`): only for a WAL file that
        /// has no -wal file, so the main file holds every committed change.
        case immutable
    }

    init(path: String, mode: OpenMode) throws(LedgerError) {
        var handle: OpaquePointer?
        var flags = SQLITE_OPEN_FULLMUTEX
        var name = path
        switch mode {
        case .create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .immutable:
            flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
            name = "file:" + Self.uriEscaped(path) + "?immutable=1"
        }
        guard sqlite3_open_v2(name, &handle, flags, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite3_close(handle) }
            throw LedgerError(operation: "opening \(path)", message: message, kind: .database)
        }
        self.handle = handle
        self.path = path
        sqlite3_busy_timeout(handle, 10_000)
    }

    /// `path` as the path part of a `file:` URI: every byte but unreserved ones and `/` escaped,
    /// so `?`, `#` and `%` in a file name stay part of the name.
    static func uriEscaped(_ path: String) -> String {
        let plain = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/".utf8)
        let digits = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in path.utf8 {
            if plain.contains(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// True when SQLite opened the file read-only (asked to, or because it is write-protected).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    deinit { sqlite3_close(handle) }

    typealias Value = SQLValue

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
            case .real(let number): sqlite3_bind_double(statement, position, number)
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
                    case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
                    case SQLITE_NULL: return .null
                    default:
                        // By its length, not up to a NUL: a text another program wrote with a NUL
                        // inside is read whole (invalid UTF-8 becomes U+FFFD).
                        let bytes = sqlite3_column_text(statement, column)
                        let count = Int(sqlite3_column_bytes(statement, column))
                        guard let bytes else { return .text("") }
                        return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
                    }
                })
        }
        return rows
    }

    /// Runs `body` in one IMMEDIATE transaction (so two processes never interleave writes); a
    /// transaction called inside another joins it.
    func transaction<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try lock.locked { () throws(LedgerError) -> T in
            if depth > 0 { return try body() }
            depth += 1
            defer { depth -= 1 }
            try execute("BEGIN IMMEDIATE", [], operation)
            do throws(LedgerError) {
                let result = try body()
                CrashPoint.inLedgerWrite.pass()
                try execute("COMMIT", [], operation)
                return result
            } catch {
                _ = try? execute("ROLLBACK", [], operation)
                throw error
            }
        }
    }

    func error(_ operation: String) -> LedgerError {
        var message = String(cString: sqlite3_errmsg(handle))
        if sqlite3_errcode(handle) == SQLITE_IOERR {
            // Which I/O failed, and the system's word for it: "disk I/O error" alone tells no one
            // what to fix.
            let system = sqlite3_system_errno(handle)
            message +=
                " (SQLite code \(sqlite3_extended_errcode(handle))\(system != 0 ? ", \(String(cString: strerror(system)))" : ""))"
        }
        let kind: LedgerError.Kind
        switch sqlite3_errcode(handle) {
        case SQLITE_CONSTRAINT: kind = message == ChipID.refusal ? .invalidChipID : .constraint
        case SQLITE_CORRUPT, SQLITE_NOTADB: kind = .damaged
        default: kind = .database
        }
        return LedgerError(operation: operation, message: message, kind: kind)
    }
}

extension SQLiteDatabase: LedgerDriver {
    var dialect: SQLDialect { .sqlite }
    var isRepeating: Bool { false }

    @discardableResult
    func rows(_ sql: String, _ values: [SQLValue], _ operation: String) throws(LedgerError) -> [[SQLValue]] {
        try query(sql, values, operation)
    }

    func inTransaction<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try transaction(operation, body)
    }

    /// Reads under the connection's lock, in a write transaction when one is open (a read-only
    /// connection cannot begin one, and SQLite reads a consistent state statement by statement).
    func reading<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try lock.locked { () throws(LedgerError) -> T in try body() }
    }
}

import CLibPQ
import StationLedger

#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection, used by one thread at a time: every call takes the lock, and a
/// transaction holds it across its statements. A connection the server or the network drops is
/// opened again by the next transaction, which is then run again, for up to `serverWait` seconds
/// (see `transaction`). `@unchecked Sendable` as C glue: the `PGconn` pointer and the state beside
/// it are only touched under the lock.
final class PostgresConnection: @unchecked Sendable {
    private var connection: OpaquePointer?
    private var mutex = pthread_mutex_t()
    /// The URL as given, to connect again.
    private let url: String
    /// How the server is named in messages (`PostgresURL.shown`).
    let name: String
    /// The password libpq read from the URL, kept out of every message.
    let password: String?
    /// How long a transaction keeps trying to reach a server that went away before it fails.
    var serverWait: Double = 60
    /// How many times a transaction is tried whose lock was not granted within `lockWait`.
    var lockTries = 8
    /// Transactions open on this connection: 1 inside one (nested calls join it).
    private var depth = 0
    /// Whether the transaction running now is a repeat after a lost connection, which may have
    /// committed its first run: its body must then accept finding its own work done.
    private(set) var repeating = false

    /// Keywords set before the URL's own (which override them): a server that stops answering
    /// is given up on instead of waited for forever, and the session is named for
    /// `pg_stat_activity` (`application_name`).
    let defaults: [(String, String)]

    /// The schemas every session of this connection resolves names in, set on each new
    /// connection after the URL's own settings (which cannot redirect it).
    let searchPath: String?

    /// Connects to `url` (a libpq URL or key=value string; the password from the URL, PGPASSWORD
    /// or ~/.pgpass) as `applicationName`, resolving names in `searchPath`, waiting up to
    /// `waitingForServer` seconds for a server that does not answer. Failures name the server,
    /// never the password.
    init(
        url: String, applicationName: String = "ccbeacon", searchPath: String? = nil, waitingForServer: Double = 0
    ) throws(LedgerError) {
        self.searchPath = searchPath
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(&mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        self.url = url
        defaults = [
            ("connect_timeout", "10"), ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"),
            ("keepalives_count", "3"), ("tcp_user_timeout", "30000"), ("application_name", applicationName),
        ]
        name = PostgresURL.shown(url)
        guard let parts = PostgresURL.parse(url) else {
            // libpq's own message quotes the part it cannot read, which may be the password.
            throw LedgerError(
                operation: "reading the ledger's URL",
                message:
                    "libpq cannot read it; write it postgresql://USER@HOST[:PORT]/DB?PARAMETERS, percent-encode @ : / ? # % in a password, or give the password in PGPASSWORD or ~/.pgpass",
                kind: .database)
        }
        password = parts["password"]
        // A server that does not answer (or asks to be tried again), or a connection lost while
        // it is being set up, is tried again within `waitingForServer` seconds, as a lost
        // connection mid-run is; a server that answers and refuses (a wrong password, no such
        // database) is told at once.
        var absence = Absence()
        while true {
            do throws(LedgerError) {
                connection = try connect("connecting to \(name)")
                return
            } catch  where error.isConnectionLost {
                try absence.waitOrGiveUp(error, within: waitingForServer, saying: false)
            }
        }
    }

    deinit {
        if let connection { PQfinish(connection) }
        pthread_mutex_destroy(&mutex)
    }

    /// A new connection to the server, or the reason there is none.
    private func connect(_ operation: String) throws(LedgerError) -> OpaquePointer {
        let keywords = defaults.map(\.0) + ["dbname"]
        let values = defaults.map(\.1) + [url]
        var keywordBuffers: [[CChar]?] = keywords.map { Array($0.utf8CString) }
        var valueBuffers: [[CChar]?] = values.map { Array($0.utf8CString) }
        // Made step by step so that errors are verbose: a server that answers and refuses (a
        // wrong password, no such database) says why with its SQLSTATE, which — unlike its words —
        // does not depend on the server's language.
        let made: OpaquePointer? = withPointers(&keywordBuffers) { keywordPointers in
            withPointers(&valueBuffers) { valuePointers in
                PQconnectStartParams(keywordPointers + [nil], valuePointers + [nil], 1)
            }
        }
        if let made {
            PQsetErrorVerbosity(made, PQERRORS_VERBOSE)
            Self.finishConnecting(made, seconds: 10)
        }
        guard let made, PQstatus(made) == CONNECTION_OK else {
            let message = made.map { Self.text(PQerrorMessage($0)) } ?? "out of memory"
            // The server asked for a password and none was given: refused, as a wrong one is
            // (libpq says so without a SQLSTATE).
            let needsPassword = made.map { PQconnectionNeedsPassword($0) == 1 } ?? false
            if let made { PQfinish(made) }
            var (state, words) = Self.serverState(message)
            if needsPassword { state = state ?? "28P01" }
            var error = LedgerError(
                operation: operation,
                message: Self.oneLine(Self.sanitized(words, password: password)),
                kind: .database)
            // The server answered and refused: that, unless it asks to be tried again (starting up,
            // shutting down, too many connections). No answer at all: not made (tried again).
            error.code =
                state.map { Self.transientRefusals.contains($0) ? Self.connectionNotMade : $0 }
                ?? Self.connectionNotMade
            throw error
        }
        // The server's notices (NOTICE, WARNING) are not printed on standard error.
        PQsetNoticeProcessor(made, { _, _ in }, nil)
        // Text goes both ways as UTF-8, whatever PGCLIENTENCODING or the URL says (in another
        // encoding the server would store a station's name garbled).
        guard PQsetClientEncoding(made, "UTF8") == 0 else {
            // The connection lost while it is being set up is a lost connection like any other
            // (made again within the wait); only a server that answers and refuses is that.
            let lost = PQstatus(made) != CONNECTION_OK
            var error = LedgerError(
                operation: operation,
                message: lost
                    ? "the connection was lost while it was being set up (\(Self.oneLine(Self.text(PQerrorMessage(made)))))"
                    : "the server does not take UTF-8 from its clients",
                kind: .database)
            error.code = lost ? Self.connectionFailure : "22021"
            PQfinish(made)
            throw error
        }
        // The schemas names resolve in; and no statement waits longer than `lockWait` for a lock
        // another session holds (a bench paused inside a change): it fails and its transaction
        // is run again, so a paused bench never stops the others for long.
        let settings = (searchPath.map { [("search_path", $0)] } ?? []) + [("lock_timeout", Self.lockWait)]
        for (name, value) in settings {
            let result = name.withCString { name in
                value.withCString { value in
                    PQexecParams(
                        made, "SELECT pg_catalog.set_config($1, $2, false)", 2, nil, [name, value], nil, nil, 0)
                }
            }
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_TUPLES_OK else {
                let failure = Self.error(result, connection: made, operation: operation)
                PQfinish(made)
                throw failure
            }
        }
        return made
    }

    /// Server refusals of a new connection that ask to be tried again: starting up, shutting
    /// down, in recovery, too many connections.
    static let transientRefusals: Set<String> = ["57P01", "57P02", "57P03", "53300", "08006", "08001", "08004"]

    /// Drives a connection started with `PQconnectStartParams` until it is made or failed, for
    /// at most `seconds` (then it is failed).
    static func finishConnecting(_ connection: OpaquePointer, seconds: Double) {
        let deadline = monotonicSeconds() + seconds
        var polling = PGRES_POLLING_WRITING
        while polling != PGRES_POLLING_OK, polling != PGRES_POLLING_FAILED {
            let left = deadline - monotonicSeconds()
            // Out of time: the caller finds it not made, and finishes it.
            guard left > 0, PQsocket(connection) >= 0 else { return }
            var descriptor = pollfd(
                fd: PQsocket(connection), events: Int16(polling == PGRES_POLLING_READING ? POLLIN : POLLOUT),
                revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(left, 1) * 1000))
            if ready < 0, errno != EINTR { break }
            if ready == 0 { continue }
            polling = PQconnectPoll(connection)
        }
    }

    /// A verbose libpq message split into the server's SQLSTATE (when the server sent one:
    /// `FATAL:  28P01:  password …`) and its words without the code and the `LOCATION:` line.
    static func serverState(_ message: String) -> (state: String?, words: String) {
        var state: String?
        var lines: [String] = []
        for line in message.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("LOCATION:") { continue }
            var text = String(line)
            if state == nil,
                let range = ["FATAL:  ", "ERROR:  ", "PANIC:  "].lazy.compactMap({ text.firstRange(of: $0) }).first
            {
                let rest = text[range.upperBound...]
                let code = rest.prefix(5)
                if code.count == 5, code.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isUppercase) }),
                    rest.dropFirst(5).hasPrefix(": ")
                {
                    state = String(code)
                    text = String(text[..<range.upperBound]) + rest.dropFirst(7)
                }
            }
            lines.append(text)
        }
        return (state, lines.joined(separator: "\n"))
    }

    /// The SQLSTATE given to a connection that failed or broke without the server saying why
    /// (`connection_failure`).
    static let connectionFailure = "08006"
    /// The SQLSTATE given to a connection that could not be made at all
    /// (`sqlclient_unable_to_establish_sqlconnection`).
    static let connectionNotMade = "08001"

    /// Runs `body` holding the connection.
    func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }

    /// A value for a statement parameter: text, an integer, or NULL.
    enum Value: Sendable, Equatable {
        case text(String)
        case integer(Int)
        case null

        var parameter: String? {
            switch self {
            case .text(let text): text
            case .integer(let value): String(value)
            case .null: nil
            }
        }
    }

    /// Runs one statement with `$1…` parameters; returns its rows as text (nil for NULL).
    @discardableResult
    func execute(_ sql: String, _ parameters: [Value] = [], _ operation: String) throws(LedgerError) -> [[String?]] {
        try locked { () throws(LedgerError) -> [[String?]] in
            try run(sql, parameters, operation) { result in
                var rows: [[String?]] = []
                let columns = PQnfields(result)
                for row in 0..<PQntuples(result) {
                    rows.append(
                        (0..<columns).map { column in
                            PQgetisnull(result, row, column) == 1 ? nil : Self.text(PQgetvalue(result, row, column))
                        })
                }
                return rows
            }
        }
    }

    /// Runs one statement on the connection (the caller holds the lock) and reads its result with
    /// `read`; a failed statement is the error its result says.
    private func run<T>(
        _ sql: String, _ parameters: [Value], _ operation: String, read: (OpaquePointer?) -> T
    ) throws(LedgerError) -> T {
        guard let connection else {
            var error = LedgerError(
                operation: operation, message: "the connection to \(name) is closed", kind: .database)
            error.code = Self.connectionFailure
            throw error
        }
        let texts = parameters.map(\.parameter)
        // NUL-terminated copies that live through the call.
        var buffers = texts.map { $0.map { Array($0.utf8CString) } }
        let result: OpaquePointer? = withPointers(&buffers) { pointers in
            PQexecParams(connection, sql, Int32(pointers.count), nil, pointers, nil, nil, 0)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw Self.error(result, connection: connection, operation: operation)
        }
        return read(result)
    }

    /// Runs one statement with `$1…` parameters; returns its rows typed by their columns' types.
    func typedRows(_ sql: String, _ parameters: [Value], _ operation: String) throws(LedgerError) -> [[SQLValue]] {
        try locked { () throws(LedgerError) -> [[SQLValue]] in
            try run(sql, parameters, operation) { result in
                let columns = PQnfields(result)
                let types = (0..<columns).map { PQftype(result, $0) }
                var rows: [[SQLValue]] = []
                for row in 0..<PQntuples(result) {
                    rows.append(
                        (0..<columns).map { column -> SQLValue in
                            guard PQgetisnull(result, row, column) == 0 else { return .null }
                            let text = Self.text(PQgetvalue(result, row, column))
                            // By the column's type OID: int8, int2, int4; bool; float4, float8, numeric.
                            switch types[Int(column)] {
                            case 20, 21, 23: return Int(text).map { .integer($0) } ?? .text(text)
                            case 16: return .integer(text == "t" ? 1 : 0)
                            case 700, 701, 1700: return Double(text).map { .real($0) } ?? .text(text)
                            default: return .text(text)
                            }
                        })
                }
                return rows
            }
        }
    }

    /// Calls `body` with C string pointers to `buffers` (nil for NULL).
    private func withPointers<T>(
        _ buffers: inout [[CChar]?], _ body: ([UnsafePointer<CChar>?]) -> T
    ) -> T {
        var pointers: [UnsafePointer<CChar>?] = []
        func next(_ index: Int) -> T {
            guard index < buffers.count else { return body(pointers) }
            guard buffers[index] != nil else {
                pointers.append(nil)
                return next(index + 1)
            }
            return buffers[index]!.withUnsafeBufferPointer { buffer in
                pointers.append(buffer.baseAddress)
                return next(index + 1)
            }
        }
        return next(0)
    }

    /// SQLSTATE classes that mean "try the whole transaction again": serialization failure,
    /// deadlock, and a lock not granted within `lockWait`.
    static let retryable: Set<String> = ["40001", "40P01", "55P03"]

    /// How long a statement waits for a lock another session holds (`lock_timeout`).
    static let lockWait = "5s"
    /// The SQLSTATE of a lock not granted within `lockWait`.
    static let lockNotGranted = "55P03"

    /// Runs `body` in one transaction (READ COMMITTED; the claims lock rows themselves). A
    /// transaction the server aborts for a serialization failure or a deadlock is run again with
    /// back-off; one whose connection is lost — the server restarted or stopped, the backend
    /// terminated, the network gone — is run again on a new connection, with back-off, until
    /// the server answers or `serverWait` seconds have passed (then the last error is thrown,
    /// marked `isConnectionLost`). A lost COMMIT may have been applied: the repeat runs with
    /// `repeating` set. A transaction called inside another joins it.
    @discardableResult
    func transaction<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try locked { () throws(LedgerError) -> T in
            if depth > 0 { return try body() }
            var attempt = 0
            var absence = Absence()
            defer { repeating = false }
            while true {
                attempt += 1
                do throws(LedgerError) {
                    if connection == nil { connection = try connect("connecting to \(name) again") }
                    depth += 1
                    defer { depth -= 1 }
                    try execute("BEGIN", [], operation)
                    do throws(LedgerError) {
                        let value = try body()
                        try execute("COMMIT", [], operation)
                        return value
                    } catch {
                        if !error.isConnectionLost { _ = try? execute("ROLLBACK", [], operation) }
                        throw error
                    }
                } catch {
                    if error.isConnectionLost {
                        // The connection is of no further use: a new one is made for the repeat.
                        if let connection { PQfinish(connection) }
                        connection = nil
                        try absence.waitOrGiveUp(error, within: serverWait, saying: true)
                        repeating = true
                        continue
                    }
                    guard let code = error.code, Self.retryable.contains(code),
                        attempt < (code == Self.lockNotGranted ? lockTries : 8)
                    else { throw error }
                    usleep(UInt32(min(200_000, 5_000 << attempt)))
                }
            }
        }
    }

    /// How long the server has been away, and the pause before the next try: one wait for a lost
    /// connection, while connecting and in a transaction alike.
    struct Absence {
        var since: Double?
        var pause = 0.05

        /// After a lost connection (`error`): throws it once `within` seconds passed since the
        /// first loss — `saying` for how long — else sleeps, backing off, before the next try.
        mutating func waitOrGiveUp(_ error: LedgerError, within wait: Double, saying: Bool) throws(LedgerError) {
            let now = PostgresConnection.monotonicSeconds()
            let first = since ?? now
            since = first
            guard now - first < wait else {
                guard saying else { throw error }
                var given = error
                given.message = "\(error.message) (the server did not answer for \(Int((now - first).rounded())) s)"
                throw given
            }
            usleep(UInt32(min(pause, max(0.01, wait - (now - first))) * 1_000_000))
            pause = min(pause * 2, 2)
        }
    }

    /// Seconds on a clock that only goes forward.
    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The error of a failed result, by its SQLSTATE: integrity violations are the schema's
    /// refusals (the chip-id rule told apart by its constraint's name), the rest database failures.
    static func error(_ result: OpaquePointer?, connection: OpaquePointer, operation: String) -> LedgerError {
        let field = { (code: Int32) -> String? in
            guard let result, let value = PQresultErrorField(result, code) else { return nil }
            return String(cString: value)
        }
        let state = field(Int32(UInt8(ascii: "C"))) ?? ""
        let message =
            field(Int32(UInt8(ascii: "M")))
            ?? oneLine(text(PQerrorMessage(connection)))
        let constraint = field(Int32(UInt8(ascii: "n"))) ?? ""
        var error: LedgerError
        // A connection the server closed or the network broke: libpq gives no SQLSTATE then (the
        // server gives one with every error it sends), and the status may still say OK — after a
        // crash or an immediate shutdown, say.
        let lost = PQstatus(connection) == CONNECTION_BAD || state.isEmpty
        if lost, !state.hasPrefix("57P") {
            error = LedgerError(operation: operation, message: message, kind: .database)
            error.code = connectionFailure
            return error
        }
        if state.hasPrefix("23") {
            error = LedgerError(
                operation: operation, message: message,
                kind: constraint == "attempts_chip_check" ? .invalidChipID : .constraint)
        } else {
            error = LedgerError(operation: operation, message: message, kind: .database)
        }
        error.code = state
        return error
    }

    /// libpq's message of several lines (`…failed: Connection refused` / `\tIs the server
    /// running…?`) as one: its lines trimmed and joined by `; `, since a message is shown on one
    /// line (a line break in it would be shown `\x0a`).
    static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { line in
            String(line.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    static func text(_ pointer: UnsafePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? ""
    }

    /// libpq's message with the password taken out (libpq does not print it once it has read the
    /// URL; this makes sure no message ever does). Short passwords too: any text is safer garbled.
    static func sanitized(_ message: String, password: String?) -> String {
        guard let password, !password.isEmpty else { return message }
        return message.replacing(password, with: "***")
    }
}

extension PostgresConnection: LedgerDriver {
    var dialect: SQLDialect { .postgres }
    var isRepeating: Bool { repeating }

    func inTransaction<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try transaction(operation, body)
    }

    func reading<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try transaction(operation, body)
    }

    /// Runs one statement written with `?` placeholders; integers and booleans come back as
    /// `.integer`, floating-point numbers as `.real`, the rest as `.text`.
    @discardableResult
    func rows(_ sql: String, _ values: [SQLValue], _ operation: String) throws(LedgerError) -> [[SQLValue]] {
        let parameters: [Value] = values.map { value in
            switch value {
            case .integer(let number): .integer(number)
            case .real(let number): .text(String(number))
            case .text(let text): .text(text)
            case .null: .null
            }
        }
        return try typedRows(Self.numbered(sql), parameters, operation)
    }

    /// `sql` with its `?` placeholders numbered `$1…` (a `?` inside a quoted literal or name is
    /// left alone).
    static func numbered(_ sql: String) -> String {
        var result = ""
        var number = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
                result.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                result.append(character)
            } else if character == "?" {
                number += 1
                result += "$\(number)"
            } else {
                result.append(character)
            }
        }
        return result
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Set<Character>) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

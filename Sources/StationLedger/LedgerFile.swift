import HexText
import Storage
import StructuredText

#if canImport(Glibc)
    import Glibc
#endif

/// Why a file cannot be used as a ledger. Each is found by reading only, before anything is
/// written to the file.
public enum LedgerFileProblem: Sendable, Equatable {
    /// Not a regular file (a folder, a device).
    case notAFile
    /// The file has several names (hard links). SQLite keeps the journal (-wal, -shm) beside the
    /// name it was given, so opened by another name it would miss the records only the journal
    /// holds and, written through, fork the ledger's history.
    case severalNames(count: Int)
    /// A file where SQLite keeps the ledger's journal (`-wal`, `-shm`, `-journal` beside it) that
    /// is not a journal of its own: a link, a file with several names, a folder, or another SQLite
    /// database. SQLite writes the -wal file from its start and maps the -shm file into memory,
    /// so opened through such a name it would overwrite what the name leads to.
    case foreignJournal(suffix: String, what: String)
    /// An empty file (0 bytes).
    case empty
    /// Not an SQLite database; `looksLikeText` when its first bytes are printable text (a station
    /// list given as the ledger, say).
    case notSQLite(looksLikeText: Bool)
    /// An SQLite database of another application: its `PRAGMA application_id`.
    case otherApplication(applicationID: UInt32)
    /// An SQLite database without ccbeacon's tables (and without ccbeacon's application id): the
    /// tables it has.
    case notALedger(tables: [String])
    /// A ccbeacon ledger of a schema version newer than this ccbeacon knows.
    case newerSchema(version: Int)
    /// A ccbeacon ledger that SQLite reports damaged, or that lacks a part of its schema: what
    /// was found.
    case damaged(report: [String])
    /// A shared ledger on which another process runs as this bench (it holds the bench's lock).
    case benchRunning(bench: String)
    /// A shared pool registered with another station list.
    case otherList
}

/// What a ledger is opened for.
public enum LedgerAccess: Sendable, Equatable {
    /// Provisioning: created if no file exists; otherwise checked read-only (identity, schema,
    /// `PRAGMA integrity_check`) and only then opened read-write, switched to WAL and, if it was made
    /// by an earlier ccbeacon, migrated.
    case readWrite
    /// Reading (`ledger show`, `ledger export`): checked like `readWrite`, then read without
    /// writing anything — no journal mode switch, no migration, no -wal or -shm file created
    /// where none exists.
    case readOnly
    /// Inspecting (`ledger check`): like `readOnly`, but damage is left for `SQLiteLedger.check()`
    /// to report instead of refusing the file.
    case inspection
}

/// How a ledger file is recognised, created, checked and migrated. Every check reads only, so a
/// file that is refused is left exactly as it was.
///
/// A ledger is an SQLite database whose `PRAGMA application_id` is `SQLiteLedger.applicationID`
/// and whose `PRAGMA user_version` is its schema version. Ledgers from ccbeacon before version 1
/// have neither (both 0) and are recognised by their `stations` and `attempts` tables.
enum LedgerFile {
    /// What the identity checks found out about a ledger.
    struct Shape {
        /// The schema version; 0 for a ledger from before ledgers carried one.
        var version: Int
        /// The columns `attempts` has.
        var attemptColumns: Set<String>
        /// Whether it has the `calibrations` table (schema version 2 on).
        var hasCalibrations: Bool
        /// Whether it has the `hook_runs` table (schema version 4 on).
        var hasHookRuns: Bool
        /// Whether it has the `runs` table (schema version 5 on).
        var hasRuns: Bool
        /// Whether its stations have `taken` (schema version 5 on).
        var hasTaken: Bool
        /// Whether its stations have `attributes` (schema version 6 on).
        var hasAttributes: Bool
    }

    static let magic = Array("SQLite format 3\0".utf8)

    /// The name SQLite must be given for the ledger at `path`: symbolic links resolved, because
    /// SQLite names the -wal and -shm files after the name it is given — by a symlink's name it
    /// would miss the journal beside the real file. A path that does not exist yet stays as it is.
    /// A path that does not exist yet keeps its name, in its folder's real path.
    static func canonical(_ path: String) -> String {
        func real(_ path: String) -> String? {
            guard let resolved = realpath(path, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        if let resolved = real(path) { return resolved }
        guard let folder = real(Files.directory(of: path)) else { return path }
        let name = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
        return folder == "/" ? "/" + name : folder + "/" + name
    }

    /// The journal names beside `path` checked, as `openChecked` does, before anything is created.
    static func checkJournals(_ path: String) throws(LedgerError) {
        for suffix in journalSuffixes {
            if let found = foreignJournal(path + suffix) {
                throw refusal(.foreignJournal(suffix: suffix, what: found), path)
            }
        }
    }

    static func refusal(_ problem: LedgerFileProblem, _ path: String) -> LedgerError {
        let what: String
        switch problem {
        case .notAFile: what = "it is not a regular file"
        case .severalNames(let count):
            what =
                "it has \(count) names (hard links); SQLite keeps a ledger's journal beside one name, so by another name it would miss or fork recent records — keep one name (remove the other links; a symbolic link is fine)"
        case .foreignJournal(let suffix, let found):
            what =
                "SQLite would keep its journal in \(path)\(suffix), and that \(found), not a journal of this ledger; SQLite writes over its journal, so it would damage what that name leads to"
        case .empty: what = "it is an empty file (0 bytes), not a ccbeacon ledger"
        case .notSQLite(let text):
            what =
                text
                ? "it is a text file, not an SQLite database" : "it is not an SQLite database (no SQLite header)"
        case .otherApplication(let id):
            what =
                "it is an SQLite database of another application (application_id \(hex(id)); ccbeacon ledgers have \(hex(SQLiteLedger.applicationID)))"
        case .notALedger(let tables):
            let listed =
                tables.isEmpty
                ? "no tables"
                : "tables " + tables.map(\.debugDescription).joinedExcerpt()
            what = "it is an SQLite database without ccbeacon's tables (it has \(listed)), not a ccbeacon ledger"
        case .newerSchema(let version):
            what =
                "it is a ccbeacon ledger of schema version \(version); this ccbeacon knows versions up to \(SQLiteLedger.schemaVersion)"
        case .damaged(let report):
            what =
                "it is a damaged ccbeacon ledger: " + report.prefix(3).joined(separator: "; ")
                + (report.count > 3 ? "; …" : "")
        case .benchRunning(let bench):
            what = "another process is running as bench '\(bench)' on it"
        case .otherList:
            what = "its pool was registered with another station list"
        }
        return LedgerError(
            operation: "checking \(path)", message: what + "; nothing was written to it", kind: .refused(problem))
    }

    static func hex(_ value: UInt32) -> String { HexText.address(value, width: 8) }

    /// The temporary name `create` builds a ledger under:
    /// `<path>.ccbeacon-creating-<pid>-<random, base 36>`, a shape no one else's file is
    /// likely to have.
    static func creationName(_ path: String) -> String {
        path + creationMarker + "\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
    }
    static let creationMarker = ".ccbeacon-creating-"
    /// The most a name beside a ledger adds to its path: a creation name (the marker, a process
    /// ID of up to 10 digits, `-`, up to 13 base-36 digits) with SQLite's `-journal`.
    static let besideRoom = creationMarker.utf8.count + 10 + 1 + 13 + "-journal".utf8.count
    /// The longest path SQLite's Unix VFS opens, in bytes (its `mxPathname`, 512, less the NUL).
    static let sqlitePathMax = 511

    /// A name beside `path` of `creationName`'s exact shape, with the process that made it:
    /// 1–10 ASCII digits, `-`, 1–13 of `0-9a-z`.
    struct CreationName {
        /// The full path.
        var path: String
        /// The process that made it.
        var process: pid_t
        /// Its status, from `lstat`.
        var info: stat
        /// Whether an SQLite journal (`-wal`, `-shm`, `-journal`) sits beside it.
        var hasJournal: Bool
    }

    /// The regular files beside `path` named by `creationName`'s exact shape.
    static func creationNames(of path: String) -> [CreationName] {
        let directory = Files.directory(of: path)
        let prefix = Files.lastComponent(path) + creationMarker
        guard let names = try? Files.list(directory) else { return [] }
        func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
        return names.compactMap { name -> CreationName? in
            guard name.hasPrefix(prefix) else { return nil }
            let parts = Array(name.utf8.dropFirst(prefix.utf8.count)).split(
                separator: 0x2D, omittingEmptySubsequences: false)
            guard parts.count == 2, (1...10).contains(parts[0].count), parts[0].allSatisfy(isDigit),
                (1...13).contains(parts[1].count),
                parts[1].allSatisfy({ isDigit($0) || (0x61...0x7A).contains($0) }),
                let process = pid_t(String(decoding: parts[0], as: UTF8.self))
            else { return nil }
            let candidate = Files.join(directory, name)
            var info = stat()
            guard lstat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return CreationName(
                path: candidate, process: process, info: info,
                hasJournal: journalSuffixes.contains { Files.exists(candidate + $0) })
        }
    }

    /// The names beside `path` that are the ledger itself (same device and inode, `info`): what
    /// a creation killed between linking the ledger into place and removing its temporary name
    /// leaves. It never has a journal beside it (the temporary ledger's connection is closed
    /// before it is linked). Any other second name is someone's file.
    static func creationLeftovers(of path: String, _ info: stat) -> [String] {
        creationNames(of: path).filter {
            $0.info.st_dev == info.st_dev && $0.info.st_ino == info.st_ino && !$0.hasJournal
        }.map(\.path)
    }

    /// Removes what creations killed before they linked their ledger left beside `path`: separate
    /// temporary ledgers (and their journals) of processes that no longer run. A live process's
    /// is its creation in progress, and is left alone.
    static func removeAbandonedCreations(of path: String) {
        var ledger = stat()
        let hasLedger = stat(path, &ledger) == 0
        for name in creationNames(of: path) {
            if hasLedger, name.info.st_dev == ledger.st_dev, name.info.st_ino == ledger.st_ino { continue }
            guard kill(name.process, 0) != 0, errno == ESRCH else { continue }
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(name.path + suffix) }
        }
    }

    /// Creates a new, empty ledger at `path` if nothing is there: built under a temporary name
    /// beside it and linked into place, so the path never holds a half-made ledger and a file that
    /// appears meanwhile is never replaced. A crash leaves at most the temporary file (removed by
    /// the next run once its process is gone) or — killed between the link and the removal — a
    /// second name of the ledger that `openChecked` knows for a leftover.
    static func create(_ path: String) throws(LedgerError) {
        removeAbandonedCreations(of: path)
        let temporary = creationName(path)
        defer { for suffix in ["", "-wal", "-shm"] { unlink(temporary + suffix) } }
        try makeEmpty(at: temporary, for: path)
        guard link(temporary, path) == 0 else {
            // Another process made a file there first: it is checked like any existing file.
            if errno == EEXIST { return }
            throw systemError("creating \(path)")
        }
        CrashPoint.afterLedgerLink.pass()
        // The new name made durable; a folder that cannot be synced leaves it as durable as the
        // file system makes it, which is no reason to refuse the ledger.
        try? Files.syncDirectory(Files.directory(of: path))
    }

    /// Makes a new, empty ledger at `temporary`, a creation name of `path` (messages name `path`),
    /// where nothing may be: the schema, stamped, its WAL checkpointed into the file when the
    /// connection closes. The caller links it into place and removes the name.
    static func makeEmpty(at temporary: String, for path: String) throws(LedgerError) {
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw systemError("creating \(path)") }
        close(descriptor)
        do {
            let database = try SQLiteDatabase(path: temporary, mode: .readWrite)
            try database.execute("PRAGMA journal_mode=WAL", [], "creating \(path)")
            try database.execute("PRAGMA synchronous=FULL", [], "creating \(path)")
            try database.transaction("creating \(path)") { () throws(LedgerError) in
                for statement in SQLiteLedger.tables + SQLiteLedger.rules.map(\.sql) {
                    try database.execute(statement, [], "creating the schema")
                }
                try stamp(database)
            }
        }  // the last connection closing checkpoints the WAL into the file and removes -wal and -shm
    }

    static func systemError(_ operation: String) -> LedgerError {
        LedgerError(operation: operation, message: String(cString: strerror(errno)), kind: .database)
    }

    /// Sets the ledger's application id and schema version (inside the caller's transaction).
    static func stamp(_ database: SQLiteDatabase) throws(LedgerError) {
        try database.execute(
            "PRAGMA application_id = \(Int32(bitPattern: SQLiteLedger.applicationID))", [], "setting the application id"
        )
        try database.execute(
            "PRAGMA user_version = \(SQLiteLedger.schemaVersion)", [], "setting the schema version")
    }

    /// Opens the existing file at `path` read-only and checks it is a ledger this ccbeacon may use:
    /// its first bytes, its write-ahead log (`WriteAheadLog`: not damaged inside), its identity and
    /// tables, and — unless only inspecting — `PRAGMA integrity_check`; for provisioning, also that
    /// a current ledger still has every index and trigger that keeps its promises.
    ///
    /// A WAL ledger with no -wal file beside it is read with `immutable=1`: every committed change
    /// is then in the main file, and SQLite would otherwise create -wal and -shm files (and leave
    /// them, a read-only connection cannot remove them) or, in a folder it cannot write, refuse to
    /// open it. With a -wal file present SQLite's own locking is used, so a running provisioning
    /// is read consistently; it then needs the -shm file, or a folder where it can create one.
    static func openChecked(_ path: String, access: LedgerAccess) throws(LedgerError) -> (SQLiteDatabase, Shape) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw systemError("opening \(path)") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw refusal(.notAFile, path) }
        var leftovers: [String] = []
        if info.st_nlink > 1 {
            leftovers = creationLeftovers(of: path, info)
            guard Int(info.st_nlink) - leftovers.count == 1 else {
                throw refusal(.severalNames(count: Int(info.st_nlink)), path)
            }
        }
        try checkJournals(path)
        let header = try readHeader(path, info)
        let isWAL = header[18] == 2 && header[19] == 2
        // The page size as the database's header gives it (1 stands for 65,536).
        let pageSize = Int(header[16]) << 8 | Int(header[17])
        if isWAL, let problem = WriteAheadLog.damage(at: path + "-wal", pageSize: pageSize == 1 ? 65536 : pageSize) {
            throw refusal(.damaged(report: ["\(path)-wal: \(problem)"]), path)
        }
        let database = try SQLiteDatabase(
            path: path, mode: isWAL && !Files.exists(path + "-wal") ? .immutable : .readOnly)
        let shape = try identify(database, path)
        if access != .inspection {
            let report = try damageCheck(database, path) { () throws(LedgerError) in
                // integrity_check, not quick_check: an index out of step with its table (pages
                // whole) passes quick_check, and a claim through it took a verified station again.
                try database.query("PRAGMA integrity_check", [], "checking \(path)").compactMap { $0.first?.string }
            }
            guard report == ["ok"] else { throw refusal(.damaged(report: report), path) }
        }
        if access == .readWrite, shape.version == SQLiteLedger.schemaVersion {
            let gaps = try schemaGaps(database, path)
            guard gaps.isEmpty else { throw refusal(.damaged(report: gaps), path) }
        }
        // Only a run that writes the ledger tidies its folder, and only once the ledger passed
        // every check (a refused file and its folder are left as they were); readers leave it.
        if access == .readWrite {
            for name in leftovers { unlink(name) }
            removeAbandonedCreations(of: path)
            try? Files.syncDirectory(Files.directory(of: path))
        }
        return (database, shape)
    }

    /// The names SQLite gives the files it keeps beside a database: the WAL and its index, and
    /// the rollback journal of a ledger not yet switched to WAL.
    static let journalSuffixes = ["-wal", "-shm", "-journal"]

    /// What is wrong with the journal file at `path`, in words, or nil when nothing is there or
    /// it is a plain file of its own that is not an SQLite database. Read with `lstat` and one
    /// read, never opened for writing.
    static func foreignJournal(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: return "is a symbolic link"
        case S_IFDIR: return "is a folder"
        default: return "is not a regular file"
        }
        if info.st_nlink > 1 { return "has \(info.st_nlink) names (hard links): it is another file too" }
        return isSQLiteDatabase(path, following: false) ? "is an SQLite database" : nil
    }

    /// Whether the file at `path` begins as an SQLite database does: one read, never a write
    /// (nor a wait: a FIFO is opened without blocking); `following` a symbolic link at `path`.
    static func isSQLiteDatabase(_ path: String, following: Bool) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (following ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var first = [UInt8](repeating: 0, count: magic.count)
        let got = first.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
        return got == magic.count && first == magic
    }

    /// The first 100 bytes (SQLite's header) of the regular file at `path`, whose status
    /// `openChecked` read (`info`); an empty file is refused.
    static func readHeader(_ path: String, _ info: stat) throws(LedgerError) -> [UInt8] {
        guard info.st_size > 0 else { throw refusal(.empty, path) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw systemError("opening \(path)") }
        defer { close(descriptor) }
        var header = [UInt8](repeating: 0, count: 100)
        var count = 0
        while count < header.count {
            let got = header.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        guard count == header.count, header.starts(with: magic) else {
            let text = header[..<count].allSatisfy {
                $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D
            }
            throw refusal(.notSQLite(looksLikeText: text), path)
        }
        if let problem = headerProblem(header) { throw refusal(.damaged(report: [problem]), path) }
        return header
    }

    /// What is wrong with an SQLite file header past its magic string, or `nil`: a field SQLite
    /// refuses as an unsupported format (its file format, sqlite.org/fileformat.html §1.3), told
    /// here as the damage it is rather than as SQLite's bare "unsupported file format".
    static func headerProblem(_ header: [UInt8]) -> String? {
        let pageSize = Int(header[16]) << 8 | Int(header[17])
        if !(pageSize == 1 || (512...32768).contains(pageSize) && pageSize & (pageSize - 1) == 0) {
            return "the file header's page size is \(pageSize), not a power of two from 512 to 65536"
        }
        for (offset, what) in [(18, "write version"), (19, "read version")] where !(1...2).contains(header[offset]) {
            return "the file header's \(what) is \(header[offset]), not 1 or 2"
        }
        if header[21...23] != [64, 32, 32] {
            return
                "the file header's payload fractions are \(header[21...23].map(String.init).joined(separator: ", ")), not 64, 32, 32"
        }
        let schemaFormat = header[44...47].reduce(0) { $0 << 8 | Int($1) }
        if !(0...4).contains(schemaFormat) {
            return "the file header's schema format number is \(schemaFormat); SQLite knows 1 to 4"
        }
        return nil
    }

    /// Runs `body`; SQLite finding the file corrupt becomes a refusal of a damaged ledger.
    static func damageCheck<T>(_ database: SQLiteDatabase, _ path: String, _ body: () throws(LedgerError) -> T)
        throws(LedgerError) -> T
    {
        do { return try body() } catch {
            if error.kind == .damaged { throw refusal(.damaged(report: [error.message]), path) }
            throw error
        }
    }

    /// Reads the application id, schema version and tables, and refuses what is not a ledger this
    /// ccbeacon knows.
    static func identify(_ database: SQLiteDatabase, _ path: String) throws(LedgerError) -> Shape {
        try damageCheck(database, path) { () throws(LedgerError) -> Shape in
            let operation = "checking \(path)"
            let applicationID = UInt32(
                truncatingIfNeeded: try database.query("PRAGMA application_id", [], operation).first?.first?.int ?? 0)
            let version = try database.query("PRAGMA user_version", [], operation).first?.first?.int ?? 0
            let tables = try database.query(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                [], operation
            ).compactMap { $0.first?.string }
            let isStamped = applicationID == SQLiteLedger.applicationID && version > 0
            if applicationID != 0, applicationID != SQLiteLedger.applicationID {
                throw refusal(.otherApplication(applicationID: applicationID), path)
            }
            if isStamped, version > SQLiteLedger.schemaVersion { throw refusal(.newerSchema(version: version), path) }
            let stationColumns = try columns("stations", database, operation)
            let requiredStationColumns =
                SQLiteLedger.stationColumns + (isStamped && version >= 5 ? ["taken"] : [])
                + (isStamped && version >= 6 ? ["attributes"] : [])
            let attemptColumns = try columns("attempts", database, operation)
            // A stamped ledger has every column and table of its own version; later ones come with
            // the migration.
            let required =
                SQLiteLedger.legacyAttemptColumns
                + SQLiteLedger.addedColumns.filter { isStamped && $0.since <= version }.map(\.name)
            let calibrationColumns = try columns("calibrations", database, operation)
            let requiredCalibrationColumns = isStamped && version >= 2 ? SQLiteLedger.calibrationColumns : []
            let hookRunColumns = try columns("hook_runs", database, operation)
            let requiredHookRunColumns = isStamped && version >= 4 ? SQLiteLedger.hookRunColumns : []
            let runColumns = try columns("runs", database, operation)
            let requiredRunColumns = isStamped && version >= 5 ? LedgerCore.runColumnNames : []
            let hasTables =
                requiredStationColumns.allSatisfy(stationColumns.contains)
                && required.allSatisfy(attemptColumns.contains)
                && requiredCalibrationColumns.allSatisfy(calibrationColumns.contains)
                && requiredHookRunColumns.allSatisfy(hookRunColumns.contains)
                && requiredRunColumns.allSatisfy(runColumns.contains)
            if isStamped, !hasTables {
                let missing =
                    requiredStationColumns.filter { !stationColumns.contains($0) }.map { "stations.\($0)" }
                    + required.filter { !attemptColumns.contains($0) }.map { "attempts.\($0)" }
                    + requiredCalibrationColumns.filter { !calibrationColumns.contains($0) }.map {
                        "calibrations.\($0)"
                    }
                    + requiredHookRunColumns.filter { !hookRunColumns.contains($0) }.map { "hook_runs.\($0)" }
                    + requiredRunColumns.filter { !runColumns.contains($0) }.map { "runs.\($0)" }
                throw refusal(.damaged(report: ["missing columns " + missing.joined(separator: ", ")]), path)
            }
            // Without ccbeacon's id, only an unversioned database with both tables is a ledger
            // (one from an earlier ccbeacon); anything else belongs to someone else.
            guard hasTables, isStamped || version == 0 else { throw refusal(.notALedger(tables: tables), path) }
            return Shape(
                version: isStamped ? version : 0, attemptColumns: attemptColumns,
                hasCalibrations: SQLiteLedger.calibrationColumns.allSatisfy(calibrationColumns.contains),
                hasHookRuns: SQLiteLedger.hookRunColumns.allSatisfy(hookRunColumns.contains),
                hasRuns: LedgerCore.runColumnNames.allSatisfy(runColumns.contains),
                hasTaken: stationColumns.contains("taken"), hasAttributes: stationColumns.contains("attributes"))
        }
    }

    static func columns(_ table: String, _ database: SQLiteDatabase, _ operation: String) throws(LedgerError)
        -> Set<String>
    {
        Set(
            try database.query("SELECT name FROM pragma_table_info(?)", [.text(table)], operation).compactMap {
                $0.first?.string
            })
    }

    /// The indexes and triggers that keep the ledger's promises and are missing (or no longer
    /// unique), in words.
    static func schemaGaps(_ database: SQLiteDatabase, _ path: String) throws(LedgerError) -> [String] {
        let operation = "checking \(path)"
        // SQLite keeps each CREATE statement as it was given, less "IF NOT EXISTS": compare the
        // whole statement, so an index of that name on other columns (or not unique, or a trigger
        // with another condition) is found too, not only a missing one.
        let present = try database.query(
            "SELECT name, type, sql FROM sqlite_schema WHERE type IN ('index', 'trigger') AND tbl_name IN ('attempts', 'stations', 'runs')",
            [], operation
        ).compactMap { row in row[0].string.map { (name: $0, type: row[1].string ?? "", sql: row[2].string ?? "") } }
        var gaps: [String] = []
        for rule in SQLiteLedger.rules {
            let type = rule.isIndex ? "index" : "trigger"
            let expected = rule.sql.replacing(" IF NOT EXISTS", with: "", maxReplacements: 1)
            guard let found = present.first(where: { $0.name == rule.name && $0.type == type }) else {
                gaps.append(
                    "the \(rule.isIndex ? rule.sql.contains("UNIQUE") ? "unique index" : "index" : "trigger") \(rule.name) is missing"
                )
                continue
            }
            if found.sql != expected {
                gaps.append("the \(type) \(rule.name) is not the one ccbeacon made: \(found.sql.debugDescription)")
            }
        }
        return gaps
    }

    /// Brings a ledger of an earlier ccbeacon to the current schema in one transaction: the
    /// columns added since, the indexes and triggers, the application id and schema version. A
    /// crash leaves it as it was. The identity is read again under the write lock, since another
    /// process may have migrated it meanwhile.
    static func migrate(_ database: SQLiteDatabase, _ path: String) throws(LedgerError) {
        try database.transaction("migrating \(path) to schema version \(SQLiteLedger.schemaVersion)") {
            () throws(LedgerError) in
            let shape = try identify(database, path)
            guard shape.version < SQLiteLedger.schemaVersion else { return }
            if !shape.hasRuns {
                try database.execute(SQLiteLedger.runsTable, [], "adding the runs table")
            }
            for (column, type, _) in SQLiteLedger.addedColumns where !shape.attemptColumns.contains(column) {
                try database.execute("ALTER TABLE attempts ADD COLUMN \(column) \(type)", [], "adding column \(column)")
            }
            if !shape.attemptColumns.contains("power") {
                // Before version 2 a station's power never changed once registered (registering
                // refused another), so it is the power every one of its attempts burned: without
                // it, a calibration recorded later would pass for what the chip carries.
                try database.execute(
                    "UPDATE attempts SET power = (SELECT s.power FROM stations AS s WHERE s.name = attempts.station) WHERE power IS NULL",
                    [], "recording the power earlier attempts burned")
            }
            if !shape.hasCalibrations {
                try database.execute(SQLiteLedger.calibrationsTable, [], "adding the calibrations table")
            }
            if !shape.hasHookRuns {
                try database.execute(SQLiteLedger.hookRunsTable, [], "adding the hook_runs table")
            }
            if !shape.hasTaken {
                try database.execute(
                    "ALTER TABLE stations ADD COLUMN taken \(SQLiteLedger.takenColumn)", [],
                    "adding the stations' state")
            }
            if !shape.hasAttributes {
                try database.execute(
                    "ALTER TABLE stations ADD COLUMN attributes TEXT", [], "adding the stations' attributes")
            }
            try database.execute(LedgerCore.retakeAll, [], "recording each station's state")
            for rule in SQLiteLedger.rules { try database.execute(rule.sql, [], "adding \(rule.name)") }
            try stamp(database)
        }
    }
}

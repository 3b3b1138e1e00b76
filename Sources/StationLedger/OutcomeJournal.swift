import Storage
import StructuredText

#if canImport(Glibc)
    import Glibc
#endif

/// The outcomes a bench burned but could not record because the ledger's server stayed away:
/// one JSON object per line, each written whole and flushed to the disk before the bench stops,
/// in a file beside the station list (`journalPath`). The next run of the bench records them on
/// the server before anything else (`JournalingLedger.replay`), then removes the file. A line a
/// kill cut short is ignored: its attempt is still in progress on the server, so the next run
/// holds its station until its chip is checked — nothing burned goes unrecorded either way.
public struct OutcomeJournal: Sendable {
    /// One outcome kept.
    public struct Entry: Sendable, Equatable {
        /// The ledger it was burned for (`PostgresLedger.ledgerID`) and the bench that burned it:
        /// a journal is replayed only into its own ledger, by its own bench.
        public var ledger: String
        /// The bench.
        public var bench: String
        /// The attempt on the server.
        public var attempt: Int
        /// Its station and chip, for the operator.
        public var station: String
        /// The chip.
        public var chip: String
        /// The outcome burned.
        public var outcome: AttemptOutcome
        /// Why, for a failure.
        public var reason: String?
        /// What was read back (`Attempt.readBack`).
        public var readBack: String?
        /// What a scan heard.
        public var onAir: OnAirCheck?
        /// Whether the chip was debug-locked after it (`Attempt.debugLocked`).
        public var debugLocked = false
        /// Whether the run had a hook for this outcome: its hook run is recorded on replay.
        public var hooked = false
        /// The run that burned it (`RunRecord.id`): replayed only onto an attempt still that
        /// run's; `nil` in journals written before ledgers kept runs.
        public var run: String? = nil

        /// An entry.
        public init(
            ledger: String, bench: String, attempt: Int, station: String, chip: String, outcome: AttemptOutcome,
            reason: String?, readBack: String?, onAir: OnAirCheck?, debugLocked: Bool = false, hooked: Bool = false,
            run: String? = nil
        ) {
            self.run = run
            self.debugLocked = debugLocked
            self.hooked = hooked
            self.ledger = ledger
            self.bench = bench
            self.attempt = attempt
            self.station = station
            self.chip = chip
            self.outcome = outcome
            self.reason = reason
            self.readBack = readBack
            self.onAir = onAir
        }
    }

    /// The file.
    public let path: String

    /// The token the run writing this journal leaves beside it once its folder's journal is
    /// recorded (`JournalingLedger.settlePlace`); `nil` for a journal only read.
    public let runToken: String?

    /// The folder a run keeps its journal and token in, held open from the moment it is made
    /// (before the run reads or writes either): every line, token and removal goes into that very
    /// folder — renamed meanwhile, it still does; deleted, the write fails — never into another
    /// folder that has taken its name (a copy left at its path, the empty mount point of a stick
    /// taken out), where its lines would lie apart from the token that settles its run. `nil` for a
    /// journal only read, reached by its path.
    let folder: PinnedDirectory?

    /// The journal at `path`, of a run whose token is `runToken` (whose folder is then held open).
    public init(path: String, runToken: String? = nil) {
        self.path = path
        self.runToken = runToken
        folder = runToken == nil ? nil : try? PinnedDirectory(Files.directory(of: path))
    }

    /// Where the file `name` beside the journal is reached: in the held folder, or by path.
    func reached(_ name: String) -> String {
        folder.map { Files.join($0.path, name) } ?? Files.join(Files.directory(of: path), name)
    }

    /// The journal's file as it is reached.
    var file: String { reached(Files.lastComponent(path)) }

    /// The run's place token as it is reached.
    var placeFile: String { reached(Files.lastComponent(placePath)) }

    /// Whether the journal's file is there.
    public var exists: Bool { Files.exists(file) }

    /// Where the journal is now, for messages: in the folder it was made in, under that folder's
    /// name now (renamed since, it is there); `path` when the folder is not held or is gone.
    public var currentPath: String {
        // The name the link gives is believed only where it leads to this very folder: a folder
        // deleted, or on a file system unmounted since, has a name that leads nowhere or elsewhere
        // (its path when it started is where a stick is mounted again).
        guard let folder, let now = Files.linkTarget(folder.path), now.hasPrefix("/"),
            let named = PathIdentity.fileID(now), let held = PathIdentity.fileID(folder.path), named == held
        else { return path }
        return Files.join(now, Files.lastComponent(path))
    }

    /// The journal of bench `bench` beside the station list at `listPath` — beside the list file
    /// itself, symbolic links resolved: a list given through a link to it in another folder (the
    /// fifth review) is one list, with one journal.
    public static func journalPath(bench: String, listPath: String) -> String {
        Files.join(Files.directory(of: LedgerFile.canonical(listPath)), "\(namePrefix)\(bench).jsonl")
    }

    /// How every journal's name begins (`ccbeacon-journal-BENCH.jsonl`), and its place token's
    /// (`placePath`).
    static let namePrefix = "ccbeacon-journal-"

    /// The place token's file beside the journal (`ccbeacon-journal-BENCH.place`): the random token
    /// of the last run of the bench that kept its journal here, recorded with that run on the
    /// server together with where it is (`placeIdentity`). A run that finds both there, and has
    /// recorded this folder's journal, knows nothing of that run waits in a journal
    /// (`JournalingLedger.replay`): another machine holds another token or none, and a copy of the
    /// folder — hard-linked or not, or restored from a backup — is another (the folder renamed is
    /// the same one).
    public var placePath: String { String(path.dropLast(".jsonl".count)) + ".place" }

    /// The token `placePath` holds and its `placeIdentity`: `nil` when there is none, or it is not
    /// one ccbeacon wrote (a symbolic link is none).
    public func placeToken() -> (token: String, identity: String)? {
        let place = placeFile
        var status = stat()
        guard lstat(place, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size <= 64,
            let identity = placeIdentity(of: status), let bytes = try? Files.read(place)
        else { return nil }
        var token = String(decoding: bytes, as: UTF8.self)
        if token.last == "\n" { token.removeLast() }
        guard token.count == 32, token.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        return (token, identity)
    }

    /// Where the place token is, as the file system names it: its file's inode and inode change
    /// time (which no tool sets back: a file restored from a backup under a reused inode number
    /// has another) and its folder's inode — `file INODE changed SECONDS.NANOSECONDS in folder
    /// INODE` — which a rename of the folder keeps and a copy does not.
    /// `file` is the token file's `lstat`.
    func placeIdentity(of file: stat) -> String? {
        var status = stat()
        // The held folder through its descriptor's link (followed); else by its path, never a link.
        let found = folder.map { stat($0.path, &status) } ?? lstat(Files.directory(of: placePath), &status)
        guard found == 0 else { return nil }
        return "file \(file.st_ino) changed \(file.st_ctim.tv_sec).\(file.st_ctim.tv_nsec) in folder \(status.st_ino)"
    }

    /// Leaves `token` in `placePath`, durably, replacing the last run's (and the temporary file a
    /// run killed while it wrote one left: the bench's lock is held, so no other is writing);
    /// returns its `placeIdentity`.
    public func leavePlaceToken(_ token: String) throws(LedgerError) -> String {
        let place = placeFile
        let leftover = "." + Files.lastComponent(placePath) + Files.temporaryMarker
        for name in (try? Files.list(Files.directory(of: place))) ?? [] where name.hasPrefix(leftover) {
            unlink(reached(name))
        }
        let operation = "leaving the bench's place token \(placePath)"
        do { try Files.writeAtomically(Array((token + "\n").utf8), to: place) } catch {
            throw LedgerError(operation: operation, message: error.reason, kind: .database)
        }
        var file = stat()
        guard lstat(place, &file) == 0, let identity = placeIdentity(of: file) else {
            throw Self.failure(operation)
        }
        return identity
    }

    /// Takes this run's place token away (what is at `placePath`, through the held folder): an
    /// outcome the journal could not take is recorded nowhere, and no later run may then settle this
    /// run by finding its token — its stations stay held until `--journal-lost`. Removed, or else
    /// emptied (a folder that takes no change of its names may still take one of the file: an empty
    /// `.place` holds no token). Returns why neither could be done, or `nil` (also when the token is
    /// gone with its folder).
    public func withdrawPlaceToken() -> String? {
        guard runToken != nil else { return nil }
        let place = placeFile
        if unlink(place) == 0 {
            try? Files.syncDirectory(Files.directory(of: place))
            return nil
        }
        let code = errno
        if code == ENOENT { return nil }
        let descriptor = open(place, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if descriptor >= 0 {
            defer { close(descriptor) }
            if fsync(descriptor) == 0 { return nil }
        }
        return String(cString: strerror(code))
    }

    /// Whether `path` is where ccbeacon keeps state, which no output may ever be written to, and
    /// what it is: an SQLite database (a ledger, or another application's); the name of SQLite's
    /// `-wal`, `-shm` or `-journal` file of a database beside it (SQLite would take a file there for
    /// part of that database); or a name a bench's journal or its place token takes (every name
    /// beginning `ccbeacon-journal-`, which the bench's next run reads); or the lock file beside any
    /// of them (`.NAME.lock`). The names count whether a file is there or not,
    /// and in any case (a case-insensitive file system takes `-WAL` for `-wal`).
    public static func keptState(at path: String) -> String? {
        let name = Files.lastComponent(path).lowercased()
        // A run's lock beside the state it locks (`.NAME.lock`): replaced, the next run would lock
        // another file than the running one holds.
        let locked = String(Files.lastComponent(path).dropFirst().dropLast(5))
        if name.count > 6, name.hasPrefix("."), name.hasSuffix(".lock"),
            keptState(at: Files.join(Files.directory(of: path), locked)) != nil
        {
            return "is the lock file a running ccbeacon holds"
        }
        if name.hasPrefix(namePrefix) {
            return
                "is named as a bench's journal (\(namePrefix)BENCH.jsonl, .place), which that bench's next run reads"
        }
        for suffix in LedgerFile.journalSuffixes where path.lowercased().hasSuffix(suffix) {
            let database = String(path.dropLast(suffix.count))
            if Files.isFile(database), LedgerFile.isSQLiteDatabase(database, following: true) {
                return "is where SQLite keeps the \(suffix) file of the database '\(database)'"
            }
        }
        if Files.isFile(path), LedgerFile.isSQLiteDatabase(path, following: true) {
            return "is an SQLite database (a ledger, or another application's)"
        }
        return nil
    }

    /// Appends `entry` as one line and makes it durable (the file, and the folder's entry for a
    /// new file) before returning.
    public func append(_ entry: Entry) throws(LedgerError) {
        let line = Array((Self.encode(entry).compact() + "\n").utf8)
        let existed = exists
        // Never through a symbolic link, never waiting on a FIFO: the journal is this bench's own file.
        let descriptor = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard descriptor >= 0 else { throw Self.failure("opening the journal \(path)") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw LedgerError(
                operation: "opening the journal \(path)", message: "it is not a regular file", kind: .database)
        }
        if let code = line.withUnsafeBytes({ Files.writeAll($0, to: descriptor) }) {
            errno = code
            throw Self.failure("writing the journal \(path)")
        }
        guard fsync(descriptor) == 0 else { throw Self.failure("flushing the journal \(path)") }
        if !existed {
            do { try Files.syncDirectory(Files.directory(of: file)) } catch {
                throw LedgerError(operation: "flushing the journal \(path)", message: error.reason, kind: .database)
            }
        }
    }

    /// The entries, oldest first; none when there is no journal. A last line without its newline
    /// (a write a kill cut short) is left out; any other line that is not an entry is refused.
    public func entries() throws(LedgerError) -> [Entry] {
        guard exists else { return [] }
        var link = stat()
        if lstat(file, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
            throw LedgerError(
                operation: "reading the journal \(path)",
                message:
                    "it is a symbolic link; a bench's journal is its own file, written here and never through a link: move the link away",
                kind: .refused(.damaged(report: ["\(path): a symbolic link"])))
        }
        // A bench journals at most the chips in hand when its server went away: a file far
        // larger is not a journal ccbeacon wrote (and is not read into memory whole).
        var info = stat()
        if stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > Self.largest {
            throw LedgerError(
                operation: "reading the journal \(path)",
                message:
                    "it holds \(info.st_size) bytes, far more than a bench journals (at most \(Self.largest)); it is not a journal ccbeacon wrote: look at it, and move it away",
                kind: .refused(.damaged(report: ["\(path): \(info.st_size) bytes"])))
        }
        let bytes: [UInt8]
        do { bytes = try Files.read(file) } catch {
            throw LedgerError(operation: "reading the journal \(path)", message: error.reason, kind: .database)
        }
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        // The text after the last newline: empty, or a line cut short.
        lines.removeLast()
        var entries: [Entry] = []
        for (index, line) in lines.enumerated() where !line.isEmpty {
            do throws(DataFileError) {
                entries.append(try Self.decode(JSONParser.parse(Array(line), file: path), line: index + 1))
            } catch {
                throw LedgerError(
                    operation: "reading the journal \(path)",
                    message:
                        "line \(index + 1) is not an outcome ccbeacon wrote (\(error.message)); the outcomes in it are not recorded yet: keep the file, and fix or remove that line",
                    kind: .refused(.damaged(report: ["\(path):\(index + 1): \(error.message)"])))
            }
        }
        return entries
    }

    /// The largest journal read: thousands of outcomes, far more than the chips in hand of any bench.
    static let largest = 16 << 20

    /// Removes the journal once every entry is recorded.
    public func remove() throws(LedgerError) {
        do { try Files.removeDurably(file) } catch {
            throw LedgerError(operation: "removing the journal \(path)", message: error.reason, kind: .database)
        }
    }

    static func failure(_ operation: String) -> LedgerError {
        LedgerError(operation: operation, message: String(cString: strerror(errno)), kind: .database)
    }

    static func encode(_ entry: Entry) -> JSONValue {
        let text = { (value: String?) -> JSONValue in value.map { .string($0) } ?? .null }
        return .object(
            [
                ("version", .integer(1)), ("ledger", .string(entry.ledger)), ("bench", .string(entry.bench)),
                ("attempt", .integer(entry.attempt)), ("station", .string(entry.station)),
                ("chip", .string(entry.chip)), ("outcome", .string(entry.outcome.rawValue)),
                ("reason", text(entry.reason)), ("readBack", text(entry.readBack)),
                (
                    "onAir",
                    entry.onAir.map {
                        .object([
                            ("heard", .bool($0.heard)), ("rssiCount", .integer($0.rssiCount)),
                            ("rssiMedian", $0.rssiMedian.map { .integer($0) } ?? .null),
                        ])
                    } ?? .null
                ),
            ] + (entry.debugLocked ? [("debugLocked", .bool(true))] : [])
                + (entry.hooked ? [("hooked", .bool(true))] : [])
                + (entry.run.map { [("run", .string($0))] } ?? []))
    }

    /// The outcomes a run journals: those a burn ends with (never one still in progress, nor a
    /// supersession, which no burn records).
    static let journaled: Set<AttemptOutcome> = [.verified, .failed, .interrupted]

    static func decode(_ node: JSONNode, line: Int) throws(DataFileError) -> Entry {
        var reader = try JSONObjectReader(node, file: "journal")
        guard try reader.integer("version", in: 1...1) == 1 else { throw reader.error("version", "unknown") }
        let ledger = try reader.anyString("ledger")
        let bench = try reader.anyString("bench")
        let attempt = try reader.integer("attempt", in: 1...Int.max)
        let station = try reader.anyString("station")
        let chip = try reader.anyString("chip")
        let outcomeText = try reader.anyString("outcome")
        guard let outcome = AttemptOutcome(rawValue: outcomeText), Self.journaled.contains(outcome) else {
            throw reader.error("outcome", "'\(outcomeText)' is not an outcome a burn ends with")
        }
        let reason = try reader.optionalAnyString("reason")
        let readBack = try reader.optionalAnyString("readBack")
        var onAir: OnAirCheck?
        if var heard = try reader.optionalObject("onAir") {
            let wasHeard: Bool
            switch try heard.requiredNode("heard").value {
            case .bool(let value): wasHeard = value
            default: throw heard.error("heard", "must be true or false")
            }
            onAir = OnAirCheck(
                heard: wasHeard, rssiCount: try heard.integer("rssiCount", in: 0...Int.max),
                rssiMedian: try heard.optionalInteger("rssiMedian", in: -128...127))
            try heard.finish()
        }
        var flags = (debugLocked: false, hooked: false)
        for key in ["debugLocked", "hooked"] {
            guard let node = reader.optionalNode(key) else { continue }
            guard case .bool(let value) = node.value else { throw reader.error(key, "must be true or false") }
            if key == "hooked" { flags.hooked = value } else { flags.debugLocked = value }
        }
        let run = try reader.optionalAnyString("run")
        try reader.finish()
        return Entry(
            ledger: ledger, bench: bench, attempt: attempt, station: station, chip: chip, outcome: outcome,
            reason: reason, readBack: readBack, onAir: onAir, debugLocked: flags.debugLocked, hooked: flags.hooked,
            run: run)
    }
}

import CommandLineKit
import PostgresLedger
import Provisioning
import StationLedger
import Storage
import StructuredText

#if canImport(Glibc)
    import Glibc
#endif

/// `ccbeacon ledger migrate`: copies a ledger with its whole history between a file and a
/// PostgreSQL server (either way, or file to file as a checked copy).
enum LedgerMigrateCommand {
    static let command = Command(spec, Arguments.self, run: run)

    static let from = ledger("--from", help: "the ledger to copy (only read)")
    static let to = ledger("--to", help: "where to copy it: a path where no file is, or an empty database")

    /// A ledger option: a file or a URL, never empty.
    static func ledger(_ name: String, help: String) -> Option<String> {
        Option<String>(name, value: "FILE|URL", help: help, completion: .files) { text throws(CommandFailure) in
            guard !text.isEmpty else { throw .usage("\(name) needs a file or a postgresql:// URL, not an empty text") }
            return text
        }
    }

    static let spec = CommandSpec(
        name: "ledger migrate", summary: "copy a ledger with its history between a file and a PostgreSQL server",
        manual: manual,
        table: CommandTable(
            details: """
                Copies every station (list order, current power), every attempt (its id, bench, outcome,
                read-back and on-air check) and every calibration from --from to --to. The source is
                checked first (as ledger check does) and only read: a file under the lock provision
                takes, so no run changes it meanwhile; a server in one snapshot. A ledger with a burn
                not settled (in progress, or held) is not copied (its outcome may wait in a bench's
                journal, which is recorded only onto the ledger it was written for), nor a pool with a
                run that may still burn into it: a pool moves once its benches have stopped.

                The target must be empty: for a file, a path where no file is (the copy is built under
                a temporary name beside it and linked into place only once checked); for a server, a
                database without a schema 'ccbeacon' (where the ledger is made; other schemas and their
                tables are left alone) or with an empty ccbeacon ledger (the copy is one transaction). The
                target's own rules check every row on the way in; then it is checked as ledger check
                does and read back, and must equal the source.

                A file ledger of an earlier ccbeacon (or of a run on a host whose name is no bench name)
                recorded no bench: on a server its attempts and hook runs get the bench 'unrecorded', and
                a note says how many of those hook runs are pending (a run with --bench unrecorded
                delivers them; on a file ledger any next run did).

                Exit status: 0 when copied and checked; 65 when the source has problems or the target
                is not empty; 1 when a database failed.

                Examples:
                  ccbeacon ledger migrate --from provisioning.sqlite --to postgresql://bench@db.example/beacons
                  ccbeacon ledger migrate --from postgresql://bench@db.example/beacons --to backup.sqlite
                """,
            options: [from.spec, to.spec]))

    /// What `ledger migrate` was asked: both ledgers, each a file or a server's URL.
    struct Arguments: CommandArguments {
        var source: String
        var target: String

        init(_ command: ParsedCommand) throws(CommandFailure) {
            guard let source = try command.value(from), let target = try command.value(to) else {
                throw .usage("ledger migrate needs --from FILE|URL and --to FILE|URL")
            }
            (self.source, self.target) = (source, target)
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (source, target) = (arguments.source, arguments.target)
        let sourceName = shownLedger(source)
        let targetName = shownLedger(target)
        // A file target that cannot be made is refused before the source is locked or read: a
        // folder or the like, a file that is there (the copy goes only where no file is), a path
        // SQLite cannot make a ledger at, then what any output is checked for (its folder).
        if !PostgresURL.isURL(target) {
            if let kind = Files.nonFileKind(target) {
                throw .usage("--to '\(target.excerpt(limit: 60))' is \(kind); give a path where no file is")
            }
            if let refusal = SQLiteLedger.copyRefusal(at: target) { throw copyFailure(refusal, target: targetName) }
            try refuseLedgerPath(target)
            try CommandSupport.checkOutputs([target], against: [])
        }
        // The source: a file is held under the run lock (no provision writes it meanwhile).
        var lock: FolderLock?
        defer { lock?.release() }
        let ledger: any HistoryImporting
        let problems: [LedgerProblem]
        if PostgresURL.isURL(source) {
            let server = try open(server: source, creating: false)
            ledger = server
            problems = server.check()
        } else {
            guard Files.isFile(source) else {
                throw CommandFailure(
                    .failure, "no ledger at '\(source)'", hint: "give --from the ledger file to copy")
            }
            let (runLock, lockedPath) = try ProvisionCommand.lockForOneRun(source)
            lock = runLock
            let file = try openLedger(lockedPath, access: .inspection)
            ledger = file
            problems = file.check()
        }
        guard problems.isEmpty else {
            throw CommandFailure.data(
                "\(sourceName) has \(problems.count) problem(s), so it is not copied: "
                    + problems.prefix(3).map { "\($0.check.rawValue): \($0.detail)" }.joined(separator: "; "),
                hint: "run 'ccbeacon ledger check --ledger \(sourceName)' for the full report")
        }
        var history: LedgerHistory
        do { history = try ledger.snapshot() } catch { throw ledgerFailure(error, path: sourceName) }
        // A burn still open (in progress, or interrupted: held) may have its outcome where a copy
        // cannot follow: in a bench's journal, which is recorded only onto the ledger it was
        // written for (a copy has another id), and a file copy would release it at once. So a
        // ledger moves only with every burn settled.
        let unsettled = history.attempts.filter { $0.outcome == .inProgress || $0.outcome == .interrupted }
        guard unsettled.isEmpty else {
            let named = unsettled.map {
                "'\($0.station)' on chip \($0.chip)" + ($0.bench.map { " (bench '\($0)')" } ?? "")
            }
            throw CommandFailure(
                .failure,
                "\(sourceName) has \(unsettled.count) burn\(unsettled.count == 1 ? "" : "s") not settled (in progress or held): "
                    + named.joinedExcerpt()
                    + "; a copy would carry them open, away from where their outcome is settled (a pool bench's journal is recorded only onto the ledger it was written for, and a file copy releases a held station at once)",
                hint:
                    "settle them first: let running benches finish, run each bench that held them again (a pool bench records its journal first), attach their chips, or release them with --release-interrupted on the bench that burned them; nothing was copied"
            )
        }
        // A pool bench between two chips has nothing open, but goes on burning into the source:
        // what it burns after the copy would be burned again from the copy. A run is taken for
        // live until it ended, or two minutes after its lease ran out (the server's clock and
        // this machine's may differ).
        if PostgresURL.isURL(source) {
            let now = Double(time(nil))
            let live = history.runs.filter { $0.endedAt == nil && $0.leaseUntil > now - 120 }
            guard live.isEmpty else {
                throw CommandFailure(
                    .failure,
                    "\(sourceName) has \(live.count) run\(live.count == 1 ? "" : "s") that may still be burning: "
                        + live.map { (run: RunRecord) in run.described }.joinedExcerpt(),
                    hint:
                        "stop its benches first (a run that crashed counts as over two minutes after its lease ran out); nothing was copied"
                )
            }
        }
        // Pending hook runs recorded without a bench: any next run of a file ledger delivers them;
        // on a server, only a bench of the name they are given.
        let benchlessPending = history.hookRuns.filter { $0.isPending && $0.bench == nil }.count
        if PostgresURL.isURL(target) {
            // A server records every attempt's bench.
            for index in history.attempts.indices where history.attempts[index].bench == nil {
                history.attempts[index].bench = "unrecorded"
            }
            for index in history.hookRuns.indices {
                if history.hookRuns[index].bench == nil { history.hookRuns[index].bench = "unrecorded" }
                if history.hookRuns[index].attempt.bench == nil { history.hookRuns[index].attempt.bench = "unrecorded" }
            }
            let server = try open(server: target, creating: true)
            do {
                guard try server.isEmpty() else {
                    throw CommandFailure.data(
                        "\(targetName) already holds a ledger with records; migrate copies only into an empty database",
                        hint: "give --to an empty database (createdb NAME), or a new file")
                }
                try server.importHistory(history)
                let after = server.check()
                guard after.isEmpty, try server.snapshot() == history else {
                    throw CommandFailure(
                        .failure,
                        "the copy on \(targetName) does not check out: "
                            + after.prefix(3).map { "\($0.check.rawValue): \($0.detail)" }.joined(separator: "; "),
                        hint: "look at the database before any bench uses it")
                }
            } catch let failure as CommandFailure {
                throw failure
            } catch let error as LedgerError {
                throw copyFailure(error, target: targetName)
            } catch {
                throw CommandFailure(.failure, "\(error)")
            }
        } else {
            do { try SQLiteLedger.createCopy(at: target, of: history) } catch {
                throw copyFailure(error, target: targetName)
            }
        }
        console.output(
            line:
                "copied \(history.stations.count) station(s), \(history.attempts.count) attempt(s), \(history.calibrations.count) calibration(s) and \(history.hookRuns.count) hook run(s) from \(sourceName) to \(targetName); source and copy checked, the copy read back equal"
        )
        if benchlessPending > 0, PostgresURL.isURL(target) {
            console.output(
                line:
                    "note: \(benchlessPending) pending hook run(s) were recorded without a bench; on the server they are bench 'unrecorded''s: 'ccbeacon provision LIST --ledger URL --bench unrecorded' with the hook delivers them"
            )
        }
    }

    /// A failed copy: a rule of the target refused a record, or the target was not empty (65), or
    /// a database failed (1). Nothing of the copy is left.
    static func copyFailure(_ error: LedgerError, target: String) -> CommandFailure {
        if error.isConstraint {
            return .data(
                error.description,
                hint: "nothing was copied to \(target); give a new file or an empty database, and check the source")
        }
        return CommandFailure(.failure, error.description, hint: "nothing was copied to \(target)")
    }

    /// The ledger on a server; `creating`: an empty database gets the schema.
    static func open(server url: String, creating: Bool) throws(CommandFailure) -> PostgresLedger {
        do { return try PostgresLedger(url: url, bench: "", creating: creating) } catch {
            throw ledgerFailure(error, path: PostgresURL.shown(url))
        }
    }
}

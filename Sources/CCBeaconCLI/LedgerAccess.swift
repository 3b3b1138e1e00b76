import BeaconPayload
import BeaconScan
import CCDebugger
import CommandLineKit
import FirmwareTemplate
import PostgresLedger
import Provisioning
import StationLedger
import Storage
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The ledger file: the one `given` by --ledger, or `provisioning.sqlite` beside the list (in the
/// working folder when there is no list).
func ledgerPath(_ given: String?, listPath: String?) -> String {
    if let given { return given }
    return Files.join(listPath.map { Files.directory(of: $0) } ?? ".", "provisioning.sqlite")
}

/// A PostgreSQL ledger given to a command that works on ledger files only (calibrate and scan):
/// refused before the URL is used, or shown, as a path.
func refuseServer(_ path: String) throws(CommandFailure) {
    guard PostgresURL.isURL(path) else { return }
    throw .usage(
        "\(PostgresURL.shown(path)) is a PostgreSQL ledger; provision and ledger show, export, check and migrate use one, calibrate and scan read ledger files only (copy one with 'ccbeacon ledger migrate --from URL --to FILE')"
    )
}

/// A ledger file at a path SQLite cannot open, or make a ledger at (`SQLiteLedger.pathProblem`):
/// refused before anything is locked, created or read.
func refuseLedgerPath(_ path: String) throws(CommandFailure) {
    guard let problem = SQLiteLedger.pathProblem(path) else { return }
    throw .usage("ledger '\(path.excerpt(limit: 60))': \(problem); give a shorter path")
}

/// The ledger as messages name it: a server's URL without its password, a file by its path.
func shownLedger(_ path: String) -> String { PostgresURL.isURL(path) ? PostgresURL.shown(path) : path }

/// Opens the ledger at `path` for `access`. A file that is not a ledger this ccbeacon may use is
/// bad input (exit 65, and nothing was written to it); anything else that stops it is a failure.
func openLedger(
    _ path: String, access: LedgerAccess = .readWrite, bench: String? = nil, hooks: Set<AttemptOutcome> = [],
    leaseSeconds: Double = RunLease.defaultSeconds, process: RunIdentity = .current,
    damaged: (([String]) throws(CommandFailure) -> Void)? = nil
) throws(CommandFailure) -> SQLiteLedger {
    try refuseServer(path)
    try refuseLedgerPath(path)
    do {
        return try SQLiteLedger(
            path: path, access: access, bench: bench, hooks: hooks, leaseSeconds: leaseSeconds, identity: process)
    } catch {
        if case .refused(.damaged(let found)) = error.kind, let damaged { try damaged(found) }
        if case .refused = error.kind { throw ledgerFailure(error, path: path) }
        let need =
            access == .readWrite
            ? "a writable ccbeacon ledger in a writable folder"
            : "readable (a ledger with a -wal file beside it also needs its -shm file, or a folder where SQLite may create one)"
        throw CommandFailure(.failure, error.description, hint: "check that '\(path)' is \(need)")
    }
}

/// A ledger error as the command's failure: a file that is not (or no longer) a usable ledger is
/// bad input (exit 65) with what to do; anything else stopped the command (exit 1).
func ledgerFailure(_ error: LedgerError, path: String) -> CommandFailure {
    let server = PostgresURL.isURL(path)
    if case .refused(let problem) = error.kind {
        return .data(error.description, hint: server ? serverHint(problem) : ledgerHint(problem, path: path))
    }
    if error.isConnectionLost {
        return CommandFailure(
            .failure, error.description,
            hint:
                "check that the server runs and is reachable from this bench; --server-wait says how long a bench waits"
        )
    }
    return CommandFailure(.failure, error.description)
}

/// What to do about a database refused as a shared ledger.
func serverHint(_ problem: LedgerFileProblem) -> String {
    switch problem {
    case .newerSchema: return "use the newer ccbeacon that wrote it; this one must not change it"
    case .damaged:
        return "do not provision with it: run 'ccbeacon ledger check --ledger URL' for the full report"
    case .benchRunning(let bench):
        return
            "give this bench its own name with --bench NAME (the host name is the default), or stop the other run of '\(bench)' first; a run that was paused or cut off is over once its lease runs out (--lease)"
    case .otherList:
        return
            "start every bench of a pool with the list the pool was registered with; another list needs a database of its own"
    default:
        return
            "give the URL of a database that holds a ccbeacon ledger, or of one without a schema 'ccbeacon' (provision creates its ledger there)"
    }
}

/// What to do about a file refused as a ledger.
func ledgerHint(_ problem: LedgerFileProblem, path: String) -> String {
    let elsewhere =
        "check the path; to start a new ledger give --ledger a path where no file exists (ccbeacon creates a ledger only there)"
    switch problem {
    case .notAFile, .notSQLite, .otherApplication, .notALedger: return elsewhere
    case .empty: return "if it is a leftover, delete it; or " + elsewhere
    case .newerSchema: return "use the newer ccbeacon that wrote it; this one must not change it"
    case .severalNames:
        return
            "find the other names with 'find / -samefile \(path)', keep the one the runs use and remove the others (or copy the ledger while no run uses it)"
    case .foreignJournal(let suffix, _):
        return
            "move \(path)\(suffix) away (it may be another ledger or a file you need); SQLite makes its journal there itself"
    case .damaged:
        return
            "do not provision with it: run 'ccbeacon ledger check --ledger \(path)' for the full report, and restore the ledger from a backup"
    case .benchRunning(let bench):
        return
            "give this bench its own name with --bench NAME (the host name is the default), or stop the other run of '\(bench)' first"
    case .otherList:
        return "start every bench of a pool with the same list; another list needs a ledger of its own"
    }
}

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

extension ProvisionCommand {
    /// The ledger a run writes and the lock that makes the run the only one of its kind: for a
    /// file, one run per ledger (`lockForOneRun`); for a server, one run per bench — a lock on the
    /// bench's journal here, and one live run per bench name in the ledger's runs — with the
    /// outcomes a previous run journaled recorded first.
    static func openForRun(
        _ path: String, listPath: String, bench given: String?, serverWait: Double?,
        leaseSeconds: Double = RunLease.defaultSeconds, process: RunIdentity = .current,
        hooks: Set<AttemptOutcome> = [], console: Console
    ) throws(CommandFailure) -> (ledger: any ProvisioningLedger & Sendable, lock: FolderLock) {
        guard PostgresURL.isURL(path) else {
            if serverWait != nil {
                throw .usage("--server-wait applies to a PostgreSQL ledger (--ledger postgresql://…)")
            }
            // The ledger is opened by the very path that was locked: resolved again, a symbolic
            // link retargeted in between would lead to a ledger another run holds.
            let (lock, lockedPath) = try lockForOneRun(path)
            return (
                try openLedger(lockedPath, bench: given, hooks: hooks, leaseSeconds: leaseSeconds, process: process),
                lock
            )
        }
        guard let bench = given else { throw .usage("a shared ledger needs this bench's name: give --bench NAME") }
        let shown = PostgresURL.shown(path)
        // The run records where its journal is, with a token it leaves there once the folder's
        // journal is recorded: only a run that finds it there settles this run (`settlePlace`).
        let journal = OutcomeJournal(
            path: OutcomeJournal.journalPath(bench: bench, listPath: listPath), runToken: RunIdentity.randomHex())
        // An earlier ccbeacon kept the journal beside the list's path as given (a link to it, say):
        // one left there would not be read, and the station it holds could be released.
        let asGiven = Files.join(Files.directory(of: listPath), Files.lastComponent(journal.path))
        if asGiven != journal.path, SQLiteLedger.realPath(asGiven) != journal.path, Files.exists(asGiven) {
            throw CommandFailure(
                .failure,
                "bench '\(bench)' has a journal at '\(asGiven)', beside the link to the list, where an earlier ccbeacon kept it; this ccbeacon keeps it beside the list file, '\(journal.path)'",
                hint:
                    "move it there (mv '\(asGiven)' '\(journal.path)'), then run again: it is recorded first; nothing was burned"
            )
        }
        let lock = try lockBeside(
            journal.path,
            failed: { error in
                CommandFailure(
                    .failure, "cannot lock bench '\(bench)' for this run: \(error)",
                    hint: "the bench keeps its journal beside the station list: that folder must be writable")
            },
            held: { holder in
                CommandFailure(
                    .failure,
                    "another provision\(holder) is running as bench '\(bench)' here; one run per bench",
                    hint: "let it finish, or give this run its own --bench NAME")
            })
        var identity = process
        identity.journal = journal.runToken.map { (journal.path, $0) }
        let server: PostgresLedger
        do {
            server = try PostgresLedger(
                url: path, bench: bench, creating: true, serverWait: serverWait ?? 60, exclusive: true, hooks: hooks,
                leaseSeconds: leaseSeconds, identity: identity)
        } catch {
            lock.release()
            if case .refused = error.kind { throw ledgerFailure(error, path: shown) }
            throw CommandFailure(
                .failure, error.description,
                hint: "check the URL, that the server runs and that this user may connect; nothing was burned")
        }
        return (JournalingLedger(server, journal: journal, ledgerID: server.ledgerID, bench: bench), lock)
    }

    /// The run stopped because the server stayed away: what it burned, and where the outcomes it
    /// could not record wait for the next run.
    static func journaledFailure(
        _ ledger: JournalingLedger, summary: ProvisionSummary, server: String, console: Console
    ) -> CommandFailure {
        let kept = ledger.journaled
        var lines = [
            "provisioned \(summary.verified.count) station(s) in this run; the ledger server \(server) stopped answering"
        ]
        for entry in kept {
            lines.append(
                "  kept in the journal, not yet on the server: '\(entry.station)' on chip \(entry.chip): \(entry.outcome.rawValue)"
            )
        }
        console.output(lines: lines)
        return CommandFailure(
            .failure,
            "the ledger server did not answer; \(kept.count) outcome(s) are kept in the journal \(ledger.journal.currentPath)",
            hint:
                "when the server answers again, run the same provision on this bench: it records the journal first, then goes on"
        )
    }

    /// One run per ledger: another run's burns in progress would look like a crash's to this one
    /// (and with --release-interrupted their stations would go to other chips). The lock (flock on
    /// a hidden file beside the ledger) dies with the process. It sits beside the ledger's real
    /// path: through a symbolic link a second run would otherwise take a lock of its own.
    /// Returns the lock and the real path it guards.
    static func lockForOneRun(_ path: String) throws(CommandFailure) -> (FolderLock, String) {
        try refuseServer(path)
        let realPath = SQLiteLedger.realPath(path)
        // Before the lock beside it is taken: a path SQLite cannot open, or, for a ledger to be
        // made, one no file can be made at (a folder that is missing or is a file, a trailing
        // slash). Whatever is there already is judged as a ledger when it is opened.
        try refuseLedgerPath(path)
        if !Files.exists(path) {
            try CommandSupport.checkOutputs([path], against: [])
        } else if Files.nonFileKind(path) == nil, !Files.isFile(path) {
            // A symbolic link to nothing: none of the checks saw where SQLite would be sent.
            throw .usage("ledger '\(path)' is a symbolic link to nothing; give the ledger file's own path")
        }
        let lock = try lockBeside(
            realPath,
            failed: { error in
                CommandFailure(
                    .failure, "cannot lock the ledger \(path) for this run: \(error)",
                    hint: "provisioning writes the ledger: its folder must be writable")
            },
            held: { holder in
                CommandFailure(
                    .failure, "another provision\(holder) is using the ledger \(path); one run per ledger",
                    hint:
                        "let it finish (or stop it with Ctrl-C); to burn on more debuggers at once, give one run --devices all"
                )
            })
        return (lock, realPath)
    }

    /// The run lock on a hidden file beside `path` (`.NAME.lock`; it dies with the process), taken
    /// without waiting: `held` says what to do when another process holds it (given ` (process
    /// PID)` or nothing), `failed` when it cannot be taken at all.
    static func lockBeside(
        _ path: String, failed: (FolderLock.Failure) -> CommandFailure, held: (String) -> CommandFailure
    ) throws(CommandFailure) -> FolderLock {
        do {
            return try FolderLock.acquire(
                Files.directory(of: path), name: FolderLock.name(guarding: Files.lastComponent(path)), wait: false)
        } catch {
            guard case .held(_, let holder) = error else { throw failed(error) }
            throw held(holder.map { " (process \($0))" } ?? "")
        }
    }

    /// Registers the list, marks what a crash left in progress as interrupted (and says so), and
    /// with `releasing` (this run's bench, and whether its journal elsewhere is given up) lets the
    /// list's held stations go to new chips.
    static func prepare(
        _ ledger: any ProvisioningLedger & Sendable, stations: [Station],
        releasing: (bench: String?, givingUpJournals: Bool)?, path: String, console: Console
    ) throws(CommandFailure) {
        do {
            try ledger.register(stations)
        } catch {
            if case .refused = error.kind { throw ledgerFailure(error, path: path) }
            if error.isConnectionLost { throw ledgerFailure(error, path: path) }
            // A station with another identity or power than the ledger's: the list does not fit
            // this ledger, as another list does not fit a pool (65); a failing database is 1.
            throw CommandFailure(
                error.isConstraint ? .dataError : .failure, error.description,
                hint: "the ledger refused the list; see the message")
        }
        // What a bench burned while its server was away is recorded first — once the list is
        // known to be the pool's, and before its attempts left in progress count as interrupted.
        if let journaling = ledger as? JournalingLedger { try replay(journaling, path: path, console: console) }
        do {
            for interrupted in try ledger.recoverInterrupted() {
                let bench = interrupted.bench.map { " of bench '\($0)'" } ?? ""
                console.diagnostics(
                    line:
                        "interrupted earlier: station '\(interrupted.station)' on chip \(interrupted.chip) (\(interrupted.debugger))\(bench); chip \(interrupted.chip) may carry its identity, so it is held until that chip is attached again"
                )
            }
            if let releasing {
                for (station, chip, result) in try ledger.releaseHeld(
                    in: Set(stations.map(\.name)), givingUpJournals: releasing.givingUpJournals)
                {
                    console.diagnostics(
                        line: releaseLine(
                            station: station, chip: chip, result: result, bench: releasing.bench,
                            journal: (ledger as? JournalingLedger)?.journal.path,
                            givingUpJournals: releasing.givingUpJournals))
                }
            }
        } catch {
            if case .refused = error.kind { throw ledgerFailure(error, path: path) }
            if error.isConnectionLost { throw ledgerFailure(error, path: path) }
            throw CommandFailure(.failure, error.description, hint: "the ledger refused the list; see the message")
        }
    }

    /// What --release-interrupted of bench `bench`, its journal at `journal` (with --journal-lost:
    /// `givingUpJournals`), did with one held station.
    static func releaseLine(
        station: String, chip: String, result: ReleaseResult, bench: String?, journal ownJournal: String?,
        givingUpJournals: Bool
    ) -> String {
        switch result {
        case .released:
            return
                "released '\(station)' (was interrupted on chip \(chip)); chip \(chip) may still carry its identity: erase it (ccbeacon erase) or set it aside"
        case .kept(let keeper, let journal?) where keeper == bench:
            let folder = Files.directory(of: journal.path)
            let start =
                "kept '\(station)' held: this bench's run that was burning it on chip \(chip) kept its journal at '\(journal.path)' on host \(journal.host), "
            if !givingUpJournals, journal.path == ownJournal {
                return start
                    + "where this run keeps its own, but not the token it left beside it in \(Files.lastComponent(OutcomeJournal(path: journal.path).placePath)): this is not the folder that run started in (a copy of it, a folder made at its path after it was renamed or mounted over, another machine with the list at the same path), or that file was damaged or replaced, or the journal could not be written; run bench '\(keeper)' from the folder that run started in, wherever it is now, on that machine (it records the journal first), with --release-interrupted — --journal-lost only once that folder and its journal are known to be lost"
            }
            return givingUpJournals
                ? start
                    + "and a file is there on this machine, which may be that journal; run bench '\(keeper)' with the list in '\(folder)' (it records that journal first), with --release-interrupted — --journal-lost gives up only a journal that is gone"
                : start
                    + "which this run has not recorded (another folder, or another machine); run bench '\(keeper)' with the list in '\(folder)' on that machine (it records that journal first), with --release-interrupted — or, once that journal is gone for good (its machine or folder lost) or recorded (the folder moved to another file system or restored from a copy, and run from there), add --journal-lost"
        case .kept(let keeper, let journal):
            let place = journal.map { " ('\($0.path)' on host \($0.host))" } ?? ""
            return
                "kept '\(station)' held: bench '\(keeper)' was burning it on chip \(chip) and may keep its outcome in its journal\(place); run bench '\(keeper)' again (it records its journal first), with --release-interrupted to release it"
        }
    }

    /// Records a bench's journal on its ledger and says so.
    static func replay(_ ledger: JournalingLedger, path: String, console: Console) throws(CommandFailure) {
        do {
            let replay = try ledger.replay()
            for entry in replay.recorded {
                console.diagnostics(
                    line:
                        "recorded from the journal: '\(entry.station)' on chip \(entry.chip): \(entry.outcome.rawValue)"
                )
            }
            if !replay.alreadyRecorded.isEmpty {
                console.diagnostics(
                    line:
                        "journal: \(replay.alreadyRecorded.count) outcome(s) were already on the server; journal removed"
                )
            }
        } catch {
            if error.isConnectionLost {
                throw CommandFailure(
                    .failure, error.description,
                    hint:
                        "the journal \(ledger.journal.path) holds outcomes burned while the server was away; run again when the server answers — nothing is burned before they are recorded"
                )
            }
            throw CommandFailure(.failure, error.description, hint: "the journal is kept as it was; nothing was burned")
        }
        do { try ledger.settlePlace() } catch {
            throw CommandFailure(
                .failure, error.description,
                hint: error.isConnectionLost
                    ? "run again when the server answers; nothing was burned"
                    : "the bench keeps its place token in '\(ledger.journal.placePath)': move away what is there, then run again; nothing was burned"
            )
        }
    }

    /// The list's progress, a ledger failure as the command's.
    static func progress(_ ledger: any ProvisioningLedger & Sendable, _ listed: Set<String>, path: String)
        throws(CommandFailure)
        -> ListProgress
    {
        do { return try ledger.progress(of: listed) } catch { throw ledgerFailure(error, path: path) }
    }
}

import BeaconPayload
import BeaconScan
import CCDebugger
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

/// The stop signals (SIGINT, SIGTERM, SIGHUP) a provisioning run has received. The signal handler
/// only does atomic operations on it — no lock, no allocation, nothing else is async-signal-safe —
/// and the run polls it.
final class StopSignals: Sendable {
    let count = Atomic<Int>(0)
    let first = Atomic<Int32>(0)

    /// Records a signal; returns how many have arrived, this one included.
    func received(_ number: Int32) -> Int {
        _ = first.compareExchange(expected: 0, desired: number, ordering: .relaxed)
        return count.add(1, ordering: .relaxed).newValue
    }

    /// Forgets earlier signals, before a run installs the handler.
    func reset() {
        count.store(0, ordering: .relaxed)
        first.store(0, ordering: .relaxed)
    }

    /// Whether a stop was asked for.
    var requested: Bool { count.load(ordering: .relaxed) > 0 }
    /// The first signal received, 0 for none.
    var signal: Int32 { first.load(ordering: .relaxed) }
}

/// The process's stop signals: a handler is a C function and can reach only globals.
let stopSignals = StopSignals()

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

/// The ledger as messages name it: a server's URL without its password, a file by its path.
func shownLedger(_ path: String) -> String { PostgresURL.isURL(path) ? PostgresURL.shown(path) : path }

/// Opens the ledger at `path` for `access`. A file that is not a ledger this ccbeacon may use is
/// bad input (exit 65, and nothing was written to it); anything else that stops it is a failure.
func openLedger(
    _ path: String, access: LedgerAccess = .readWrite, bench: String? = nil, hooks: Set<AttemptOutcome> = [],
    leaseSeconds: Double = RunLease.defaultSeconds, process: RunIdentity = .current
) throws(CommandFailure) -> SQLiteLedger {
    try refuseServer(path)
    do {
        return try SQLiteLedger(
            path: path, access: access, bench: bench, hooks: hooks, leaseSeconds: leaseSeconds, identity: process)
    } catch {
        if case .refused = error.kind { throw ledgerFailure(error, path: path) }
        let need =
            access == .readWrite
            ? "a writable ccbeacon ledger in a writable folder"
            : "readable (a ledger with a -wal file beside it also needs its -shm file, or a folder where SQLite may create one)"
        throw CommandFailure(.failure, error.description, hint: "check that '\(visible: path)' is \(need)")
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
            "give this bench its own name with --bench NAME (the host name is the default), or stop the other run of '\(visible: bench)' first; a run that was paused or cut off is over once its lease runs out (--lease)"
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
            "give this bench its own name with --bench NAME (the host name is the default), or stop the other run of '\(visible: bench)' first"
    case .otherList:
        return "start every bench of a pool with the same list; another list needs a ledger of its own"
    }
}

/// `ccbeacon provision`.
enum ProvisionCommand {
    static let spec = CommandSpec(
        name: "provision", summary: "burn a station list into chips, one after another, with a ledger"
    ) { table }
    static let table = CommandTable(
        details: """
            Checks the list and the template, records the stations in the ledger (an SQLite file,
            default provisioning.sqlite beside the list), then on every selected debugger in parallel:
            waits for a chip (a new chip is told by its IEEE address), takes the next pending station,
            records the attempt, erases, programs, verifies, records the outcome and resets the chip
            to run. Swap the chip when the debugger says it is waiting.

            Never twice: the ledger refuses one identity on two chips and two stations on one chip.
            A chip that already carries a verified station is refused (listed with its station)
            unless --reprovision. If a run is killed while burning, the next run shows what was
            interrupted and holds that station until its chip is attached again (its flash is then
            checked) or --release-interrupted lets it go to a new chip.

            A chip is known by its factory IEEE address. A chip whose address is erased
            (FF:FF:FF:FF:FF:FF) or all zero cannot be told apart from others: it is not burned, and
            the bench is told to set it aside. With --chip-id secondary such a chip is named by its
            secondary address (last flash page) when that one is usable; the burn keeps it, and every
            erase of the run writes it back.

            Ctrl-C finishes the chip in progress, records it and stops; a second Ctrl-C stops at once
            (the next run recovers). A failed station is retried --retries times (default 1) on a
            fresh chip. Signals: SIGTERM and SIGHUP stop like Ctrl-C.

            Exit status: 0 when every station of the list is done (also at once when nothing is
            left to burn); 3 when the run stopped with stations left — pending (failed ones
            included) or held — and the summary says why it stopped (no new chip within --wait,
            a signal, every debugger failed); 1 when it could not start.

            --interval and --tx-power apply to every station as in batch (templates that expose them);
            every station gets its own advertiser address: the list's address column, or one derived
            from its identity, and its measured power: the list's power column, or the board's
            figure at 1 m shifted by the TX power (recorded in the ledger as burned). The ledger records each image's sha256, so a chip interrupted under
            other settings is burned again. A station calibrated in the ledger since it was burned
            (calibrate --write --ledger) is burned again on its own chip with --reprovision.

            A shared ledger on a PostgreSQL server (--ledger postgresql://USER@HOST/DB?…) serves
            several benches at once from one list: each bench runs under its own --bench NAME
            (default the host name; one process per name), a second bench must start with the same
            list, and a server that goes away is waited for up to --server-wait seconds (default
            60); beyond that the outcome of the chip in hand goes to the bench's journal
            (ccbeacon-journal-NAME.jsonl beside the list), the bench stops, and its next run
            records the journal first.

            Every run registers itself in the ledger with a lease (--lease, default 90 s), renewed
            by a heartbeat; each change of an attempt is recorded only while the lease holds. A
            run whose lease ran out (paused, or cut off from the server for longer) records and
            burns nothing more: it erases the chip in hand, says which station and chip, and stops
            (exit 1). Attempts left in progress are taken for interrupted only once their run is
            over — its lease ran out, or its process on this machine is gone — so another bench,
            or --release-interrupted, never takes a live burn for a crashed one.

            --scan-verify hci0: after each burn is read back, the chip is reset to run and the
            controller listens (up to --scan-seconds, default 5) for the station's address sending
            exactly its image's advertising data; heard or not and the RSSI go into the ledger and
            the export. A station not heard is failed and its chip erased; it waits for the next
            run unless --retry-unheard lets it go to the next chip. Needs CAP_NET_RAW (see scan);
            never run against a real controller yet.

            --on-verified CMD / --on-failed CMD run sh -c CMD after each outcome is recorded, the
            facts in CCBEACON_* variables (never in the command line); a hook that fails or passes
            --hook-timeout (default 30 s) stays pending in the ledger and the next run of the bench
            runs it first (the event id, CCBEACON_EVENT_ID, is the same on every try). --lock-debug
            locks each verified chip's debug interface (read back, recorded). --address-mode
            secondary writes each station's address as the chip's secondary address (templates
            without an address field: TI's stack).

            Example:
              ccbeacon provision stations.csv --board hm10 --devices all --yes
            """,
        options: Options.templateOptions + Options.listSettingOptions + [
            ledger.spec, devices.spec, verify.spec, chipID.spec, retries.spec, reprovision.spec,
            releaseInterrupted.spec, scanVerify.spec, scanSeconds.spec, retryUnheard.spec, yes.spec, wait.spec,
            json.spec, bench.spec, serverWait.spec, lease.spec, events.spec, onVerified.spec, onFailed.spec,
            hookTimeout.spec,
            lockDebug.spec, addressMode.spec, Options.usbFraming.spec, Options.trace.spec,
        ],
        positionals: [PositionalSpec("STATIONS file", usage: "STATIONS.csv|STATIONS.json")],
        groups: [Options.requiredTemplate],
        refusedOptions: [
            "--address":
                "one address would go to every station alike; give each station its own in the list's address column, or leave it empty for one derived from its identity"
        ])

    static let command = Command(spec, runWithHardware: run)

    static let ledger = Option<String>(
        "--ledger", value: "FILE|URL",
        help: "ledger file (default provisioning.sqlite beside the list) or postgresql://… server")
    static let scanVerify = Option<String>(
        "--scan-verify", value: "hciN", help: "listen on air for each station after its burn (needs CAP_NET_RAW)"
    ) { text throws(CommandFailure) in
        guard HCIController.index(text) != nil else {
            throw .usage("--scan-verify must name a controller as BlueZ does: hci0, hci1, …")
        }
        return text
    }
    static let scanSeconds = Option<Double>(
        "--scan-seconds", value: "N", help: "how long --scan-verify listens for each station (default 5)"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--scan-seconds", in: 0.5...120) }
    static let retryUnheard = Flag(
        "--retry-unheard", help: "a station --scan-verify did not hear goes to the next chip (default: next run)")
    static let devices = Option<DevicesSelection>(
        "--devices", value: "all|SEL,…", help: "debuggers to use (default: the only one attached)"
    ) { text throws(CommandFailure) in try DevicesSelection(text) }

    /// `--devices`: every attached debugger, or the ones named, each once (checked as written,
    /// before anything is opened; which debugger each name finds is known only once they are
    /// listed).
    enum DevicesSelection: Sendable {
        case all
        case named([String])

        init(_ text: String) throws(CommandFailure) {
            guard text != "all" else {
                self = .all
                return
            }
            let selectors = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard !selectors.allSatisfy(\.isEmpty) else {
                throw .usage("--devices '\(visible: text)' names no debugger; give all, or SEL,SEL")
            }
            guard !selectors.contains("") else {
                throw .usage(
                    "--devices '\(visible: text)' has an empty name between commas; name each debugger once, SEL,SEL")
            }
            guard !selectors.contains("all") else {
                throw .usage(
                    "--devices '\(visible: text)': all stands alone (every attached debugger); or name each, SEL,SEL")
            }
            for (index, selector) in selectors.enumerated() where selectors[..<index].contains(selector) {
                throw .usage("--devices '\(visible: text)' names '\(visible: selector)' twice; name each debugger once")
            }
            for selector in selectors {
                if let problem = DeviceSelection.problem(with: selector) {
                    throw .usage("--devices '\(visible: selector)' \(problem)")
                }
            }
            self = .named(selectors)
        }
    }
    static let verify = Option<VerifyMode>("--verify", value: "crc|read", help: "crc (default) or read") {
        text throws(CommandFailure) in
        guard let method = VerifyMode(rawValue: text), method != .none else {
            throw .usage("--verify must be crc or read")
        }
        return method
    }
    static let chipID = Option<ChipIdentitySource>(
        "--chip-id", value: "primary|secondary",
        help: "name chips whose IEEE address is erased by their secondary address (default primary)"
    ) { text throws(CommandFailure) in
        guard let source = ChipIdentitySource(rawValue: text) else {
            throw .usage("--chip-id must be primary or secondary")
        }
        return source
    }
    static let retries = Options.count(
        "--retries", help: "further attempts after a failure (default 1)", in: 0...100
    ) { _ in "--retries must be 0…100" }
    static let reprovision = Flag("--reprovision", help: "burn chips that already carry a verified station")
    static let releaseInterrupted = Flag(
        "--release-interrupted", help: "let stations interrupted earlier go to new chips")
    static let yes = Flag("--yes", help: "unattended: no questions")
    static let wait = Option<Double>(
        "--wait", value: "SECONDS", help: "how long a debugger waits for a new chip (default 600)"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--wait", in: 0...86_400) }
    static let json = Flag("--json", help: "machine-readable summary")
    static let bench = Option<String>(
        "--bench", value: "NAME", help: "this bench's name, recorded on its attempts (default the host name)"
    ) { text throws(CommandFailure) in try Values.benchName(text, option: "--bench") }
    static let events = Option<String>(
        "--events", value: "FILE|-", help: "every event as a JSON line, appended to FILE (- standard output)")
    static let onVerified = Option<String>(
        "--on-verified", value: "CMD",
        help: "run CMD (sh -c) after each verified outcome is recorded; the facts in CCBEACON_* variables"
    ) { text throws(CommandFailure) in try hookCommand(text, option: "--on-verified") }
    static let onFailed = Option<String>(
        "--on-failed", value: "CMD", help: "run CMD (sh -c) after each failed outcome is recorded"
    ) { text throws(CommandFailure) in try hookCommand(text, option: "--on-failed") }
    static let hookTimeout = Option<Double>(
        "--hook-timeout", value: "SECONDS", help: "how long a hook may run before it is killed (default 30)"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--hook-timeout", in: 0.1...3600) }
    static let lockDebug = Flag(
        "--lock-debug", help: "lock each chip's debug interface after its verified burn (recorded in the ledger)")
    static let addressMode = Option<Bool>(
        "--address-mode", value: "template|secondary",
        help: "where a station's address goes: the template's field (default) or the chip's secondary address"
    ) { text throws(CommandFailure) in
        switch text {
        case "template": return false
        case "secondary": return true
        default: throw .usage("--address-mode must be template or secondary")
        }
    }

    /// A hook's command: not empty, no NUL (it is run as `sh -c CMD`, the user's own shell text).
    static func hookCommand(_ text: String, option: String) throws(CommandFailure) -> String {
        guard !text.allSatisfy(\.isWhitespace) else { throw .usage("\(option) needs a command") }
        guard !text.contains("\0") else { throw .usage("\(option) cannot hold a NUL character") }
        return text
    }

    static let lease = Option<Double>(
        "--lease", value: "SECONDS",
        help: "how long this run's lease in the ledger lasts unless renewed (default 90)"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--lease", in: 1...3600) }
    static let serverWait = Option<Double>(
        "--server-wait", value: "SECONDS",
        help: "how long a PostgreSQL ledger's server may be away before the bench stops (default 60)"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--server-wait", in: 0...3600) }

    static func run(_ command: ParsedCommand, console given: Console, hardware: Hardware) throws(CommandFailure) {
        let eventsPath = try command.value(events)
        if eventsPath == "-", command.isSet(json) {
            throw .usage(
                "--events - writes the events to standard output, where the run-finished event is the summary: leave out --json, or give --events a file"
            )
        }
        if let eventsPath {
            try EventStream.check(eventsPath)
            // Appended to, so never a file the run reads or writes: the list, the ledger.
            let ledgerFile = PathIdentity.resolved(
                ledgerPath(try command.value(ledger), listPath: command.positionals[0]))
            let inputs =
                [CommandSupport.Input(role: "the station list", path: command.positionals[0])]
                + ["", "-wal", "-shm"].map { CommandSupport.Input(role: "the ledger", path: ledgerFile + $0) }
            if eventsPath != "-" {
                try CommandSupport.checkOutputs([eventsPath], against: inputs)
            } else if let into = Self.standardOutputIs(inputs) {
                throw .usage("standard output is \(into) (a shell redirection?): the events would be appended to it")
            }
        }
        // Opened once the run starts: a run refused before leaves no file behind.
        var stream: EventStream?
        // With the events on standard output, the text summary goes to standard error.
        let console =
            eventsPath == "-" ? given.outputToDiagnostics : given
        // A reader of the events or the summary that goes away must not kill the run mid-burn: the
        // write fails instead, and the run finishes the chip in hand.
        signal(SIGPIPE, SIG_IGN)
        let debuggers = hardware.debuggers
        let listPath = command.positionals[0]
        var options = try runOptions(command)
        // Every option's value is checked before anything is read.
        let serverWaitSeconds = try command.value(serverWait)
        let leaseSeconds = try command.value(lease) ?? RunLease.defaultSeconds
        // The list and the template are checked before anything else.
        let listStations = try CommandSupport.stations(listPath, consequence: "nothing was burned")
        let (template, _, board) = try CommandSupport.template(command)
        let settings = try Options.settings(command)
        if !settings.isEmpty { options.settings = try CommandSupport.check(settings, for: template) }
        // The ledger records each station with the power it is burned with.
        let (stations, farPower) = CommandSupport.resolvePower(
            listStations, template: template, settings: settings, board: board)
        if let warning = CommandSupport.powerWarning(farPower) { console.diagnostics(line: warning) }
        if options.secondaryAddresses, template.manifest.field(.advertiserAddress) != nil {
            throw .usage(
                "template '\(visible: template.manifest.name)' advertises with the address in its own advertiser-address field, so it would never use the chip's secondary address: leave out --address-mode secondary (each station's address goes into the template's field)"
            )
        }
        options.addresses = try CommandSupport.addresses(
            stations, template: template, listPath: listPath, consequence: "nothing was burned",
            secondary: options.secondaryAddresses)
        let hooks = try hooks(command)
        // The ledger may hold other lists too: this run burns, releases and counts its own.
        let listed = Set(stations.map(\.name))
        options.stations = listed
        let path = ledgerPath(try command.value(ledger), listPath: listPath)
        // The host name names the bench unless --bench does; a host name that cannot name one is
        // an error only where a bench must be named (a shared ledger), a file ledger records none.
        let benchName: String?
        if let given = try command.value(bench) {
            benchName = given
        } else {
            do { benchName = try Values.hostBenchName() } catch {
                guard !PostgresURL.isURL(path) else { throw error }
                benchName = nil
            }
        }
        let opened = try openForRun(
            path, listPath: listPath, bench: benchName, serverWait: serverWaitSeconds,
            leaseSeconds: leaseSeconds, process: hardware.process,
            hooks: hooks.outcomes, console: console)
        defer { opened.lock.release() }
        let ledger = opened.ledger
        let shown = shownLedger(path)
        try prepare(
            ledger, stations: stations, releasing: command.isSet(releaseInterrupted), path: shown,
            console: console)
        let before = try progress(ledger, listed, path: shown)
        // The list's stations calibrated since their burn: asked before the run and after it.
        let calibratedSinceBurned = { (try? ledger.recalibratedStations().keys.filter(listed.contains).sorted()) ?? [] }
        let recalibrated = calibratedSinceBurned()
        let burnAgain = options.reprovision ? recalibrated : []
        if !recalibrated.isEmpty {
            console.diagnostics(
                line: options.reprovision
                    ? "calibrated since burned, burned again when their chips are attached: \(recalibrated.joined(separator: ", "))"
                    : "note: calibrated since burned (run with --reprovision and attach their chips to burn them again): \(recalibrated.joined(separator: ", "))"
            )
        }
        // Hooks: every try is told on the log (on a live status, the failures) and as an event.
        let makeHookRunner = { (stream: EventStream?, live: LiveStatus?) -> HookRunner? in
            guard !hooks.outcomes.isEmpty else { return nil }
            return HookRunner(
                hooks: hooks, ledger: ledger, bench: benchName, ledgerName: shown,
                stopRequested: { stopSignals.requested }
            ) { tried in
                let line = Self.describe(tried)
                if let live {
                    if !tried.delivered || tried.notRecorded != nil { live.note(line) }
                } else {
                    console.diagnostics(line: line)
                }
                if tried.number > 0 { stream?.emit("hook-finished", Self.fields(tried)) }
            }
        }
        do {
            let waiting = (try? hooks.pending(in: ledger, bench: benchName).waiting) ?? []
            for (hook, runs) in Dictionary(grouping: waiting, by: \.hook).sorted(by: {
                $0.key.rawValue < $1.key.rawValue
            }) {
                console.diagnostics(
                    line:
                        "note: \(runs.count) --on-\(hook.rawValue) hook run(s) of this bench are pending; this run has no --on-\(hook.rawValue), so they wait for a run that has one"
                )
            }
        }
        let started = { (stream: EventStream?, chosen: [String]) in
            stream?.emit(
                "run-started",
                [
                    ("list", .string(listPath)), ("ledger", .string(shown)),
                    ("bench", benchName.map { .string($0) } ?? .null), ("template", .string(template.manifest.name)),
                    ("stations", .integer(before.states.count)), ("pending", .integer(before.pending)),
                    ("debuggers", .array(chosen.map { .string($0) })),
                ])
        }
        if before.isComplete, burnAgain.isEmpty {
            // Nothing to burn: say so at once rather than wait for a chip.
            try beginRun(ledger, path: shown)
            stream = try eventsPath.map { path throws(CommandFailure) in
                try EventStream(path: path, console: given, run: ledger.lease.runID)
            }
            started(stream, [])
            // Hook runs an earlier run left pending are delivered all the same.
            let runner = makeHookRunner(stream, nil)
            runner?.deliverPending()
            runner?.finish()
            let hooksLeft = runner?.counts.leftPending ?? false
            stream?.emit(
                "run-finished",
                Self.finished(ProvisionSummary(), before, why: "nothing to burn", status: hooksLeft ? 1 : 0))
            if command.isSet(json) {
                try report(
                    ProvisionSummary(), progress: before, path: shown, hooks: runner?.counts, json: true,
                    console: console, why: "nothing to burn")
            } else {
                console.output(
                    lines: [
                        "nothing to burn: all \(before.states.count) stations of the list are done; ledger \(shown)"
                    ]
                        + (runner.map { [Self.hookLine($0.counts)] } ?? []))
            }
            if let counts = runner?.counts, counts.leftPending { throw Self.hooksFailed(counts) }
            return
        }
        let provider = try DeviceSupport.provider(debuggers)
        let chosen = try chooseDebuggers(try command.value(devices), from: try DeviceSupport.listDevices(provider))
        if let controller = try command.value(scanVerify) {
            // The radio is tried before any chip is burned: a missing permission or controller is
            // told now, not after the first burn.
            options.onAir = try ControllerListener.open(controller, radios: hardware.radios)
        }
        if !command.isSet(yes), console.diagnosticsIsTerminal, isatty(0) == 1 {
            try confirm(
                "\(before.pending) station(s) pending, template '\(visible: template.manifest.name)', ledger \(shown), debuggers \(chosen.map(\.selector).joined(separator: ", ")). Start? [y/N] ",
                console: console)
        }

        let names = Self.names(of: chosen)
        try beginRun(ledger, path: shown)
        stream = try eventsPath.map { path throws(CommandFailure) in
            try EventStream(path: path, console: given, run: ledger.lease.runID)
        }
        let events = stream
        started(events, names)
        // On a terminal the run is a live status; piped — or on a terminal too small for it, or
        // one the events are also written to — a log line per event.
        let size = Self.terminalSize()
        let live =
            console.diagnosticsIsTerminal && !(eventsPath == "-" && isatty(1) == 1) && size.columns >= 40
                && size.rows >= chosen.count + 3
            ? LiveStatus(
                debuggers: zip(names, chosen).map { ($0, $1.portPath) }, done: before.done,
                pending: before.pending, held: before.held.count, size: { Self.terminalSize() },
                write: console.drawing) : nil
        stopSignals.reset()
        let hookRunner = makeHookRunner(events, live)
        // Hook runs an earlier run left pending go first.
        hookRunner?.deliverPending()
        hookRunner?.start()
        let packed = options.usbFraming == .packed
        let traced = command.values[Options.trace.spec.name] != nil
        let run = ProvisioningRun(
            template: template, ledger: ledger, options: options, stopRequested: { stopSignals.requested }
        ) { event in
            // Names and reasons come from lists and ledgers: the live status and the console
            // make what would not show visible.
            var line = Self.describe(event)
            if packed, case .finished(_, _, _, _, let reason?) = event,
                reason.contains(TransportError.pipe.description),
                let hint = DeviceSupport.framingHint(
                    .transport(.pipe, during: .programming(address: nil)), framing: .packed, traced: traced)
            {
                line = line.map { "\($0); hint: \(hint)" }
            }
            if let live {
                live.handle(event, log: line)
            } else if let line {
                console.diagnostics(line: line)
            }
            if let events {
                let (name, fields) = EventStream.fields(event)
                events.emit(name, fields)
            }
            switch event {
            case .finished(_, _, _, .verified, _), .finished(_, _, _, .failed, _), .resumed: hookRunner?.outcome()
            default: break
            }
        }
        let handled = installStopSignalHandlers()
        let shared = SharedProvider(provider)
        let summary = run.run(
            zip(names, chosen).map { name, device in
                ProvisioningDebugger(name: name) { () throws(DebuggerError) in
                    try shared.open(device)
                }
            })
        // The hooks of the outcomes just recorded (a stop leaves the rest pending), then the signals.
        hookRunner?.finish()
        for number in handled { signal(number, SIG_DFL) }
        if let journaling = ledger as? JournalingLedger, !journaling.journaled.isEmpty {
            stream?.emit(
                "run-finished",
                Self.finished(
                    summary, nil, why: "the ledger server did not answer; outcomes kept in the journal", status: 1))
            throw journaledFailure(journaling, summary: summary, server: shown, console: console)
        }
        if let lost = summary.leaseLost {
            // Nothing more was recorded or burned: the run stops here, saying what became of the
            // chip in hand.
            stream?.emit("run-finished", Self.finished(summary, nil, why: lost, status: 1))
            console.output(lines: [
                "provisioned \(summary.verified.count) station(s) in this run; then it lost its lease"
            ])
            throw CommandFailure(
                .failure, lost,
                hint:
                    "another run may go on with this run's stations now; run again (a new run takes a new lease), and give --lease more seconds if the bench pauses or loses the server for longer"
            )
        }
        let stillToBurnAgain =
            options.reprovision ? calibratedSinceBurned() : []
        let after: ListProgress
        do { after = try progress(ledger, listed, path: shown) } catch {
            // The events end with the run's end, whatever ends it.
            stream?.emit(
                "run-finished", Self.finished(summary, nil, why: error.message, status: Int(error.exitCode.rawValue)))
            throw error
        }
        // On a shared ledger the list's other attempts in progress are other benches' burns.
        let elsewhere =
            ledger is JournalingLedger
            ? ((try? ledger.attempts()) ?? []).filter {
                $0.outcome == .inProgress && listed.contains($0.station) && $0.bench != benchName
            }.count : 0
        let left = after.left > 0 || !stillToBurnAgain.isEmpty
        stream?.emit(
            "run-finished",
            Self.finished(
                summary, after, why: Self.stopReason(summary, signal: stopSignals.signal),
                status: left ? 3 : (hookRunner?.counts.leftPending ?? false) ? 1 : 0))
        // Events that could not all be written fail the run, as output that could not be.
        let eventsLost =
            stream?.failed == true
            ? CommandFailure(
                .failure, "some events could not be written to \(eventsPath ?? "-"); the events file is incomplete",
                hint: "the outcomes are in the ledger (ledger show); free space or give --events another file")
            : nil
        do {
            try report(
                summary, progress: after, burnAgain: stillToBurnAgain, burningElsewhere: elsewhere, path: shown,
                hooks: hookRunner?.counts, json: command.isSet(json), console: console)
        } catch {
            throw eventsLost ?? error
        }
        if let eventsLost { throw eventsLost }
        if let counts = hookRunner?.counts, counts.leftPending { throw Self.hooksFailed(counts) }
    }

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
        let journal = OutcomeJournal(path: OutcomeJournal.journalPath(bench: bench, listPath: listPath))
        let lock = try lockBeside(
            journal.path,
            failed: { error in
                CommandFailure(
                    .failure, "cannot lock bench '\(visible: bench)' for this run: \(error)",
                    hint: "the bench keeps its journal beside the station list: that folder must be writable")
            },
            held: { holder in
                CommandFailure(
                    .failure,
                    "another provision\(holder) is running as bench '\(visible: bench)' here; one run per bench",
                    hint: "let it finish, or give this run its own --bench NAME")
            })
        let server: PostgresLedger
        do {
            server = try PostgresLedger(
                url: path, bench: bench, creating: true, serverWait: serverWait ?? 60, exclusive: true, hooks: hooks,
                leaseSeconds: leaseSeconds, identity: process)
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
                "  kept in the journal, not yet on the server: '\(visible: entry.station)' on chip \(entry.chip): \(entry.outcome.rawValue)"
            )
        }
        console.output(lines: lines)
        return CommandFailure(
            .failure,
            "the ledger server did not answer; \(kept.count) outcome(s) are kept in the journal \(ledger.journal.path)",
            hint:
                "when the server answers again, run the same provision on this bench: it records the journal first, then goes on"
        )
    }

    /// Standard error's terminal size (80 × 24 when it cannot be told).
    static func terminalSize() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// The debuggers' names in the run's log, events and ledger: each one's serial number when no
    /// other chosen debugger has it, else its port (`port:1-2`), else its `bus:address`; a name
    /// that would still be another's (a serial that reads like a port) is its `bus:address`.
    static func names(of chosen: [DebuggerDevice]) -> [String] {
        let first = chosen.map { device in
            if let serial = device.serial, chosen.filter({ $0.serial == serial }).count == 1 { return serial }
            return device.portSelector ?? device.selector
        }
        return zip(first, chosen).map { name, device in
            first.filter { $0 == name }.count == 1 ? name : device.selector
        }
    }

    /// What standard output is when it is one of `inputs` (redirected into it by a shell).
    static func standardOutputIs(_ inputs: [CommandSupport.Input]) -> String? {
        var output = stat()
        guard fstat(1, &output) == 0, output.st_mode & S_IFMT == S_IFREG else { return nil }
        for input in inputs {
            var info = stat()
            if stat(input.path, &info) == 0, info.st_dev == output.st_dev, info.st_ino == output.st_ino {
                return "\(input.role) \(input.path)"
            }
        }
        return nil
    }

    /// The run-finished event's facts: this run's outcomes, the list's state, why it stopped and
    /// the exit status it ends with.
    static func finished(_ summary: ProvisionSummary, _ progress: ListProgress?, why: String, status: Int)
        -> [(String, JSONValue)]
    {
        [
            ("verified", .array(summary.verified.map { .string($0) })),
            ("failed", .object(summary.failed.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
            ("listDone", progress.map { .integer($0.done) } ?? .null),
            ("listPending", progress.map { .integer($0.pending) } ?? .null),
            ("held", progress.map { .array($0.held.map { .string($0) }) } ?? .null),
            ("stoppedBecause", .string(why)), ("status", .integer(status)),
        ]
    }

    /// The run's settings from the command's options.
    static func runOptions(_ command: ParsedCommand) throws(CommandFailure) -> ProvisionOptions {
        var options = ProvisionOptions()
        if let verify = try command.value(verify) { options.verify = verify }
        if let retries = try command.value(retries) { options.retries = retries }
        if let wait = try command.value(wait) { options.targetTimeoutSeconds = wait }
        options.reprovision = command.isSet(reprovision)
        if command.isGiven(scanSeconds) || command.isSet(retryUnheard), !command.isGiven(scanVerify) {
            throw .usage("--scan-seconds and --retry-unheard apply to --scan-verify only")
        }
        if let seconds = try command.value(scanSeconds) { options.scanSeconds = seconds }
        options.retryUnheard = command.isSet(retryUnheard)
        if let source = try command.value(chipID) { options.chipIdentity = source }
        options.lockDebug = command.isSet(lockDebug)
        options.usbFraming = try command.value(Options.usbFraming) ?? .proven
        options.secondaryAddresses = try command.value(addressMode) ?? false
        if options.secondaryAddresses, options.chipIdentity == .secondary {
            throw .usage(
                "--address-mode secondary writes each station's address over the chip's secondary address, by which --chip-id secondary names chips: use one of them"
            )
        }
        if command.isGiven(hookTimeout), !command.isGiven(onVerified), !command.isGiven(onFailed) {
            throw .usage("--hook-timeout applies to --on-verified and --on-failed")
        }
        return options
    }

    /// The hooks the command gives.
    static func hooks(_ command: ParsedCommand) throws(CommandFailure) -> HookRunner.Hooks {
        HookRunner.Hooks(
            verified: try command.value(onVerified), failed: try command.value(onFailed),
            timeout: try command.value(hookTimeout) ?? 30)
    }

    /// One run per ledger: another run's burns in progress would look like a crash's to this one
    /// (and with --release-interrupted their stations would go to other chips). The lock (flock on
    /// a hidden file beside the ledger) dies with the process. It sits beside the ledger's real
    /// path: through a symbolic link a second run would otherwise take a lock of its own.
    /// Returns the lock and the real path it guards.
    static func lockForOneRun(_ path: String) throws(CommandFailure) -> (FolderLock, String) {
        try refuseServer(path)
        let realPath = SQLiteLedger.realPath(path)
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
                Files.directory(of: path), name: ".\(Files.lastComponent(path)).lock", wait: false)
        } catch {
            guard case .held(_, let holder) = error else { throw failed(error) }
            throw held(holder.map { " (process \($0))" } ?? "")
        }
    }

    /// Registers the list, marks what a crash left in progress as interrupted (and says so), and
    /// with `releasing` lets the list's held stations go to new chips.
    static func prepare(
        _ ledger: any ProvisioningLedger & Sendable, stations: [Station], releasing: Bool, path: String,
        console: Console
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
            if releasing {
                for (station, chip) in try ledger.releaseHeld(in: Set(stations.map(\.name))) {
                    console.diagnostics(
                        line:
                            "released '\(station)' (was interrupted on chip \(chip)); chip \(chip) may still carry its identity: erase it (ccbeacon erase) or set it aside"
                    )
                }
            }
        } catch {
            if case .refused = error.kind { throw ledgerFailure(error, path: path) }
            if error.isConnectionLost { throw ledgerFailure(error, path: path) }
            throw CommandFailure(.failure, error.description, hint: "the ledger refused the list; see the message")
        }
    }

    /// Records a bench's journal on its ledger and says so.
    static func replay(_ ledger: JournalingLedger, path: String, console: Console) throws(CommandFailure) {
        do {
            let replay = try ledger.replay()
            for entry in replay.recorded {
                console.diagnostics(
                    line:
                        "recorded from the journal: '\(visible: entry.station)' on chip \(entry.chip): \(entry.outcome.rawValue)"
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
    }

    /// The list's progress, a ledger failure as the command's.
    static func progress(_ ledger: any ProvisioningLedger & Sendable, _ listed: Set<String>, path: String)
        throws(CommandFailure)
        -> ListProgress
    {
        do { return try ledger.progress(of: listed) } catch { throw ledgerFailure(error, path: path) }
    }

    /// The debuggers `--devices` names: none given, the only one attached; `all`; or a list.
    static func chooseDebuggers(_ selection: DevicesSelection?, from attached: [DebuggerDevice])
        throws(CommandFailure) -> [DebuggerDevice]
    {
        switch selection {
        case nil:
            return [try DeviceSupport.choose(attached, selector: nil, option: DeviceSupport.devicesSelector)]
        case .all:
            guard !attached.isEmpty else {
                let error = DeviceSelectionError.noDebugger
                throw CommandFailure(.failure, error.description, hint: error.hint)
            }
            return attached
        case .named(let selectors):
            let chosen = try selectors.map { selector throws(CommandFailure) in
                try DeviceSupport.choose(attached, selector: selector)
            }
            // One debugger twice (by two names, say) would burn two stations into one chip.
            for (index, device) in chosen.enumerated() {
                if let first = chosen[..<index].firstIndex(of: device) {
                    throw .usage(
                        "--devices names the debugger \(device.selector) twice ('\(selectors[first])' and '\(selectors[index])'); name each debugger once"
                    )
                }
            }
            return chosen
        }
    }

    /// Begins this process's run (a pool's began when it was opened) once nothing is left to ask:
    /// its lease runs from here, with the heartbeat that renews it right behind, and its id is
    /// the one its events and attempts carry.
    static func beginRun(_ ledger: any ProvisioningLedger, path: String) throws(CommandFailure) {
        do { try ledger.beginRun() } catch { throw ledgerFailure(error, path: path) }
    }

    /// Asks on the terminal; anything but y or Y is "not started".
    static func confirm(_ question: String, console: Console) throws(CommandFailure) {
        console.diagnostics(prompt: question)
        var answer = [UInt8](repeating: 0, count: 16)
        let count = read(0, &answer, 16)
        guard count > 0, answer[0] == UInt8(ascii: "y") || answer[0] == UInt8(ascii: "Y") else {
            throw CommandFailure(.failure, "not started", hint: nil)
        }
    }

    /// Ctrl-C, `kill` (SIGTERM, what service managers send) and a closed terminal (SIGHUP) all
    /// finish the chip in progress, record it and stop; a second one stops at once (the next run
    /// recovers). A parent may have blocked them, and the mask survives exec: they are unblocked.
    /// A signal the parent set to be ignored stays ignored, as `nohup` (SIGHUP) and shells for
    /// background jobs (SIGINT) mean it to. Returns the signals handled, to restore afterwards.
    static func installStopSignalHandlers() -> [Int32] {
        let stopSignalNumbers = [SIGINT, SIGTERM, SIGHUP]
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in stopSignalNumbers { sigaddset(&unblock, number) }
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
        var handled: [Int32] = []
        for number in stopSignalNumbers {
            var current = sigaction()
            sigaction(number, nil, &current)
            if unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1 { continue }  // SIG_IGN
            handled.append(number)
            signal(number) { number in
                if stopSignals.received(number) > 1 { _exit(128 + number) }
            }
        }
        return handled
    }

    /// The summary (text or `--json`), and exit 3 when stations of the list are left; `given`:
    /// why the run stopped, when not from the summary.
    ///
    /// `burningElsewhere`: of the list's attempts in progress, those other benches are burning
    /// now (on a shared ledger); the rest are this run's, whose outcome could not be recorded.
    static func report(
        _ summary: ProvisionSummary, progress: ListProgress, burnAgain: [String] = [], burningElsewhere: Int = 0,
        path: String, hooks: HookRunner.Counts? = nil, json: Bool, console: Console, why given: String? = nil
    ) throws(CommandFailure) {
        let unrecorded = progress.inProgress - burningElsewhere
        let why = given ?? Self.stopReason(summary, signal: stopSignals.signal)
        if json {
            console.data(
                JSONValue.object([
                    ("verified", .array(summary.verified.map { .string($0) })),
                    ("failed", .object(summary.failed.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
                    ("refusedChips", .array(summary.refused.map { .string($0) })),
                    ("listDone", .integer(progress.done)), ("listPending", .integer(progress.pending)),
                    ("listBurningElsewhere", .integer(burningElsewhere)), ("listUnrecorded", .integer(unrecorded)),
                    ("held", .array(progress.held.map { .string($0) })), ("ledger", .string(path)),
                    ("setAsideChips", .integer(summary.setAside)),
                    ("toBurnAgain", .array(burnAgain.map { .string($0) })), ("stoppedBecause", .string(why)),
                    (
                        "hooks",
                        hooks.map {
                            .object([
                                ("delivered", .integer($0.delivered)), ("failed", .integer($0.failed)),
                                ("notRun", .integer($0.notRun)),
                            ])
                        }
                            ?? .null
                    ),
                ]).rendered() + "\n")
        } else {
            var lines = [
                "provisioned \(summary.verified.count) station(s) in this run; \(progress.done) of \(progress.states.count) done, \(progress.pending) pending, \(progress.held.count) held"
                    + Self.unrecorded(unrecorded)
                    + (burningElsewhere > 0 ? ", \(burningElsewhere) burning on other benches" : "")
                    + "; ledger \(path)"
            ]
            for (station, reason) in summary.failed.sorted(by: { $0.key < $1.key }) {
                lines.append("  failed: \(station): \(reason)")
            }
            if !progress.held.isEmpty {
                lines.append(
                    "  held (interrupted; attach their chip or use --release-interrupted): \(progress.held.joined(separator: ", "))"
                )
            }
            if !burnAgain.isEmpty {
                lines.append(
                    "  calibrated, to burn again (attach their chips): \(burnAgain.joined(separator: ", "))")
            }
            if summary.setAside > 0 {
                lines.append("  \(summary.setAside) chip(s) set aside, not burned (each one's reason is above)")
            }
            if let hooks { lines.append("  " + Self.hookLine(hooks)) }
            lines.append("  stopped: \(why)")
            console.output(lines: lines)
        }
        if progress.left == 0, !burnAgain.isEmpty {
            throw CommandFailure(
                .stationsLeft,
                "stopped with \(burnAgain.count) calibrated station\(burnAgain.count == 1 ? "" : "s") not burned again: \(why)",
                hint: "run again with --reprovision and attach their chips")
        }
        if progress.left > 0 {
            throw CommandFailure(
                .stationsLeft,
                "stopped with \(progress.left) station\(progress.left == 1 ? "" : "s") of the list left (\(progress.pending) pending, \(progress.held.count) held"
                    + Self.unrecorded(unrecorded) + "): \(why)",
                hint: progress.held.isEmpty
                    ? "run again to go on with the pending stations"
                    : "run again; attach the held stations' chips, or use --release-interrupted")
        }
    }

    /// The summary's line on hooks.
    static func hookLine(_ counts: HookRunner.Counts) -> String {
        "hooks: \(counts.delivered) delivered, \(counts.failed) failed"
            + (counts.notRun > 0 ? ", \(counts.notRun) not run (the run stopped first)" : "")
            + (counts.leftPending
                ? " (kept pending in the ledger; the next provision of this bench runs them first)" : "")
    }

    /// The run's failure when hook runs are left pending (the burns stand).
    static func hooksFailed(_ counts: HookRunner.Counts) -> CommandFailure {
        CommandFailure(
            .failure,
            "\(counts.failed + counts.notRun) hook run(s) failed, timed out or did not run; every burn stands, and the hook runs are kept pending in the ledger",
            hint:
                "fix the hook (its last output is in the log above), then run the same provision again: it runs them first"
        )
    }

    /// A hook's try as a log line.
    static func describe(_ tried: HookRunner.Try) -> String {
        if tried.number == 0 { return "hooks: \(tried.status); the hook runs stay pending in the ledger" }
        let what =
            "hook \(tried.hook) for '\(visible: tried.station)' (chip \(tried.chip), event \(tried.eventID), try \(tried.number))"
        var line =
            tried.delivered
            ? "\(what): delivered"
            : "\(what) FAILED: \(tried.status)\(tried.lastOutput.map { "; its last output: \($0)" } ?? ""); it stays pending"
        if let notRecorded = tried.notRecorded {
            line += "; the try could not be recorded in the ledger (\(notRecorded)), so it runs again next time"
        }
        return line
    }

    /// A hook's try as the `hook-finished` event's fields.
    static func fields(_ tried: HookRunner.Try) -> [(String, JSONValue)] {
        [
            ("hook", .string(tried.hook)), ("station", .string(tried.station)), ("chip", .string(tried.chip)),
            ("eventId", .string(tried.eventID)), ("try", .integer(tried.number)), ("status", .string(tried.status)),
            ("delivered", .bool(tried.delivered)), ("output", tried.lastOutput.map { .string($0) } ?? .null),
            ("recorded", .bool(tried.notRecorded == nil)),
        ]
    }

    /// Attempts still in progress when this run ends are its own (one run per ledger): their
    /// outcome could not be recorded.
    static func unrecorded(_ count: Int) -> String {
        count > 0
            ? ", \(count) left in progress (the outcome could not be recorded; the next run checks \(count == 1 ? "that chip" : "those chips") again)"
            : ""
    }

    static func stopReason(_ summary: ProvisionSummary, signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGINT: "Ctrl-C (SIGINT)", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP (the terminal closed)",
        ]
        if signal != 0 { return "\(names[signal] ?? "signal \(signal)") after the chip in progress" }
        let reasons = Set(summary.stopped.values)
        // Every debugger out of stations for one reason: said once.
        if reasons.count == 1, let only = reasons.first, only.hasPrefix("no pending stations left") { return only }
        // A ledger that failed stops the whole run, whatever the debuggers were doing.
        if let ledger = summary.stopped.sorted(by: { $0.key < $1.key }).first(where: { $0.value.hasPrefix("ledger: ") })
        {
            return "the ledger failed (\(ledger.key)): \(ledger.value.dropFirst("ledger: ".count))"
        }
        let waiting = ["no pending stations left", "no new chip", "no target chip"]
        if !summary.stopped.isEmpty,
            summary.stopped.values.allSatisfy({ reason in !waiting.contains { reason.hasPrefix($0) } })
        {
            return "every debugger failed: "
                + summary.stopped.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        }
        return summary.stopped.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
    }

    /// An event as a line of the run's log; nil for progress, which the log does not show.
    static func describe(_ event: ProvisionEvent) -> String? {
        switch event {
        case .progress: return nil
        case .waitingForChip(let debugger): return "\(debugger): waiting for a chip — attach the next one"
        case .chipAttached(let debugger, let chip): return "\(debugger): chip \(chip) attached"
        case .started(let debugger, let station, let chip):
            return "\(debugger): burning '\(visible: station)' into \(chip)"
        case .finished(let debugger, let station, let chip, let outcome, let reason):
            return "\(debugger): '\(visible: station)' on \(chip): \(outcome.rawValue)"
                + (reason.map { " (\($0))" } ?? "")
        case .refused(let debugger, let chip, let carries):
            return
                "\(debugger): chip \(chip) already carries '\(visible: carries)'; left alone (--reprovision to burn it again)"
        case .erasedOnArrival(let debugger, let chip, let station):
            return
                "\(debugger): chip \(chip) arrived debug-locked and carried '\(visible: station)'; unlocking erased it, so '\(visible: station)' is pending again"
        case .interruptedForAnotherList(let debugger, let chip, let station):
            return
                "\(debugger): chip \(chip) was interrupted with '\(visible: station)', a station of another list; left alone (a run of that list checks it)"
        case .resumed(let debugger, let station, let chip, let verified):
            return "\(debugger): chip \(chip) from an interrupted run: '\(visible: station)' "
                + (verified ? "confirmed" : "not on it (the chip was erased); the station is pending again")
        case .debuggerStopped(let debugger, let reason): return "\(debugger): stopped: \(reason)"
        case .setAside(let debugger, let address, let reason):
            let why: String
            switch reason {
            case .indistinguishable(let secondaryTried):
                why =
                    secondaryTried
                    ? "its IEEE address \(address) and its secondary address cannot tell it apart from other chips"
                    : "its IEEE address \(address) cannot tell it apart from other chips (\(chipID.spec.name) secondary uses a valid secondary address)"
            case .notTheTemplatesChip(let code, let templateChip, let erased):
                why =
                    "the chip \(address) reports CHIPINFO0.FLASHSIZE \(code), which is not the template's \(templateChip) (see boards/chips.json)"
                    + (erased ? "; it was debug-locked, which hides its size, so it was erased to be read" : "")
            case .debugLocked:
                why =
                    "it is debug-locked, which hides its address, and this ledger records chips it locked: it may carry a station (--reprovision erases a locked chip, which unlocks it, and burns it)"
            }
            return "\(debugger): SET THIS CHIP ASIDE, it was not burned: \(why); attach the next one"
        case .resetFailed(let debugger, let chip, let reason):
            return
                "\(debugger): chip \(chip) is recorded but could not be reset to run (\(reason)); opening the debugger again to retry"
        case .burningAgain(let debugger, let station, let chip, let burned, let calibrated):
            return
                "\(debugger): chip \(chip) carries '\(visible: station)' burned with \(burned) dBm; its calibration says \(calibrated) dBm: burning it again"
        case .listening(let debugger, let station, let chip, let seconds):
            return
                "\(debugger): '\(visible: station)' on \(chip) burned and read back; listening on air for it (up to \(ProvisioningRun.seconds(seconds)) s)"
        }
    }
}

/// A provider the provisioning workers share: opening is serialised; each worker then uses only
/// its own transport.
final class SharedProvider: Sendable {
    let provider: any DebuggerProvider
    let lock = Mutex(())

    init(_ provider: any DebuggerProvider) { self.provider = provider }

    func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport {
        try lock.withLock { _ throws(DebuggerError) in try provider.open(device) }
    }
}

/// `ccbeacon ledger show`, `ccbeacon ledger export` and `ccbeacon ledger check`: they open the
/// ledger read-only and never write to it.
enum LedgerCommand {
    static let show = Command(showSpec, run: show)
    static let export = Command(exportSpec, run: export)
    static let check = Command(checkSpec, run: check)

    static let ledger = Option<String>(
        "--ledger", value: "FILE|URL", help: "ledger file (default ./provisioning.sqlite) or postgresql://… server")
    static let format = Option<ExportFormat>("--format", value: "csv|json", help: "output format (default csv)") {
        text throws(CommandFailure) in
        guard let format = ExportFormat(rawValue: text) else { throw .usage("--format must be csv or json") }
        return format
    }
    static let output = Options.output("FILE", help: "write to FILE (default: standard output)")
    static let checkJSON = Flag("--json", help: "machine-readable report")

    /// What `ledger export` writes.
    enum ExportFormat: String {
        case csv, json
    }

    static let showSpec = CommandSpec(name: "ledger show", summary: "progress of a station list: done, held, pending") {
        showTable
    }
    static let showTable = CommandTable(
        details: """
            Lists every station of the ledger with its state: done (chip and time), held (interrupted
            on a chip), pending (with the last failure, if any), and the bench of each attempt with
            one line per bench. The ledger is only read: it may be a read-only file in a read-only
            folder, or a PostgreSQL server (--ledger postgresql://…).

            Example:
              ccbeacon ledger show --ledger provisioning.sqlite
            """,
        options: [ledger.spec, Options.json.spec])

    static let exportSpec = CommandSpec(
        name: "ledger export", summary: "the registry of burned stations as CSV or JSON"
    ) { exportTable }
    static let exportTable = CommandTable(
        details: """
            One row per verified station: name, UUID, major, minor, the measured power burned,
            chip IEEE address, debugger, time, advertiser address, which flash bytes were read back
            to verify it (readBack, address ranges such as 0x7F00-0x7F2F,0x7F30-0x7F3F; empty when
            nothing was), what a scan after the burn heard (heard yes/no, rssiCount, rssiMedian;
            empty when nobody listened: provision --scan-verify), and where the power came from
            (powerSource: calibration, or registered: the list's or the board's), whether the
            chip's debug interface was locked (debugLocked), and the bench and run that burned it
            (bench, run: on a shared pool, which line made the station) — what a backend needs to
            map major/minor to places. The ledger is only read.

            With -o FILE the registry is written whole (temporary file, flushed, renamed) or not
            at all, and never over the ledger itself.

            Example:
              ccbeacon ledger export --format csv -o registry.csv
            """,
        options: [ledger.spec, format.spec, output.spec])

    static let checkSpec = CommandSpec(
        name: "ledger check", summary: "check a ledger's integrity and promises without trusting its indexes"
    ) { checkTable }
    static let checkTable = CommandTable(
        details: """
            Runs SQLite's full integrity check and the ledger's own invariants, each by a query that
            scans the tables instead of asking the indexes that enforce them: at most one verified
            attempt per station and per chip, at most one attempt in progress per station, no
            verified attempt without a verification method, no chip id that cannot identify a chip
            (all 00, all FF, not XX:XX:XX:XX:XX:XX upper-case hex), no attempt for an unknown
            station, no two stations with one name or identity; and that the indexes and triggers
            keeping those promises are there. Reports every problem. The ledger is only read. On a
            PostgreSQL server (--ledger postgresql://…): its tables, indexes and constraints are
            compared with the schema this ccbeacon makes, and every invariant runs with index scans
            off.
            Exit status 0 when it is sound, 65 when not.

            Example:
              ccbeacon ledger check --ledger provisioning.sqlite
            """,
        options: [ledger.spec, checkJSON.spec])

    /// The ledger file the command names (`--ledger`, else ./provisioning.sqlite).
    static func path(_ command: ParsedCommand) throws(CommandFailure) -> String {
        ledgerPath(try command.value(ledger), listPath: nil)
    }

    /// The ledger as messages name it: a server's URL without its password.
    static func shownPath(_ command: ParsedCommand) throws(CommandFailure) -> String {
        let path = try path(command)
        return PostgresURL.isURL(path) ? PostgresURL.shown(path) : path
    }

    /// The ledger a reading command names: a SQLite file, or a PostgreSQL server by its URL
    /// (`postgresql://…`; opened without creating anything).
    static func openForReading(_ command: ParsedCommand) throws(CommandFailure) -> any ProvisioningLedger & Sendable {
        let path = try path(command)
        guard PostgresURL.isURL(path) else { return try open(command) }
        do { return try PostgresLedger(url: path, bench: "", creating: false) } catch {
            if case .refused = error.kind {
                throw .data(error.description, hint: "give --ledger the URL of a database that holds a ccbeacon ledger")
            }
            throw CommandFailure(
                .failure, error.description, hint: "check the URL, that the server runs and that this user may connect")
        }
    }

    static func open(_ command: ParsedCommand, access: LedgerAccess = .readOnly) throws(CommandFailure)
        -> SQLiteLedger
    {
        let path = try path(command)
        try refuseServer(path)
        guard Files.isFile(path) else {
            throw CommandFailure(
                .failure, "no ledger at '\(visible: path)'",
                hint: "give --ledger FILE (provision writes it beside the station list)")
        }
        return try openLedger(path, access: access)
    }

    static func check(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        if PostgresURL.isURL(try path(command)) {
            try checkServer(command, console: console)
            return
        }
        let path = try path(command)
        let ledger = try open(command, access: .inspection)
        // An earlier ccbeacon's ledger has no triggers to check until provision migrates it.
        let ok =
            ledger.fileSchemaVersion < SQLiteLedger.schemaVersion
            ? "integrity and every invariant checked; schema version \(ledger.fileSchemaVersion), from an earlier ccbeacon: provision migrates it to version \(SQLiteLedger.schemaVersion)"
            : "integrity, schema and every invariant checked"
        try report(
            ledger.check(), ledger: path, schemaVersion: ledger.fileSchemaVersion, ok: ok, command: command,
            console: console)
    }

    /// `ledger check` of a ledger on a server: its schema against the one ccbeacon makes, and
    /// every invariant by a query that scans the tables.
    static func checkServer(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        let shown = try shownPath(command)
        guard let ledger = try openForReading(command) as? PostgresLedger else { return }
        let (problems, notes) = ledger.checkReport()
        try report(
            problems, ledger: shown, schemaVersion: ledger.databaseVersion,
            ok: notes.isEmpty ? "schema and every invariant checked" : notes.joined(separator: "; "),
            command: command, console: console)
    }

    /// The problems `ledger check` found, in text or `--json`; a ledger with problems fails (65).
    static func report(
        _ problems: [LedgerProblem], ledger: String, schemaVersion: Int, ok: String, command: ParsedCommand,
        console: Console
    ) throws(CommandFailure) {
        if command.isSet(checkJSON) {
            console.data(
                JSONValue.object([
                    ("ledger", .string(ledger)), ("ok", .bool(problems.isEmpty)),
                    ("schemaVersion", .integer(schemaVersion)),
                    (
                        "problems",
                        .array(
                            problems.map {
                                .object([("check", .string($0.check.rawValue)), ("detail", .string($0.detail))])
                            })
                    ),
                ]).rendered() + "\n")
        } else if problems.isEmpty {
            console.output(line: "\(ledger): ok (\(ok))")
        } else {
            console.output(
                lines: ["\(ledger): \(problems.count) problem(s)"]
                    + problems.map { "  \($0.check.rawValue): \($0.detail)" })
        }
        if !problems.isEmpty {
            // Stations' states alone (an earlier ccbeacon wrote attempts after the ledger was
            // migrated under it) are recomputed by the next provision: nothing is damaged.
            let stateOnly = problems.allSatisfy { $0.check == .stationState }
            throw CommandFailure.data(
                "the ledger has \(problems.count) problem(s)",
                hint: stateOnly
                    ? "only the stations' state is out of step with their attempts (an earlier ccbeacon wrote to the ledger after this one migrated it?): the next provision puts it right"
                    : "do not provision with it; restore it from a backup, or repair what is listed with care")
        }
    }

    static func show(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        let states: [StationState]
        let burnAgain: [String: String]
        let attempts: [Attempt]
        let pendingHooks: [HookRun]
        let ledger = try openForReading(command)
        do {
            states = try ledger.states()
            burnAgain = try ledger.recalibratedStations()
            attempts = try ledger.attempts()
            pendingHooks = try ledger.hookRuns(pendingOnly: true)
        } catch {
            throw ledgerFailure(error, path: try shownPath(command))
        }
        let benches = BenchGroups(attempts)
        let locked = Set(attempts.filter { $0.outcome == .verified && $0.debugLocked }.map(\.station))
        let hooksOf = Dictionary(grouping: pendingHooks, by: \.attempt.station)
        if command.isSet(Options.json) {
            console.data(
                JSONValue.array(
                    states.map { state in
                        var members = EncodeCommand.identityFields(state.station.identity)
                        members.insert(("name", .string(state.station.name)), at: 0)
                        switch state.state {
                        case .done(let chip, let at):
                            members += [("state", .string("done")), ("chip", .string(chip)), ("at", .string(at))]
                            members.append(("calibratedSinceBurned", .bool(burnAgain[state.station.name] != nil)))
                            members.append(("debugLocked", .bool(locked.contains(state.station.name))))
                        case .held(let chip): members += [("state", .string("held")), ("chip", .string(chip))]
                        case .inProgress(let chip):
                            members += [("state", .string("in-progress")), ("chip", .string(chip))]
                        case .pending(let failure):
                            members += [
                                ("state", .string("pending")), ("lastFailure", failure.map { .string($0) } ?? .null),
                            ]
                        }
                        members.append(("attempts", .integer(state.attempts)))
                        members.append(("hookRunsPending", .integer(hooksOf[state.station.name]?.count ?? 0)))
                        members.append(("bench", benches.station[state.station.name].map { .string($0) } ?? .null))
                        return .object(members)
                    }
                ).rendered() + "\n")
            return
        }
        let rows = states.map { state -> [String] in
            let identity = state.station.identity
            let where_: String
            switch state.state {
            case .done(let chip, let at):
                where_ =
                    "done      \(chip) \(at)" + (locked.contains(state.station.name) ? "   debug-locked" : "")
                    + (burnAgain[state.station.name] != nil
                        ? "   calibrated since: burn again (provision --reprovision)" : "")
            case .held(let chip): where_ = "HELD      interrupted on \(chip)"
            case .inProgress(let chip): where_ = "burning   \(chip)"
            case .pending(let failure): where_ = "pending" + (failure.map { "   last failure: \($0)" } ?? "")
            }
            let row = [state.station.name, "\(identity.major)/\(identity.minor)", String(state.attempts)]
            return row + (benches.names.isEmpty ? [] : [benches.station[state.station.name] ?? "-"]) + [where_]
        }
        let done = states.filter { if case .done = $0.state { true } else { false } }.count
        let header = ["STATION", "MAJOR/MINOR", "ATTEMPTS"] + (benches.names.isEmpty ? [] : ["BENCH"]) + ["STATE"]
        // Every cell from the ledger shown as text, whatever an old or hand-edited ledger holds.
        console.output(composed: Table.render(header: header, rows: rows))
        console.output(
            lines: ["\(done) of \(states.count) done"] + benches.summary(states) + Self.pendingHookLines(pendingHooks))
    }

    /// One line per bench with hook runs pending: how many, of which hooks, and the oldest's last
    /// try (they run first at that bench's next provision).
    static func pendingHookLines(_ pending: [HookRun]) -> [String] {
        Dictionary(grouping: pending) { $0.bench ?? "-" }.sorted { $0.key < $1.key }.map { bench, runs in
            let kinds = Dictionary(grouping: runs, by: \.hook).sorted { $0.key.rawValue < $1.key.rawValue }
                .map { "\($0.value.count) on-\($0.key.rawValue)" }.joined(separator: ", ")
            let tried = runs.filter { $0.tries > 0 }
            return "hook runs pending for bench \(visible: bench): \(kinds)"
                + (tried.isEmpty
                    ? "" : "; \(tried.count) tried and failed (last: \(visible: tried.last?.lastStatus ?? "?"))")
                + "; its next provision with the hook runs them first"
        }
    }

    /// The ledger's attempts by bench: which bench holds each station (its verified, in-progress
    /// or interrupted attempt), and each bench's totals.
    struct BenchGroups {
        /// The bench of each station's live attempt.
        var station: [String: String] = [:]
        /// Every bench recorded, sorted.
        var names: [String] = []
        /// Failed attempts per bench.
        var failed: [String: Int] = [:]

        init(_ attempts: [Attempt]) {
            var seen = Set<String>()
            for attempt in attempts {
                guard let bench = attempt.bench else { continue }
                seen.insert(bench)
                switch attempt.outcome {
                case .verified, .inProgress, .interrupted: station[attempt.station] = bench
                case .failed: failed[bench, default: 0] += 1
                case .superseded: break
                }
            }
            names = seen.sorted()
        }

        /// One line per bench: its stations done, held and burning, and its failed attempts.
        func summary(_ states: [StationState]) -> [String] {
            names.map { bench in
                var done = 0
                var held = 0
                var burning = 0
                for state in states where station[state.station.name] == bench {
                    switch state.state {
                    case .done: done += 1
                    case .held: held += 1
                    case .inProgress: burning += 1
                    case .pending: break
                    }
                }
                return
                    "bench \(visible: bench): \(done) done, \(held) held, \(burning) burning, \(failed[bench, default: 0]) failed attempt(s)"
            }
        }
    }

    static func export(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        let format = try command.value(format) ?? .csv
        let output = try command.value(output)
        if let output, !PostgresURL.isURL(try path(command)) {
            // The journal sits beside the ledger's real name, whatever name it was given by.
            let ledgerFile = PathIdentity.resolved(try path(command))
            try CommandSupport.checkOutputs(
                [output],
                against: ["", "-wal", "-shm"].map { CommandSupport.Input(role: "the ledger", path: ledgerFile + $0) })
        }
        // The registry goes to stdout, or — written whole, durably, never half — to -o FILE.
        let emit = { (text: String) throws(CommandFailure) in
            if let output {
                try FileAccess.writeAtomically(Array(text.utf8), to: output)
                console.output(line: "wrote \(output)")
            } else {
                console.data(text)
            }
        }
        let ledger = try openForReading(command)
        let rows: [(Station, Attempt)]
        do {
            // Each station with the power on its chip.
            rows = try ledger.burnedStations().map { burned in
                var station = burned.station
                station.identity = burned.carried
                return (station, burned.attempt)
            }
        } catch { throw ledgerFailure(error, path: try shownPath(command)) }
        if format == .json {
            try emit(
                JSONValue.array(
                    rows.map { station, attempt in
                        .object(
                            [("name", .string(station.name))] + EncodeCommand.identityFields(station.identity) + [
                                ("chip", .string(attempt.chip)), ("debugger", .string(attempt.debugger)),
                                ("at", .string(attempt.finishedAt ?? attempt.startedAt)),
                                ("imageSha256", .string(attempt.imageSHA256)),
                                ("address", attempt.advertiserAddress.map { .string($0) } ?? .null),
                                ("readBack", attempt.readBack.map { .string($0) } ?? .null),
                                ("heard", attempt.onAir.map { .bool($0.heard) } ?? .null),
                                ("rssiCount", attempt.onAir.map { .integer($0.rssiCount) } ?? .null),
                                ("rssiMedian", attempt.onAir?.rssiMedian.map { .integer($0) } ?? .null),
                                ("powerSource", attempt.powerSource.map { .string($0) } ?? .null),
                                ("debugLocked", .bool(attempt.debugLocked)),
                                ("bench", attempt.bench.map { .string($0) } ?? .null),
                                ("run", attempt.run.map { .string($0) } ?? .null),
                            ])
                    }
                ).rendered() + "\n")
            return
        }
        // Every cell through the one CSV encoder: text quoted and kept from being a formula,
        // numbers as they are.
        let cell = CSVCell.text
        var text =
            "name,uuid,major,minor,power,chip,debugger,at,address,readBack,heard,rssiCount,rssiMedian,powerSource,debugLocked,bench,run\n"
        for (station, attempt) in rows {
            let identity = station.identity
            text +=
                [
                    cell(station.name), cell(identity.uuid.uuidString), CSVCell.number(identity.major),
                    CSVCell.number(identity.minor), CSVCell.number(identity.measuredPower), cell(attempt.chip),
                    cell(attempt.debugger), cell(attempt.finishedAt ?? ""), cell(attempt.advertiserAddress ?? ""),
                    cell(attempt.readBack ?? ""), attempt.onAir.map { $0.heard ? "yes" : "no" } ?? "",
                    attempt.onAir.map { CSVCell.number($0.rssiCount) } ?? "",
                    attempt.onAir?.rssiMedian.map(CSVCell.number) ?? "", cell(attempt.powerSource ?? ""),
                    attempt.debugLocked ? "yes" : "no", cell(attempt.bench ?? ""), cell(attempt.run ?? ""),
                ].joined(separator: ",") + "\n"
        }
        try emit(text)
    }
}

/// `provision --scan-verify`: one controller for every debugger's worker, one scan at a time.
final class ControllerListener: OnAirListener {
    let controller: String
    let transport: Mutex<any HCITransport>
    /// Matching advertisements after which a scan stops early: enough for an RSSI median.
    static let enough = 5

    init(controller: String, transport: any HCITransport) {
        self.controller = controller
        self.transport = Mutex(transport)
    }

    /// Opens `controller` and scans briefly, so that a radio that cannot scan is told before the
    /// run burns anything.
    static func open(_ controller: String, radios: (any HCIControllerProvider)?) throws(CommandFailure)
        -> ControllerListener
    {
        guard let radios else { throw CommandFailure(.failure, "\(controller): this build has no Bluetooth support") }
        do {
            let transport = try radios.open(controller)
            _ = try LiveScan(transport: transport, controller: controller).listen(for: .milliseconds(200))
            return ControllerListener(controller: controller, transport: transport)
        } catch {
            let failure = ScanCommand.failure(error)
            throw CommandFailure(
                .failure, "--scan-verify: \(failure.message); nothing was burned", hint: failure.hint)
        }
    }

    func listen(for expected: OnAirExpectation, seconds: Double) throws(OnAirError) -> OnAirCheck {
        try transport.withLock { transport throws(OnAirError) -> OnAirCheck in
            var rssi: [Int] = []
            var matches = 0
            var others = 0
            do throws(HCIError) {
                _ = try LiveScan(transport: transport, controller: controller).listen(for: .seconds(seconds)) {
                    report in
                    if expected.matches(address: report.address, data: report.data) {
                        matches += 1
                        if report.rssi != 127 { rssi.append(Int(report.rssi)) }
                    } else if expected.address == report.address {
                        others += 1
                    }
                    return matches >= Self.enough
                }
            } catch { throw OnAirError(error.description) }
            rssi.sort()
            return OnAirCheck(
                heard: matches > 0, rssiCount: rssi.count, rssiMedian: rssi.isEmpty ? nil : rssi[(rssi.count - 1) / 2],
                othersFromAddress: others)
        }
    }
}

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
    /// What `provision` was asked.
    struct Arguments: CommandArguments {
        var listPath: String
        /// `--ledger`, else provisioning.sqlite beside the list.
        var ledgerPath: String
        var eventsPath: String?
        var json: Bool
        /// The run's options, but for what the list and the template decide (stations, addresses,
        /// settings).
        var options: ProvisionOptions
        var scanSecondsGiven: Bool
        var settings: StationSettings
        var template: TemplateChoice
        var hooks: HookRunner.Hooks
        var hookTimeoutGiven: Bool
        var bench: String?
        var serverWait: Double?
        var lease: Double
        var releasing: Bool
        /// `--journal-lost`: release this bench's held stations whatever journal their run kept.
        var givingUpJournals: Bool
        var devices: DevicesSelection?
        var scanVerify: String?
        var confirmed: Bool
        var traced: Bool

        init(_ command: ParsedCommand) throws(CommandFailure) {
            listPath = command.positionals[0]
            ledgerPath = CCBeaconCLI.ledgerPath(try command.value(ledger), listPath: listPath)
            eventsPath = try command.value(events)
            json = command.isSet(ProvisionCommand.json)
            options = try runOptions(command)
            scanSecondsGiven = command.isGiven(scanSeconds)
            settings = try Options.settings(command)
            template = try TemplateChoice(command)
            hooks = HookRunner.Hooks(
                verified: try command.value(onVerified), failed: try command.value(onFailed),
                timeout: try command.value(hookTimeout))
            hookTimeoutGiven = command.isGiven(hookTimeout)
            bench = try command.value(ProvisionCommand.bench)
            serverWait = try command.value(ProvisionCommand.serverWait)
            lease = try command.value(ProvisionCommand.lease)
            releasing = command.isSet(releaseInterrupted)
            givingUpJournals = command.isSet(journalLost)
            devices = try command.value(ProvisionCommand.devices)
            scanVerify = try command.value(ProvisionCommand.scanVerify)
            confirmed = command.isSet(yes)
            traced = command.isGiven(Options.trace)
        }

        func validate() throws(CommandFailure) {
            if eventsPath == "-", json {
                throw .usage(
                    "--events - writes the events to standard output, where the run-finished event is the summary: leave out --json, or give --events a file"
                )
            }
            if scanSecondsGiven || options.retryUnheard, scanVerify == nil {
                throw .usage("--scan-seconds and --retry-unheard apply to --scan-verify only")
            }
            if options.secondaryAddresses, options.chipIdentity == .secondary {
                throw .usage(
                    "--address-mode secondary writes each station's address over the chip's secondary address, by which --chip-id secondary names chips: use one of them"
                )
            }
            if givingUpJournals, !releasing || !PostgresURL.isURL(ledgerPath) {
                throw .usage(
                    "--journal-lost applies to --release-interrupted on a shared ledger (--ledger postgresql://…)")
            }
            if hookTimeoutGiven, hooks.verified == nil, hooks.failed == nil {
                throw .usage("--hook-timeout applies to --on-verified and --on-failed")
            }
        }
    }

    static func run(_ arguments: Arguments, console given: Console, hardware: Hardware) throws(CommandFailure) {
        let eventsPath = arguments.eventsPath
        if let eventsPath {
            try EventStream.check(eventsPath)
            // Appended to, so never a file the run reads or writes: the list, the ledger.
            let inputs =
                [CommandSupport.Input(role: "the station list", path: arguments.listPath)]
                + CommandSupport.inputs(ofLedger: arguments.ledgerPath)
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
        let listPath = arguments.listPath
        var options = arguments.options
        // The list and the template are checked before anything else.
        let listStations = try CommandSupport.stations(listPath, consequence: "nothing was burned")
        let (template, _, board) = try arguments.template.resolve()
        guard template.chip.primaryAddress != nil else {
            // The ledger names each chip by its factory address; a chip without one could never
            // be told apart from the next.
            // --chip-id secondary stands in for a factory address that is erased, not for one
            // the part never had.
            let secondary =
                options.chipIdentity == .secondary
                ? "; --chip-id secondary names a chip by its secondary address only where its factory address is erased, and the \(template.chip.name) has none"
                : ""
            throw CommandFailure(
                .dataError,
                "template '\(template.manifest.name)' is for the \(template.chip.name), which has no IEEE address: provision names every chip by it, so it cannot tell these chips apart"
                    + secondary,
                hint: "burn them with 'ccbeacon flash' (no ledger), one station image each ('ccbeacon batch')")
        }
        let settings = arguments.settings
        if !settings.isEmpty { options.settings = try CommandSupport.check(settings, for: template) }
        // The ledger records each station with the power it is burned with.
        let (stations, farPower) = CommandSupport.resolvePower(
            listStations, template: template, settings: settings, board: board)
        if let warning = CommandSupport.powerWarning(farPower) { console.diagnostics(line: warning) }
        if options.secondaryAddresses, template.manifest.field(.advertiserAddress) != nil {
            throw .usage(
                "template '\(template.manifest.name)' advertises with the address in its own advertiser-address field, so it would never use the chip's secondary address: leave out --address-mode secondary (each station's address goes into the template's field)"
            )
        }
        options.addresses = try CommandSupport.addresses(
            stations, template: template, listPath: listPath, consequence: "nothing was burned",
            secondary: options.secondaryAddresses)
        let hooks = arguments.hooks
        // The ledger may hold other lists too: this run burns, releases and counts its own.
        let listed = Set(stations.map(\.name))
        options.stations = listed
        let path = arguments.ledgerPath
        // The host name names the bench unless --bench does; a host name that cannot name one is
        // an error only where a bench must be named (a shared ledger), a file ledger records none.
        let benchName: String?
        if let given = arguments.bench {
            benchName = given
        } else {
            do { benchName = try Values.hostBenchName() } catch {
                guard !PostgresURL.isURL(path) else { throw .usage("\(error.message); give --bench NAME") }
                benchName = nil
                console.diagnostics(
                    line: "note: \(error.message); this run records no bench (give --bench NAME to name one)")
            }
        }
        let opened = try openForRun(
            path, listPath: listPath, bench: benchName, serverWait: arguments.serverWait,
            leaseSeconds: arguments.lease, process: hardware.process,
            hooks: hooks.outcomes, console: console)
        defer { opened.lock.release() }
        let ledger = opened.ledger
        let shown = shownLedger(path)
        try prepare(
            ledger, stations: stations, releasing: arguments.releasing ? (benchName, arguments.givingUpJournals) : nil,
            path: shown, console: console)
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
            ) { report in
                let line = Self.describe(report)
                let tried: HookRunner.Try? = if case .tried(let tried) = report { tried } else { nil }
                if let live {
                    if tried?.delivered != true { live.note(line) }
                } else {
                    console.diagnostics(line: line)
                }
                if let tried { stream?.emit("hook-finished", Self.fields(tried)) }
            }
        }
        do {
            let waiting = (try? hooks.pending(in: ledger, bench: benchName).waiting) ?? []
            for (hook, runs) in Dictionary(grouping: waiting, by: \.hook).sorted(by: {
                $0.key.rawValue < $1.key.rawValue
            }) {
                // On a file ledger, a run without a bench left its hook runs to any next run.
                let benchless = runs.filter { $0.bench == nil }.count
                let whose =
                    benchless == 0
                    ? "of this bench"
                    : benchless == runs.count
                        ? "recorded without a bench"
                        : "of this bench or recorded without one (\(benchless))"
                console.diagnostics(
                    line:
                        "note: \(runs.count) --on-\(hook.rawValue) hook run(s) \(whose) are pending; this run has no --on-\(hook.rawValue), so they wait for a run that has one"
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
            if arguments.json {
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
        let chosen = try chooseDebuggers(arguments.devices, from: try DeviceSupport.listDevices(provider))
        if let controller = arguments.scanVerify {
            // The radio is tried before any chip is burned: a missing permission or controller is
            // told now, not after the first burn.
            options.onAir = try ControllerListener.open(controller, radios: hardware.radios)
        }
        if !arguments.confirmed, console.diagnosticsIsTerminal, isatty(0) == 1 {
            try confirm(
                "\(before.pending) station(s) pending, template '\(template.manifest.name)', ledger \(shown), debuggers \(chosen.map(\.selector).joined(separator: ", ")). Start? [y/N] ",
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
        let traced = arguments.traced
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
                hooks: hookRunner?.counts, json: arguments.json, console: console)
        } catch {
            throw eventsLost ?? error
        }
        if let eventsLost { throw eventsLost }
        if let counts = hookRunner?.counts, counts.leftPending { throw Self.hooksFailed(counts) }
    }

    /// Standard error's terminal size (80 × 24 when it cannot be told).
    static func terminalSize() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// The debuggers' names in the run's log, events and ledger: each one's serial number when it
    /// is plain (shown as it is given: nothing hidden in it), reads like no selector
    /// (`BUS:ADDRESS`, `port:…`) and no other chosen debugger shows the same; else its port
    /// (`port:1-2`), else its `bus:address`. A name says which debugger it was, and shows as it is.
    static func names(of chosen: [DebuggerDevice]) -> [String] {
        let shown = chosen.map { $0.serial.map(VisibleText.escaped) }
        return zip(chosen, shown).map { device, serialShown in
            if let serial = device.serial, serialShown == serial, shown.filter({ $0 == serial }).count == 1,
                !DeviceSelection.readsAsSelector(serial)
            {
                return serial
            }
            return device.portSelector ?? device.selector
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

    /// The run's settings from the command's options (their combinations: `Arguments.validate`).
    static func runOptions(_ command: ParsedCommand) throws(CommandFailure) -> ProvisionOptions {
        var options = ProvisionOptions()
        options.verify = try command.value(verify)
        options.retries = try command.value(retries)
        options.targetTimeoutSeconds = try command.value(wait)
        options.reprovision = command.isSet(reprovision)
        options.scanSeconds = try command.value(scanSeconds)
        options.retryUnheard = command.isSet(retryUnheard)
        options.chipIdentity = try command.value(chipID)
        options.lockDebug = command.isSet(lockDebug)
        options.usbFraming = try command.value(Options.usbFraming)
        options.secondaryAddresses = try command.value(addressMode) == .secondary
        return options
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
    /// finish the chip in progress (and the hook in hand), record it and stop; a second one stops
    /// at once, ending the hook in hand and what it started (`HookSweeper`; the next run recovers,
    /// and runs that hook again). A parent may have blocked them, and the mask survives exec: they are unblocked.
    /// A signal the parent set to be ignored stays ignored, as `nohup` (SIGHUP) and shells for
    /// background jobs (SIGINT) mean it to. Returns the signals handled, to restore afterwards.
    static func installStopSignalHandlers() -> [Int32] {
        let stopSignalNumbers = [SIGINT, SIGTERM, SIGHUP]
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in stopSignalNumbers { sigaddset(&unblock, number) }
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
        _ = HookSweeper.started
        var handled: [Int32] = []
        for number in stopSignalNumbers {
            var current = sigaction()
            sigaction(number, nil, &current)
            if unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1 { continue }  // SIG_IGN
            handled.append(number)
            signal(number) { number in
                guard stopSignals.received(number) > 1 else { return }
                let hook = stopSignals.hookGroup.load(ordering: .relaxed)
                // A later stop with a hook in hand (or being started): the first to claim the
                // sweep hands it to the sweeper, which ends the hook's processes and then this
                // one; the others leave it be (a sweep is bounded, and waited on for at most
                // HookSweeper.deadline).
                if hook != 0, stopSignals.sweeper.load(ordering: .relaxed) {
                    guard
                        stopSignals.sweeping.compareExchange(expected: false, desired: true, ordering: .relaxed)
                            .exchanged
                    else { return }
                    var now = timespec()
                    clock_gettime(CLOCK_MONOTONIC, &now)
                    stopSignals.sweepClaimed.store(Int(now.tv_sec) * 1_000_000_000 + now.tv_nsec, ordering: .relaxed)
                    stopSignals.sweepSignal.store(number, ordering: .relaxed)
                    sem_post(HookSweeper.wakeUp)
                    return
                }
                if hook > 0 { kill(-hook, SIGKILL) }
                _exit(128 + number)
            }
        }
        return handled
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

import BeaconPayload
import BeaconScan
import CCDebugger
import CommandLineKit
import FirmwareTemplate
import PostgresLedger
import Provisioning
import StationLedger
import Stations
import Storage
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `ccbeacon ledger show`, `ccbeacon ledger export` and `ccbeacon ledger check`: they open the
/// ledger read-only and never write to it.
enum LedgerCommand {
    static let show = Command(showSpec, Arguments.self, run: show)
    static let export = Command(exportSpec, Arguments.self, run: export)
    static let check = Command(checkSpec, Arguments.self, run: check)

    static let ledger = Option<String>(
        "--ledger", value: "FILE|URL", help: "ledger file (default ./provisioning.sqlite) or postgresql://… server",
        completion: .files)
    static let format = DefaultedOption<ExportFormat>(
        "--format", choosing: ExportFormat.allCases, default: .csv, help: "output format")
    static let output = Options.output("FILE", help: "write to FILE (default: standard output)")
    static let checkJSON = Flag("--json", help: "machine-readable report")

    /// What `ledger export` writes.
    enum ExportFormat: String, CaseIterable, OptionChoice {
        case csv, json
        /// The fewest beacon regions that cover the registry, as `check-app` reads them.
        case iosRegions = "ios-regions"
    }

    static let showSpec = CommandSpec(
        name: "ledger show", summary: "progress of a station list: done, held, pending", manual: showManual,
        table: showTable)
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
        name: "ledger export", summary: "the registry of burned stations as CSV or JSON", manual: exportManual,
        table: exportTable)
    static let exportTable = CommandTable(
        details: """
            One row per verified station: name, UUID, major, minor, the measured power burned, chip IEEE
            address, debugger, time, advertiser address, which flash bytes were read back to verify it
            (readBack, address ranges such as 0x7F00-0x7F2F,0x7F30-0x7F3F; empty when nothing was), what a scan
            after the burn heard (heard yes/no, rssiCount, rssiMedian; empty when nobody listened: provision
            --scan-verify), and where the power came from (powerSource: calibration, or registered: the list's
            or the board's), whether the chip's debug interface was locked (debugLocked), and the bench and run
            that burned it (bench, run: on a shared pool, which line made the station), then the station list's
            own columns (floor, room, x, y: the stations' attributes, one column each; an object in JSON) — what
            a backend needs to map major/minor to places. The ledger is only read. --format ios-regions writes
            instead the fewest beacon regions that cover the registry (one per UUID, with the major when all its
            stations share one), the regions file an iOS app starts from and `check-app` reads.

            With -o FILE the registry is written whole (temporary file, flushed, renamed) or not
            at all, and never over the ledger itself.

            Example:
              ccbeacon ledger export --format csv -o registry.csv
            """,
        options: [ledger.spec, format.spec, output.spec])

    static let checkSpec = CommandSpec(
        name: "ledger check", summary: "check a ledger's integrity and promises without trusting its indexes",
        manual: checkManual, table: checkTable)
    static let checkTable = CommandTable(
        details: """
            Runs SQLite's full integrity check and the ledger's own invariants, each by a query that
            scans the tables instead of asking the indexes that enforce them: at most one verified
            attempt per station and per chip, at most one attempt in progress per station, no
            verified attempt without a verification method, no chip id that cannot identify a chip
            (all 00, all FF, not XX:XX:XX:XX:XX:XX upper-case hex), no attempt for an unknown
            station, no two stations with one name or identity; and that the indexes and triggers
            keeping those promises are there. Reports every problem; a file SQLite cannot read as a
            ledger at all is one problem, 'readable'. The ledger is only read. On a
            PostgreSQL server (--ledger postgresql://…): its tables, indexes and constraints are
            compared with the schema this ccbeacon makes, and every invariant runs with index scans
            off.
            Exit status 0 when it is sound, 65 when not.

            Example:
              ccbeacon ledger check --ledger provisioning.sqlite
            """,
        options: [ledger.spec, checkJSON.spec])

    /// What a `ledger` command was asked (each takes the options its table lists).
    struct Arguments: CommandArguments {
        var ledger: LedgerChoice
        /// `--json` (show, check).
        var json: Bool
        var format: ExportFormat
        var output: String?

        init(_ command: ParsedCommand) throws(CommandFailure) {
            ledger = try LedgerChoice(command)
            json = command.isSet(Options.json) || command.isSet(checkJSON)
            format = try command.value(LedgerCommand.format)
            output = try command.value(LedgerCommand.output)
        }
    }

    static func check(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        if PostgresURL.isURL(arguments.ledger.path) {
            try checkServer(arguments, console: console)
            return
        }
        let path = arguments.ledger.path
        // A file SQLite cannot read as a ledger is this check's finding, not a refusal of it.
        let ledger = try arguments.ledger.open(access: .inspection) { (found: [String]) throws(CommandFailure) in
            try report(
                found.map { LedgerProblem(check: .readable, detail: $0) }, ledger: path, schemaVersion: nil,
                ok: "", json: arguments.json, console: console)
        }
        // An earlier ccbeacon's ledger has no triggers to check until provision migrates it.
        let ok =
            ledger.fileSchemaVersion < SQLiteLedger.schemaVersion
            ? "integrity and every invariant checked; schema version \(ledger.fileSchemaVersion), from an earlier ccbeacon: provision migrates it to version \(SQLiteLedger.schemaVersion)"
            : "integrity, schema and every invariant checked"
        try report(
            ledger.check(), ledger: path, schemaVersion: ledger.fileSchemaVersion, ok: ok, json: arguments.json,
            console: console)
    }

    /// `ledger check` of a ledger on a server: its schema against the one ccbeacon makes, and
    /// every invariant by a query that scans the tables.
    static func checkServer(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let shown = arguments.ledger.shown
        guard let ledger = try arguments.ledger.openForReading() as? PostgresLedger else { return }
        let (problems, notes) = ledger.checkReport()
        try report(
            problems, ledger: shown, schemaVersion: ledger.databaseVersion,
            ok: notes.isEmpty ? "schema and every invariant checked" : notes.joined(separator: "; "),
            json: arguments.json, console: console)
    }

    /// The problems `ledger check` found, in text or `--json`; a ledger with problems fails (65).
    static func report(
        _ problems: [LedgerProblem], ledger: String, schemaVersion: Int?, ok: String, json: Bool,
        console: Console
    ) throws(CommandFailure) {
        if json {
            console.data(
                JSONValue.object([
                    ("ledger", .string(ledger)), ("ok", .bool(problems.isEmpty)),
                    ("schemaVersion", schemaVersion.map { .integer($0) } ?? .null),
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

    static func show(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let states: [StationState]
        let burnAgain: [String: String]
        let attempts: [Attempt]
        let pendingHooks: [HookRun]
        let ledger = try arguments.ledger.openForReading()
        do {
            states = try ledger.states()
            burnAgain = try ledger.recalibratedStations()
            attempts = try ledger.attempts()
            pendingHooks = try ledger.hookRuns(pendingOnly: true)
        } catch {
            throw ledgerFailure(error, path: arguments.ledger.shown)
        }
        let benches = BenchGroups(attempts)
        let locked = Set(attempts.filter { $0.outcome == .verified && $0.debugLocked }.map(\.station))
        let hooksOf = Dictionary(grouping: pendingHooks, by: \.attempt.station)
        if arguments.json {
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
            return "hook runs pending for bench \(bench): \(kinds)"
                + (tried.isEmpty
                    ? "" : "; \(tried.count) tried and failed (last: \(tried.last?.lastStatus ?? "?"))")
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
                    "bench \(bench): \(done) done, \(held) held, \(burning) burning, \(failed[bench, default: 0]) failed attempt(s)"
            }
        }
    }

    static func export(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (format, output) = (arguments.format, arguments.output)
        if let output {
            // The journal sits beside the ledger's real name, whatever name it was given by; a
            // server's ledger is no file, but the output is checked all the same (a bench's
            // journal, another ledger: the second review wrote over a journal through a pool).
            try CommandSupport.checkOutputs([output], against: CommandSupport.inputs(ofLedger: arguments.ledger.path))
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
        let ledger = try arguments.ledger.openForReading()
        let rows: [(Station, Attempt)]
        do {
            // Each station with the power on its chip.
            rows = try ledger.burnedStations().map { burned in
                var station = burned.station
                station.identity = burned.carried
                return (station, burned.attempt)
            }
        } catch { throw ledgerFailure(error, path: arguments.ledger.shown) }
        if format == .iosRegions {
            try emit(AppRegions.file(AppRegions.covering(rows.map(\.0))))
            return
        }
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
                                ("attributes", station.attributesObject),
                            ])
                    }
                ).rendered() + "\n")
            return
        }
        // Every cell through the one CSV encoder: text quoted and kept from being a formula,
        // numbers as they are.
        let cell = CSVCell.text
        // The stations' attributes follow, one column each, in the order the stations name them.
        let attributeNames = StationAttribute.columns(of: rows.map(\.0))
        var text = (Registry.columns + attributeNames.map(cell)).joined(separator: ",") + "\n"
        for (station, attempt) in rows {
            let values = station.attributeValues
            let attributes = attributeNames.map { "," + CSVCell.value(values[$0] ?? "") }
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
                ].joined(separator: ",") + attributes.joined() + "\n"
        }
        try emit(text)
    }
}

/// The ledger a command names: `--ledger FILE|URL`, else ./provisioning.sqlite; decoded with the
/// arguments, opened when the command runs.
struct LedgerChoice: Sendable, Equatable {
    /// The file or the server's URL.
    var path: String

    /// The ledger the command line names.
    init(_ command: ParsedCommand) throws(CommandFailure) {
        path = ledgerPath(try command.value(LedgerCommand.ledger), listPath: nil)
    }

    /// The ledger as messages name it: a server's URL without its password.
    var shown: String { PostgresURL.isURL(path) ? PostgresURL.shown(path) : path }

    /// The ledger for reading: a SQLite file, or a PostgreSQL server by its URL (`postgresql://…`;
    /// opened without creating anything).
    func openForReading() throws(CommandFailure) -> any ProvisioningLedger & Sendable {
        guard PostgresURL.isURL(path) else { return try open() }
        do { return try PostgresLedger(url: path, bench: "", creating: false) } catch {
            if case .refused = error.kind {
                throw .data(error.description, hint: "give --ledger the URL of a database that holds a ccbeacon ledger")
            }
            throw CommandFailure(
                .failure, error.description, hint: "check the URL, that the server runs and that this user may connect")
        }
    }

    /// The SQLite ledger file, which must exist (a server's URL is refused). `damaged`, when given,
    /// takes what was found in a file SQLite cannot read as a ledger, before it is refused.
    func open(access: LedgerAccess = .readOnly, damaged: (([String]) throws(CommandFailure) -> Void)? = nil)
        throws(CommandFailure) -> SQLiteLedger
    {
        try refuseServer(path)
        guard Files.isFile(path) else {
            throw CommandFailure(
                .failure, "no ledger at '\(path)'",
                hint: "give --ledger FILE (provision writes it beside the station list)")
        }
        return try openLedger(path, access: access, damaged: damaged)
    }
}

import BeaconPayload
import CommandLineKit
import FirmwareTemplate
import HexText
import IntelHex
import PostgresLedger
import Provisioning
import StationLedger
import Stations
import Storage
import StructuredText
import TargetData

/// Options and steps several commands share.
enum CommandSupport {
    /// A note for intervals below 100 ms, which non-connectable advertising may use only from
    /// Bluetooth 5.0 on; `nil` otherwise.
    static func intervalNote(_ settings: StationSettings) -> String? {
        guard let interval = settings.interval, interval.microseconds < 100_000 else { return nil }
        return
            "note: \(interval) ms is below 100 ms, the Bluetooth 4.x minimum for non-connectable advertising; scanners built to Bluetooth 5.0 or later accept it"
    }

    /// The battery estimate of a station of `template` whose image holds `settings`, as a line for
    /// people and a JSON object (`batteryLifeDays` null, with the reason, when there is none);
    /// `codeMatches` false (an inspected image that does not hold the template's code,
    /// `StationTemplate.hasCode`) gives none, and so does no template at all.
    static func batteryReport(
        _ template: StationTemplate?, settings: FoundSettings, battery: Battery, codeMatches: Bool = true
    ) -> (line: String, json: JSONValue) {
        let result =
            template?.batteryEstimate(settings: settings, battery: battery, codeMatchesTemplate: codeMatches)
            ?? .failure(.noTemplateFound)
        var members: [(String, JSONValue)] = [
            ("battery", .string(battery.name)), ("template", template.map { .string($0.manifest.name) } ?? .null),
        ]
        // The figures to tenths, as the line shows them.
        func tenths(_ value: Double) -> JSONValue { .number((value * 10).rounded() / 10) }
        switch result {
        case .success(let estimate):
            members += [
                ("batteryLifeDays", tenths(estimate.days)), ("averageMicroamps", tenths(estimate.averageMicroamps)),
                ("periodMilliseconds", tenths(estimate.periodMilliseconds)),
                ("txPowerDbm", .integer(estimate.txPowerDbm)), ("measured", .bool(false)),
            ]
            return (estimate.summary, .object(members))
        case .failure(let reason):
            members += [("batteryLifeDays", .null), ("reason", .string(reason.description))]
            return (reason.description, .object(members))
        }
    }

    /// The stations with the measured power each gets: the list's, else the board's default at
    /// the station's TX power (`MeasuredPowerRule`); and those whose list value lies more than
    /// 10 dB from that expectation, for a warning.
    static func resolvePower(
        _ stations: [Station], template: StationTemplate, settings: StationSettings, board: Board?
    ) -> (stations: [Station], far: [(Station, MeasuredPowerChoice)]) {
        let txPower = MeasuredPowerRule.txPower(of: template, settings: settings)
        var far: [(Station, MeasuredPowerChoice)] = []
        let resolved = stations.map { station -> Station in
            let given = station.powerOrigin.map { (dBm: station.identity.measuredPower, origin: $0) }
            let choice = MeasuredPowerRule.choose(given: given, board: board, txPower: txPower)
            var station = station
            station.identity.measuredPower = choice.dBm
            station.powerOrigin = choice.origin
            if given != nil, choice.isFarFromExpected { far.append((station, choice)) }
            return station
        }
        return (resolved, far)
    }

    /// What an image's measured power is against the expectation of `board` (the generic default
    /// without one) at the TX power the image's template field holds: a line for people and the
    /// JSON object `inspect` and `verify` print.
    static func powerReport(_ found: Int8, in memory: MemoryImage, template: StationTemplate, board: Board?)
        -> (line: String, json: JSONValue)
    {
        let register = template.foundSettings(in: memory).txPowerRegister
        let txPower = register.flatMap { template.chip.txPower(register: $0) }
        let choice = MeasuredPowerRule.choose(given: nil, board: board, txPower: txPower)
        let matches = found == choice.dBm
        let basis =
            "\(board.map { "board \($0.name)" } ?? "generic default"): \(choice.reference.dBm) dBm at 0 dBm"
            + (txPower.map { ", TX power \($0) dBm" } ?? "")
        let far = abs(Int(found) - Int(choice.dBm)) > MeasuredPowerChoice.warningDistance
        var line = "measured power \(found) dBm: the default for this TX power (\(basis))"
        if !matches {
            line =
                "measured power \(found) dBm: not the default \(choice.dBm) dBm for this TX power (\(basis)); given or calibrated"
            if far { line += ", more than \(MeasuredPowerChoice.warningDistance) dB away" }
        }
        let origin = matches ? choice.origin.label : "not the default (given or calibrated)"
        let tx: JSONValue = txPower.map { JSONValue.integer($0) } ?? .null
        let json = JSONValue.object([
            ("dBm", .integer(Int(found))), ("expected", .integer(Int(choice.dBm))), ("txPower", tx),
            ("origin", .string(origin)), ("reference", .string(choice.reference.source)),
        ])
        return (line, json)
    }

    /// The warning for stations whose given power lies far from the expectation, or nil.
    static func powerWarning(_ far: [(Station, MeasuredPowerChoice)]) -> String? {
        guard let (_, first) = far.first else { return nil }
        let shown = far.map { "\($0.0.name) (\($0.1.dBm) dBm)" }.joinedExcerpt()
        return
            "warning: \(far.count) station\(far.count == 1 ? "" : "s") of the list carr\(far.count == 1 ? "ies" : "y") a measured power more than \(MeasuredPowerChoice.warningDistance) dB from the \(first.expected) dBm expected at this TX power (\(first.reference.source)): \(shown); phones estimate distance from it — keep it only if it was measured at 1 m"
    }

    /// Checks that `template` can carry `settings`; a setting it cannot carry is a usage error that
    /// names the template.
    static func check(_ settings: StationSettings, for template: StationTemplate) throws(CommandFailure)
        -> CheckedSettings
    {
        do { return try template.check(settings) } catch {
            throw CommandFailure(.usage, error.description, hint: error.hint)
        }
    }

    /// The station list at `listPath`, checked whole; every problem is reported, and the message
    /// ends with `consequence` ("nothing was written").
    static func stations(_ listPath: String, consequence: String) throws(CommandFailure) -> [Station] {
        let listBytes = try FileAccess.read(listPath)
        do { return try StationListReader.read(listBytes, file: listPath) } catch {
            let count = error.problems.count
            throw CommandFailure(
                .dataError, "\(listPath) has \(count) problem\(count == 1 ? "" : "s"); \(consequence):",
                details: error.problems.map(\.description), hint: "fix the list and run again")
        }
    }

    /// The list's own advertiser addresses, checked against `template` (see `AddressPlan`).
    static func addresses(
        _ stations: [Station], template: StationTemplate, listPath: String, consequence: String,
        secondary: Bool = false
    ) throws(CommandFailure) -> [String: RandomStaticAddress] {
        do { return try AddressPlan.check(stations, template: template, file: listPath, secondary: secondary) } catch {
            throw CommandFailure(
                .dataError, "\(listPath): advertiser addresses do not work out; \(consequence):",
                details: error.problems.map(\.description),
                hint: "fix the address column, or leave it empty to derive addresses")
        }
    }

    /// An image file as the commands read it.
    struct LoadedImage {
        /// Its memory.
        var memory: MemoryImage
        /// A HEX file's start address record, if it has one.
        var startAddress: StartAddress?
        /// A HEX file's text (valid HEX); nil for .bin.
        var hexText: [UInt8]?
    }

    static func hexAddress(_ value: Int) -> String { HexText.address(value) }

    /// An input of a command that no output of the same run may replace.
    struct Input {
        /// What it is, for the message ("the station list").
        var role: String
        /// Its path.
        var path: String
    }

    /// Refuses (exit 64) when writing any of `outputs` would replace one of `inputs`.
    static func refuseOverwriting(_ inputs: [Input], with outputs: [String]) throws(CommandFailure) {
        for output in outputs {
            if let input = inputs.first(where: { PathIdentity.same(output, $0.path) }) {
                throw .usage(
                    "writing '\(output)' would overwrite \(input.role) '\(input.path)', an input of this run; choose another output"
                )
            }
        }
    }

    /// The files a ledger given as `path` is kept in (`SQLiteLedger.keptFiles`, beside its real
    /// path, whatever name it was given by): inputs no output may replace. None for a server's.
    static func inputs(ofLedger path: String) -> [Input] {
        guard !PostgresURL.isURL(path) else { return [] }
        return SQLiteLedger.keptFiles(PathIdentity.resolved(path)).enumerated().map {
            Input(role: $0.offset == 0 ? "the ledger" : "the ledger's file", path: $0.element)
        }
    }

    /// Why the file at `path` may be a station list (`StationListReader.mayBeList` of its first
    /// 64 KiB), or nil: where there is no regular file, or one that is no list. A file there that
    /// cannot be read cannot be told apart from a list, and counts as one.
    static func stationListEvidence(at path: String) -> String? {
        guard Files.isFile(path) else { return nil }
        guard let head = Files.readStart(path, limit: 64 << 10) else {
            return "cannot be read to tell whether it is a station list"
        }
        return StationListReader.mayBeList(head) ? "is a station list" : nil
    }

    /// The inputs a template brings (its manifest and image).
    static func inputs(of template: StationTemplate) -> [Input] {
        template.files.map { Input(role: "the template '\(template.manifest.name)' file", path: $0) }
    }

    /// Where a command's outputs go, for `checkOutputs`.
    enum OutputFolder {
        /// An existing folder (the single-file writers).
        case existing
        /// A folder the command creates when it is missing (`template import`).
        case created
        /// A batch's own folder, created when missing: the files its record lists are the batch's
        /// to replace.
        case batch
    }

    /// Checks every output path before anything is written: none may be longer than the system
    /// takes (`Files.lengthProblem`, exit 64) or end in `/` (exit 64), none may replace an input of
    /// the run (compared by resolved path and by device and inode, so `./x`, `../d/x`, a symlink or
    /// a hard link are all caught — exit 64), none may be a folder or anything else but a regular
    /// file (exit 64), none may be where ccbeacon keeps state (`OutcomeJournal.keptState`: a
    /// ledger, its SQLite journal names, a bench journal's name — exit 64), none but `batch`
    /// itself may replace a file a batch record in the same folder lists
    /// (exit 64: `stations.json` would then disagree with its files), and each must go into an
    /// existing, writable folder (exit 1), so that no output is written when another cannot be. A
    /// folder the command creates (`.created`, `.batch`) may be missing: its nearest existing
    /// ancestor must then be a writable folder. No output replaces a file that may be a station
    /// list (`stationListEvidence`, exit 64): the identities it holds may be nowhere else — but for
    /// a command that writes station lists and checks the one it replaces itself
    /// (`replacesStationLists`).
    static func checkOutputs(
        _ outputs: [String], against inputs: [Input], folder: OutputFolder = .existing,
        replacesStationLists: Bool = false
    ) throws(CommandFailure) {
        for output in outputs {
            if let problem = Files.lengthProblem(output) {
                throw .usage("'\(output.excerpt(limit: 60))': \(problem); shorten it")
            }
            if Files.withoutTrailingSeparators(output) != output {
                throw .usage("'\(output)' names a folder (it ends in '/' or '/.'); name a file to write")
            }
        }
        try refuseOverwriting(inputs, with: outputs)
        for output in outputs {
            if let kind = Files.nonFileKind(output) {
                throw .usage(
                    kind == "a directory"
                        ? "'\(output)' is a folder; name a file to write, or move the folder away"
                        : "'\(output)' is \(kind), not a regular file; name a file to write, or move it away")
            }
            if let state = OutcomeJournal.keptState(at: output) {
                throw .usage("'\(output)' \(state); no output is written there: name another file")
            }
            let directory = Files.directory(of: output)
            if folder != .batch, let record = BatchRecord.read(in: directory),
                record.files.contains(Files.lastComponent(output))
            {
                throw .usage(
                    "'\(output)' belongs to the batch recorded in '\(record.path)', which would no longer agree with its files; write elsewhere, or rerun batch to change that folder"
                )
            }
            if !replacesStationLists, folder != .batch, let evidence = stationListEvidence(at: output) {
                throw .usage(
                    "'\(output)' \(evidence); no output replaces one, whose identities may be nowhere else: name another file"
                )
            }
            // A folder the command creates is made in its nearest existing ancestor, which must take it.
            let existing = folder == .existing ? directory : Files.nearestExisting(directory)
            guard Files.isDirectory(existing) else {
                let taken = Files.exists(existing)
                // A link that leads nowhere, or to a file, is not a file of the user's.
                let link = Files.linkEnd(existing)
                throw CommandFailure(
                    .failure,
                    "cannot write '\(output)': "
                        + (link.map { "'\(existing)' is \($0.text)" }
                            ?? (taken ? "'\(existing)' is not a folder" : "the folder '\(directory)' does not exist")),
                    hint: link?.missing == true
                        ? "create the folder it leads to, or choose another output path; nothing was written"
                        : link != nil
                            ? "choose another output path; nothing was written"
                            : taken
                                ? "choose another output path ('\(existing)' is a file of its own); nothing was written"
                                : "create it first, or choose another output path; nothing was written")
            }
            guard Files.isWritableDirectory(existing) else {
                throw CommandFailure(
                    .failure, "cannot write '\(output)': the folder '\(existing)' is not writable",
                    hint: "choose another output path; nothing was written")
            }
        }
    }
}

/// Which template a command uses: --template NAME, or the default template of --board NAME
/// (searched with --templates DIR too); decoded with the arguments, loaded when the command runs.
struct TemplateChoice: Sendable, Equatable {
    var templatesFolder: String?
    var template: String?
    var board: String?

    /// The choice the command line makes.
    init(_ command: ParsedCommand) throws(CommandFailure) {
        templatesFolder = try command.value(Options.templates)
        template = try command.value(Options.template)
        board = try command.value(Options.board)
    }

    /// Whether --template or --board was given.
    var isMade: Bool { template != nil || board != nil }

    /// Refuses --templates DIR where nothing looks for a template (neither --template nor --board,
    /// nor `otherLookup`, an option of the command's own that searches the templates, is given):
    /// ignored, it would let a user believe their folder was used.
    func refuseUnusedFolder(otherLookup: (name: String, given: Bool)? = nil) throws(CommandFailure) {
        guard templatesFolder != nil, !isMade, otherLookup?.given != true else { return }
        let named = otherLookup.map { "--template, --board or \($0.name)" } ?? "--template or --board"
        throw .usage(
            "--templates DIR says where \(named) look for templates; give one of them, or leave --templates out")
    }

    /// The template named by --template, or the default template of --board, with the board
    /// (`nil` for --template: its measured power is then the generic default).
    func resolve() throws(CommandFailure) -> (template: StationTemplate, locations: DataLocations, board: Board?) {
        let locations = try DataLocations.find(templatesOption: templatesFolder)
        let catalog = try locations.loadBoards()
        let reference: String
        var chosenBoard: Board?
        if let template {
            reference = template
        } else if let boardName = board {
            guard let board = catalog.board(named: boardName) else {
                throw .usage(
                    "no board '\(boardName)'; the boards are \(catalog.boards.map(\.name).joined(separator: ", ")) (see 'ccbeacon boards')"
                )
            }
            reference = board.defaultTemplate
            chosenBoard = board
        } else {
            // The parser refuses a command whose table requires the group; this is for the others.
            throw .usage(Options.requiredTemplate.missing)
        }
        return (try locations.loadTemplate(reference, catalog: catalog), locations, chosenBoard)
    }
}

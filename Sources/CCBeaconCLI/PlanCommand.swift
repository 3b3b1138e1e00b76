import BeaconPayload
import CommandLineKit
import FirmwareTemplate
import Foundation
import PostgresLedger
import StationLedger
import Stations
import Storage
import StructuredText

/// `ccbeacon plan`: a site's places made into a station list.
enum PlanCommand {
    static let spec = CommandSpec(
        name: "plan", summary: "make a site's places into a station list: one UUID, a major, a minor each",
        manual: manual,
        table: CommandTable(
            details: """
                PLACES.csv has a name column and any others (floor, room, x, y, notes; note, power and
                address as a station list takes them). Each place becomes a station with --uuid, --major
                and the next minor from --first-minor (1) that no station of the ledger (--ledger) or of
                the station lists (--list, comma-separated) has under that UUID and major; a place that
                is already such a station (by name) keeps its minor, so planning a site again after
                adding places keeps every minor given. The result is a station list that batch,
                provision and labels take as it is, carrying the places' columns (the ledger keeps them,
                ledger export writes them). A site too large for the minors left is refused, and nothing
                is written.

                --battery estimates how long that battery lasts each station as batch and provision
                would make it: with --template or --board, --interval and --tx-power (default the
                template's); the model and its sources: docs/battery-life.md.

                Example:
                  ccbeacon plan places.csv --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 2 -o floor2.csv
                """,
            options: [
                Options.uuid.required.spec, Options.major.required.spec, firstMinor.spec, ledger.spec, lists.spec,
                output.spec, Options.battery.spec,
            ] + Options.templateOptions + Options.listSettingOptions,
            positionals: [PositionalSpec("PLACES", usage: "PLACES.csv", completion: .files)],
            groups: [Options.optionalTemplate]))
    static let command = Command(spec, Arguments.self, run: run)

    static let firstMinor = Option<UInt16>(
        "--first-minor", value: "M", help: "the lowest minor to give (default 1)"
    ) { text throws(CommandFailure) in
        do throws(IdentityError) { return try IdentityParser.uint16(text, field: .minor) } catch {
            throw .data("--first-minor: '\(error.input.excerpt())' \(error.problem); allowed: \(error.allowed)")
        }
    }
    static let ledger = Option<String>(
        "--ledger", value: "FILE|URL", help: "skip the identities this ledger holds (file or postgresql://…)",
        completion: .files)
    static let lists = Option<[String]>(
        "--list", value: "FILE[,FILE…]", help: "skip the identities of these station lists", completion: .files
    ) { text throws(CommandFailure) in
        let files = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !files.contains(where: \.isEmpty) else { throw .usage("--list names an empty file name in '\(text)'") }
        return files
    }
    static let output = Options.output("STATIONS.csv", help: "the station list to write").required

    /// What `plan` was asked.
    struct Arguments: CommandArguments {
        var placesPath: String
        var uuid: UUID
        var major: UInt16
        var firstMinor: UInt16
        var ledger: LedgerChoice?
        var lists: [String]
        var output: String
        var battery: Battery?
        /// The template and settings the estimate assumes (only with `battery`).
        let template: TemplateChoice
        var settings: StationSettings

        init(_ command: ParsedCommand) throws(CommandFailure) {
            placesPath = command.positionals[0]
            uuid = try command.value(Options.uuid.required)
            major = try command.value(Options.major.required)
            firstMinor = try command.value(PlanCommand.firstMinor) ?? 1
            ledger = try command.value(PlanCommand.ledger) == nil ? nil : try LedgerChoice(command)
            lists = try command.value(PlanCommand.lists) ?? []
            output = try command.value(PlanCommand.output)
            battery = try command.value(Options.battery)
            template = try TemplateChoice(command)
            settings = try Options.settings(command)
            if battery == nil {
                let estimateOnly = (Options.templateOptions + Options.listSettingOptions).map(\.name)
                for name in command.givenOptionNames where estimateOnly.contains(name) {
                    throw .usage(
                        "\(name) is only for the --battery estimate; batch and provision take it when they make the images"
                    )
                }
            } else if !template.isMade {
                throw .usage(
                    "--battery needs --template or --board (the one batch will burn): the estimate reads the interval and TX power from the template's fields"
                )
            }
        }
    }

    /// `minors` as runs (`1…3, 7`): the first five, then how many more.
    static func runs(_ minors: [UInt16]) -> String {
        var runs: [ClosedRange<Int>] = []
        for minor in Set(minors.map(Int.init)).sorted() {
            if let last = runs.last, last.upperBound + 1 == minor {
                runs[runs.count - 1] = last.lowerBound...minor
            } else {
                runs.append(minor...minor)
            }
        }
        let shown = runs.prefix(5).map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)…\($0.upperBound)" }
        return shown.joined(separator: ", ") + (runs.count > 5 ? " and \(runs.count - 5) more run(s)" : "")
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (places, output) = (arguments.placesPath, arguments.output)
        var inputs = [CommandSupport.Input(role: "the places", path: places)]
        inputs += arguments.lists.map { CommandSupport.Input(role: "the station list", path: $0) }
        if let ledger = arguments.ledger { inputs += CommandSupport.inputs(ofLedger: ledger.path) }
        try CommandSupport.checkOutputs([output], against: inputs, replacesStationLists: true)
        let bytes = try FileAccess.read(places)
        var sources: [(source: String, stations: [Station])] = []
        for list in arguments.lists {
            sources.append((list, try CommandSupport.stations(list, consequence: "nothing was planned")))
        }
        if let choice = arguments.ledger {
            let opened = try choice.openForReading()
            do { sources.append(("the ledger \(choice.shown)", try opened.states().map(\.station))) } catch {
                throw ledgerFailure(error, path: choice.shown)
            }
        }
        let conflicts = SitePlan.conflicts(among: sources)
        guard conflicts.isEmpty else {
            throw CommandFailure(
                .dataError,
                "the stations already given disagree in \(conflicts.count) place\(conflicts.count == 1 ? "" : "s"); nothing was planned:",
                details: conflicts,
                hint:
                    "give each station one identity and each identity one station across --list and --ledger, then run again"
            )
        }
        let known = sources.flatMap(\.stations)
        let stations: [Station]
        do {
            stations = try SitePlan.plan(
                places: bytes, file: places, uuid: arguments.uuid, major: arguments.major,
                firstMinor: arguments.firstMinor, known: known)
        } catch {
            let count = error.problems.count
            throw CommandFailure(
                .dataError, "\(places) has \(count) problem\(count == 1 ? "" : "s"); nothing was written:",
                details: error.problems.map(\.description), hint: "fix the places (or the options) and run again")
        }
        var battery: String?
        if let chosen = arguments.battery, let first = stations.first {
            let (template, _, _) = try arguments.template.resolve()
            let checked = try CommandSupport.check(arguments.settings, for: template)
            let image = template.stationImage(for: first.identity, settings: checked)
            battery = CommandSupport.batteryReport(template, settings: image.settings, battery: chosen).line
        }
        let text = Array(SitePlan.csv(stations).utf8)
        // A list already there is replaced only by the same list (the same plan run again): a plan
        // over another would give its places other identities, or drop some.
        if CommandSupport.stationListEvidence(at: output) != nil, (try? Files.read(output)) != text {
            throw CommandFailure(
                .failure,
                "'\(output)' is a station list already, and this plan is not the same list; nothing was written",
                hint:
                    "to keep its identities, plan with it as --list into another file (--list \(output) -o NEW.csv), then replace it; or name another file"
            )
        }
        try FileAccess.writeAtomically(text, to: output)
        let minors = stations.map(\.identity.minor)
        console.output(
            line:
                "wrote \(output): \(stations.count) station\(stations.count == 1 ? "" : "s"), UUID \(arguments.uuid.uuidString) major \(arguments.major), \(minors.count == 1 ? "minor" : "minors") \(Self.runs(minors))"
        )
        if let battery { console.output(line: battery) }
    }
}

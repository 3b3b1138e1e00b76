import CommandLineKit
import StationLedger
import Stations
import StructuredText

/// `ccbeacon check-app`: an app's beacon regions against the stations it is meant to hear.
enum CheckAppCommand {
    static let spec = CommandSpec(
        name: "check-app", summary: "check an iOS app's beacon regions against the stations", manual: manual,
        table: CommandTable(
            details: """
                REGIONS.json is the app's list of beacon regions: a JSON array of {"identifier", "uuid",
                "major"?, "minor"?}, what CLBeaconIdentityConstraint takes. The stations are a ledger's
                verified ones (--ledger) or a station list's. Reports every station no monitored region
                covers (the app never wakes for it), every region that matches no station (naming the
                closest UUID the stations use, or the vendor whose default UUID it is), regions sharing one
                identifier (registering the later replaces the earlier, which then covers nothing) and more
                than 20 regions monitored (what iOS monitors for one app). Exit status 0 when there is
                nothing to report, 1 otherwise.

                Example:
                  ccbeacon check-app regions.json --ledger provisioning.sqlite
                """,
            options: [ledger.spec, Options.json.spec],
            positionals: [
                PositionalSpec("REGIONS", usage: "REGIONS.json", completion: .files),
                PositionalSpec("STATIONS", usage: "STATIONS.csv|STATIONS.json", required: false, completion: .files),
            ]))
    static let command = Command(spec, Arguments.self, run: run)

    static let ledger = Option<String>(
        "--ledger", value: "FILE|URL", help: "check against a ledger's verified stations (file or postgresql://…)",
        completion: .files)

    /// What `check-app` was asked.
    struct Arguments: CommandArguments {
        var regionsPath: String
        /// A station list, or a ledger: never both.
        var stations: Source
        var json: Bool

        enum Source: Equatable {
            case list(String)
            case ledger(LedgerChoice)
        }

        init(_ command: ParsedCommand) throws(CommandFailure) {
            regionsPath = command.positionals[0]
            switch (command.positionals.dropFirst().first, try command.value(CheckAppCommand.ledger)) {
            case (nil, nil): throw .usage("give the stations: a station list (STATIONS.csv) or --ledger FILE|URL")
            case (_?, _?): throw .usage("give a station list or --ledger, not both")
            case (let list?, nil): stations = .list(list)
            case (nil, _?): stations = .ledger(try LedgerChoice(command))
            }
            json = command.isSet(Options.json)
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let path = arguments.regionsPath
        let regions: [BeaconRegion]
        let bytes = try FileAccess.read(path)
        do { regions = try AppRegions.read(bytes, file: path) } catch {
            throw .data(error.description, hint: "fix the regions file and run again")
        }
        let stations: [Station]
        let source: String
        switch arguments.stations {
        case .list(let list):
            stations = try CommandSupport.stations(list, consequence: "nothing was checked")
            source = list
        case .ledger(let choice):
            let opened = try choice.openForReading()
            do { stations = try opened.burnedStations().map(\.station) } catch {
                throw ledgerFailure(error, path: choice.shown)
            }
            source = choice.shown
        }
        let report = AppRegions.check(regions, stations: stations)
        if arguments.json {
            console.data(json(report, regions: path, stations: source).rendered() + "\n")
        } else {
            console.output(lines: lines(report, regions: path, stations: source))
        }
        if report.hasProblems {
            throw CommandFailure(
                .failure, "the app's regions do not match the stations",
                hint: "'ccbeacon ledger export --format ios-regions' writes the fewest regions that cover a ledger")
        }
    }

    static func name(_ region: BeaconRegion) -> String {
        "region [\(region.index)] '\(region.identifier.excerpt())' (line \(region.line))"
    }

    static func lines(_ report: RegionReport, regions: String, stations: String) -> [String] {
        var lines = [
            "\(report.regionCount) region\(report.regionCount == 1 ? "" : "s") in \(regions), \(report.stationCount) station\(report.stationCount == 1 ? "" : "s") in \(stations)"
        ]
        for station in report.uncovered {
            lines.append(
                "uncovered: \(station.name) (\(station.identity.uuid.uuidString) major \(station.identity.major) minor \(station.identity.minor)): "
                    + (report.replacedCover(of: station).map {
                        "\(name($0.region)) covers it, but the app monitors \(name($0.monitoredInstead)) under that identifier instead"
                    } ?? report.pastLimitCover(of: station).map {
                        "only \(name($0)) covers it, which is past the \(AppRegions.monitoringLimit) regions iOS monitors for one app: registering it fails"
                    } ?? "no region covers it")
            )
        }
        for (region, reason) in report.unmatched {
            lines.append("unmatched: \(name(region)), \(region.constraint): \(reason)")
        }
        for (earlier, later) in report.sharedIdentifiers {
            lines.append(
                "shared identifier: \(name(later)) has the identifier of region [\(earlier.index)]; registering it replaces the other"
            )
        }
        if report.tooManyToMonitor {
            lines.append(
                "too many: \(report.monitoredCount) regions\(report.monitoredCount == report.regionCount ? "" : " under distinct identifiers"); iOS monitors at most \(AppRegions.monitoringLimit) per app (plan fewer UUIDs, a major per site)"
            )
        }
        if !report.hasProblems { lines.append("OK: every station is covered and every region matches a station") }
        return lines
    }

    static func json(_ report: RegionReport, regions: String, stations: String) -> JSONValue {
        .object([
            ("regions", .string(regions)), ("stations", .string(stations)),
            ("regionCount", .integer(report.regionCount)), ("stationCount", .integer(report.stationCount)),
            ("passed", .bool(!report.hasProblems)),
            (
                "uncovered",
                .array(
                    report.uncovered.map { station in
                        let replaced = report.replacedCover(of: station)
                        return .object(
                            [("name", .string(station.name))] + EncodeCommand.identityFields(station.identity) + [
                                ("replacedRegion", replaced.map { .integer($0.region.index) } ?? .null),
                                ("monitoredInstead", replaced.map { .integer($0.monitoredInstead.index) } ?? .null),
                                (
                                    "pastLimitRegion",
                                    report.pastLimitCover(of: station).map { .integer($0.index) } ?? .null
                                ),
                            ])
                    })
            ),
            (
                "unmatched",
                .array(
                    report.unmatched.map { region, reason in
                        .object([
                            ("index", .integer(region.index)), ("line", .integer(region.line)), ("region", region.json),
                            ("reason", .string(reason)),
                        ])
                    })
            ),
            (
                "sharedIdentifiers",
                .array(report.sharedIdentifiers.map { .array([.integer($0.earlier.index), .integer($0.later.index)]) })
            ),
            ("monitoredCount", .integer(report.monitoredCount)),
            ("monitoringLimit", .integer(AppRegions.monitoringLimit)),
            ("tooManyToMonitor", .bool(report.tooManyToMonitor)),
        ])
    }
}

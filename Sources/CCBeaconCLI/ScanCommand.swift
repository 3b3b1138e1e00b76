import BeaconPayload
import BeaconScan
import CommandLineKit
import FirmwareTemplate
import Foundation  // UUID
import HexText
import Provisioning
import Stations
import StructuredText

/// `ccbeacon scan`: what a capture heard, against the stations that should be on air.
enum ScanCommand {
    static let spec = CommandSpec(
        name: "scan", summary: "check what is on air (a capture, or a controller) against the stations", manual: manual,
        table: CommandTable(
            details: """
                Listens to what is on air — a btsnoop capture (--from: what 'btmon -w FILE' records, or
                Android's Bluetooth HCI snoop log), or a controller itself (--hci hci0: a passive LE
                scan for --seconds) — and matches the LE advertising reports (legacy and extended)
                against what should be on air: the stations of a batch record (--stations
                out/stations.json), the stations a ledger records as verified (--ledger), or every
                iBeacon of one UUID (--uuid, narrowed by --major and --minor).

                For each expected station: heard or not, from which address, whether the advertising
                data is exactly the bytes ccbeacon burned (as the batch record gives them; the iBeacon
                data with flags 02 01 06 for older records, --ledger and --uuid), the PDU types, and
                the RSSI (count, min, median, max). Also flagged: one identity from two addresses, an
                address it was not burned with, and an iBeacon of the same UUID that is no expected
                station; other beacons (iBeacon, AltBeacon, Eddystone) are counted (--json lists
                them). Exit status 0 only when every expected station was heard with exactly its bytes
                from one address; 1 otherwise.

                --hci sends LE scan commands through BlueZ's raw HCI socket, which needs CAP_NET_RAW
                (root, or 'sudo setcap cap_net_raw+ep ccbeacon'). It has not run on a real controller
                yet; the tests drive it with a scripted one.

                Examples:
                  ccbeacon scan --from scan.btsnoop --stations out/stations.json
                  sudo ccbeacon scan --hci hci0 --seconds 10 --ledger provisioning.sqlite
                """,
            options: [
                from.spec, hci.spec, seconds.spec, stations.spec, ledger.spec, Options.uuid.spec, Options.major.spec,
                Options.minor.spec, Options.json.spec,
            ],
            groups: [
                OptionGroup(
                    [from.spec.name, hci.spec.name], required: true, missing: "give --from CAPTURE or --hci hci0"),
                OptionGroup(
                    [stations.spec.name, ledger.spec.name, Options.uuid.spec.name], required: true,
                    missing: "give --stations FILE, --ledger FILE or --uuid UUID"),
            ]))
    static let command = Command(spec, Arguments.self, run: run)

    static let from = Option<String>(
        "--from", value: "CAPTURE", help: "a btsnoop capture (btmon -w, Android HCI snoop log)", completion: .files)
    static let hci = Option<String>("--hci", value: "hciN", help: "scan with this controller (needs CAP_NET_RAW)") {
        text throws(CommandFailure) in
        guard HCIController.index(text) != nil else {
            throw .usage("--hci must name a controller as BlueZ does: hci0, hci1, … ('bluetoothctl list' shows them)")
        }
        return text
    }
    static let seconds = Option<Double>("--seconds", value: "N", help: "how long --hci listens") {
        text throws(CommandFailure) in try Values.seconds(text, option: "--seconds", in: 0.1...3600)
    }.defaulting(to: 10, shown: "10")
    static let stations = Option<String>(
        "--stations", value: "FILE", help: "the stations.json a batch wrote", completion: .files)
    static let ledger = Options.ledger(help: "a provisioning ledger: its verified stations are expected")

    /// Where the reports came from, for the report's first line and the JSON.
    enum Source: Sendable {
        case capture(String)
        case controller(String, seconds: Double)

        var label: String {
            switch self {
            case .capture(let path): path
            case .controller(let name, let seconds): "\(name), \(ProvisioningRun.seconds(seconds)) s"
            }
        }

        var jsonFields: [(String, JSONValue)] {
            switch self {
            case .capture(let path): [("capture", .string(path))]
            case .controller(let name, let seconds): [("controller", .string(name)), ("seconds", .number(seconds))]
            }
        }
    }

    /// What `scan` was asked.
    struct Arguments: CommandArguments {
        /// What is heard: a capture (--from) or a controller (--hci, for --seconds).
        var source: Source
        var secondsGiven: Bool
        var stationsFile: String?
        var ledger: String?
        /// --uuid, narrowed by --major and --minor: only stations of that identity are expected.
        var identity: GivenIdentity
        var json: Bool

        init(_ command: ParsedCommand) throws(CommandFailure) {
            if let name = try command.value(hci) {
                source = .controller(name, seconds: try command.value(seconds))
            } else {
                source = .capture(try command.value(from.required))
            }
            secondsGiven = command.isGiven(seconds)
            stationsFile = try command.value(stations)
            ledger = try command.value(ScanCommand.ledger)
            identity = try GivenIdentity(command)
            json = command.isSet(Options.json)
        }

        func validate() throws(CommandFailure) {
            if identity.major != nil || identity.minor != nil, identity.uuid == nil {
                throw .usage("--major and --minor narrow --uuid; with --stations or --ledger every station is expected")
            }
            if secondsGiven, case .capture = source { throw .usage("--seconds applies to --hci only") }
        }
    }

    static func run(_ arguments: Arguments, console: Console, hardware: Hardware) throws(CommandFailure) {
        var expected: [ExpectedStation]
        if let path = arguments.stationsFile {
            expected = try record(try FileAccess.read(path), file: path)
        } else if let path = arguments.ledger {
            expected = try verifiedStations(path)
        } else {
            expected = []
        }
        let source = arguments.source
        let reports: [AdvertisingReport]
        var cutShort: CaptureError?
        switch source {
        case .controller(let name, let duration):
            reports = try listen(name, seconds: duration, radios: hardware.radios)
        case .capture(let capturePath):
            (reports, cutShort) = try heard(try FileAccess.read(capturePath), file: capturePath, console: console)
        }
        if let uuid = arguments.identity.uuid {
            // Every iBeacon of that UUID (and major, minor) heard is expected once.
            let (major, minor) = (arguments.identity.major, arguments.identity.minor)
            var seen: [IBeacon] = []
            var seenKeys: Set<UInt32> = []
            for report in reports {
                guard let beacon = try? IBeacon(advertisingData: report.data), beacon.uuid == uuid,
                    major.map({ $0 == beacon.major }) ?? true, minor.map({ $0 == beacon.minor }) ?? true,
                    seenKeys.insert(UInt32(beacon.major) << 16 | UInt32(beacon.minor)).inserted
                else { continue }
                seen.append(beacon)
            }
            expected = seen.map { ExpectedStation(name: "\($0.major)/\($0.minor)", identity: $0) }
            if seen.isEmpty {
                // A machine reading --json still gets its answer on standard output.
                if arguments.json {
                    console.data(
                        json(
                            ScanMatch(reports: [], expected: []), source: source, cutShort: cutShort,
                            reports: reports.count, heardAny: false
                        )
                        .rendered() + "\n")
                }
                throw CommandFailure(
                    .failure,
                    "no iBeacon of UUID \(uuid.uuidString)\(major.map { " major \($0)" } ?? "")\(minor.map { " minor \($0)" } ?? "") in \(source.label) (\(reports.count) advertising reports)"
                )
            }
        }
        let match = ScanMatch(reports: reports, expected: expected)
        if arguments.json {
            console.data(
                json(match, source: source, cutShort: cutShort, reports: reports.count, heardAny: true).rendered()
                    + "\n")
        } else {
            console.output(lines: text(match, source: source, reports: reports.count))
        }
        if !match.allGood {
            let missing = match.stations.filter { !$0.isGood }.count
            throw CommandFailure(
                .failure, "\(missing) of \(match.stations.count) station(s) not heard exactly as burned", hint: nil)
        }
    }

    /// A passive scan through controller `name` for `seconds`.
    static func listen(_ name: String, seconds: Double, radios: (any HCIControllerProvider)?) throws(CommandFailure)
        -> [AdvertisingReport]
    {
        guard let radios else { throw CommandFailure(.failure, "\(name): this build has no Bluetooth support") }
        do {
            let transport = try radios.open(name)
            return try LiveScan(transport: transport, controller: name).listen(for: .seconds(seconds))
        } catch {
            throw failure(error)
        }
    }

    /// A controller's failure with what to do about it.
    static func failure(_ error: HCIError) -> CommandFailure {
        let hint: String? =
            switch error.kind {
            case .permission:
                "run it as root, or give the binary the capability once: sudo setcap cap_net_raw+ep \"$(command -v ccbeacon)\""
            case .noBluetooth:
                "scan on a machine with Bluetooth, or record there with 'btmon -w FILE' and use --from FILE"
            case .noController: "'bluetoothctl list' or 'hciconfig' shows the controllers"
            case .down: "power it on: bluetoothctl power on (or sudo hciconfig \(error.controller) up)"
            case .refused(_, let status) where status == 0x0C:
                "another program is scanning with it ('bluetoothctl scan off'), or try again"
            case .refused, .noAnswer: "unplug and replug the controller, or try another one"
            case .io: nil
            }
        return CommandFailure(.failure, error.description, hint: hint)
    }

    /// The stations a ledger records as verified, each with the address it was burned with.
    static func verifiedStations(_ path: String, requireAny: Bool = true) throws(CommandFailure) -> [ExpectedStation] {
        let ledger = try openLedger(path, access: .readOnly)
        let burned: [BurnedStation]
        do { burned = try ledger.burnedStations() } catch { throw ledgerFailure(error, path: path) }
        // What each chip carries, from the address it was burned with.
        let expected = burned.map {
            ExpectedStation(name: $0.station.name, identity: $0.carried, address: $0.attempt.advertiserAddress)
        }
        guard !expected.isEmpty || !requireAny else {
            throw CommandFailure(
                .failure, "\(path): no station is verified in this ledger, so none should be on air",
                hint: "scan after 'ccbeacon provision', or check with --stations or --uuid")
        }
        return expected
    }

    /// The stations of a batch record: name, uuid, major, minor, power of each.
    static func record(_ bytes: [UInt8], file: String) throws(CommandFailure) -> [ExpectedStation] {
        do {
            var root = try JSONObjectReader(try JSONParser.parse(bytes, file: file), file: file)
            var result: [ExpectedStation] = []
            for (index, node) in try root.array("stations").enumerated() {
                // Only the identity is read: the record's other keys (files, digests, settings) stay.
                var station = try JSONObjectReader(node, file: file, path: "stations[\(index)]")
                let name = try station.string("name")
                let uuidText = try station.string("uuid")
                let uuid: UUID
                switch Result(catching: { () throws(IdentityError) -> UUID in try IdentityParser.uuid(uuidText) }) {
                case .success(let value): uuid = value
                case .failure(let error):
                    throw DataFileError(
                        file: file, line: node.line, column: node.column, keyPath: "stations[\(index)].uuid",
                        message: error.description)
                }
                // The numbers are range-checked where they are read; only the UUID needs parsing.
                let identity = IBeacon(
                    uuid: uuid, major: UInt16(try station.integer("major", in: 0...0xFFFF)),
                    minor: UInt16(try station.integer("minor", in: 0...0xFFFF)),
                    measuredPower: Int8(try station.integer("power", in: -128...127)))
                // As a station list is read: a name a list may hold, once; an address a chip can
                // send from, once; one identity per station.
                if let problem = StationListReader.nameProblem(name) {
                    throw DataFileError(
                        file: file, line: node.line, column: node.column, keyPath: "stations[\(index)].name",
                        message: problem)
                }
                guard !result.contains(where: { $0.name == name }) else {
                    throw DataFileError(
                        file: file, line: node.line, column: node.column, keyPath: "stations[\(index)].name",
                        message: "station '\(name)' is listed twice; names must be unique")
                }
                var address: String?
                if let text = try station.optionalString("address") {
                    do { address = try RandomStaticAddress(parsing: text).description } catch {
                        throw DataFileError(
                            file: file, line: node.line, column: node.column, keyPath: "stations[\(index)].address",
                            message: error.description)
                    }
                    if let other = result.first(where: { $0.address == address }) {
                        throw DataFileError(
                            file: file, line: node.line, column: node.column, keyPath: "stations[\(index)].address",
                            message:
                                "station '\(name)' has the same address \(address ?? "") as '\(other.name)'; every beacon needs its own"
                        )
                    }
                }
                // The bytes as burned, when the record has them (records from before it did: the
                // iBeacon data with flags 02 01 06 is assumed).
                var burned: (bytes: [UInt8], whole: Bool)?
                for (key, whole) in [("advertisingData", true), ("manufacturerData", false)] {
                    guard let text = try station.optionalString(key) else { continue }
                    guard burned == nil else {
                        throw DataFileError(
                            file: file, line: node.line, column: node.column, keyPath: "stations[\(index)].\(key)",
                            message: "comes with advertisingData; a station's record holds one or the other")
                    }
                    guard let bytes = HexText.parseContiguous(text),
                        let decoded = Self.identity(in: bytes, whole: whole)
                    else {
                        throw DataFileError(
                            file: file, line: node.line, column: node.column, keyPath: "stations[\(index)].\(key)",
                            message: "is not the hex bytes of an iBeacon \(whole ? "advertising" : "manufacturer") data"
                        )
                    }
                    guard decoded == identity else {
                        throw DataFileError(
                            file: file, line: node.line, column: node.column, keyPath: "stations[\(index)].\(key)",
                            message: "carries \(decoded), not the station's \(identity)")
                    }
                    burned = (bytes, whole)
                }
                guard
                    !result.contains(where: {
                        $0.identity.uuid == identity.uuid && $0.identity.major == identity.major
                            && $0.identity.minor == identity.minor
                    })
                else {
                    throw DataFileError(
                        file: file, line: node.line, column: node.column, keyPath: "stations[\(index)]",
                        message: "the identity of '\(name)' is listed twice; a record holds each station once")
                }
                result.append(
                    ExpectedStation(
                        name: name, identity: identity, address: address, advertisingData: burned?.bytes,
                        isWhole: burned?.whole ?? true))
            }
            guard !result.isEmpty else {
                throw DataFileError(
                    file: file, line: 1, column: 1, keyPath: "stations",
                    message: "lists no station; a scan against it would check nothing")
            }
            return result
        } catch let error as DataFileError {
            throw .data(error.description, hint: "give the stations.json a batch wrote")
        } catch {
            throw .data("\(file): \(error)")
        }
    }

    /// The iBeacon identity in a record's bytes: the whole advertising data, or the manufacturer
    /// AD alone (itself one AD structure).
    static func identity(in bytes: [UInt8], whole: Bool) -> IBeacon? {
        guard whole || bytes.count == PatchField.Kind.iBeaconManufacturerData.length else { return nil }
        return try? IBeacon(advertisingData: bytes)
    }

    /// Every advertising report of a capture, and where it ends inside a record (`nil` when it
    /// does not), which is said on the console: the records before that one are read.
    static func heard(_ bytes: [UInt8], file: String, console: Console) throws(CommandFailure)
        -> (reports: [AdvertisingReport], cutShort: CaptureError?)
    {
        do {
            let capture = try BTSnoopCapture(bytes: bytes, file: file)
            let reports = try AdvertisingReport.reports(in: capture, file: file)
            if let cut = capture.cutShort {
                console.diagnostics(
                    line:
                        "warning: \(cut): the capture ends inside this record (copied or stopped while it was written); \(reports.count) advertising report(s) of the records before it are read, the rest is not"
                )
            }
            return (reports, capture.cutShort)
        } catch {
            throw .data(
                error.description, hint: "give a btsnoop capture as btmon -w or Android's HCI snoop log write it")
        }
    }

    /// `cutShort` for a capture: where it ends inside a record, or null.
    static func cutShortField(_ source: Source, _ cutShort: CaptureError?) -> [(String, JSONValue)] {
        guard case .capture = source else { return [] }
        return [("cutShort", cutShort.map { .string($0.located) } ?? .null)]
    }

    static func rssiText(_ station: HeardStation) -> String {
        guard let low = station.rssi.first, let high = station.rssi.last, let median = station.medianRSSI else {
            return "no RSSI"
        }
        return "RSSI \(station.rssi.count)× \(low)/\(median)/\(high) dBm (min/median/max)"
    }

    static func text(_ match: ScanMatch, source: Source, reports: Int) -> [String] {
        var lines = ["\(source.label): \(reports) advertising report(s)"]
        for heard in match.stations {
            let name = "\(heard.station.name) (\(heard.station.identity))"
            if heard.reports == 0 {
                lines.append("NOT HEARD  \(name)")
                continue
            }
            var state = heard.isGood ? "ok" : "WRONG"
            if !heard.exactBytes { state += ", advertises other bytes than it was burned with" }
            if heard.partial > 0 {
                state +=
                    ", \(heard.partial) report\(heard.partial == 1 ? "" : "s") carried only part of its data (incomplete or truncated): its bytes are not confirmed"
            }
            if heard.addresses.count > 1 { state += ", from \(heard.addresses.count) addresses" }
            if heard.strangeAddress, let burned = heard.station.address {
                state += ", from an address it was not burned with (\(burned))"
            }
            if heard.eventTypes != ["ADV_NONCONN_IND"] {
                state += ", sent as \(heard.eventTypes.joined(separator: " and "))"
            }
            lines.append(
                "\(heard.isGood ? "heard     " : "HEARD     ") \(name) from \(heard.addresses.joined(separator: ", ")): \(state); \(rssiText(heard))"
            )
        }
        for stranger in match.strangers {
            lines.append("STRANGER   \(stranger.identity) from \(stranger.address): our UUID, but no expected station")
        }
        if !match.others.isEmpty {
            // Counted, not listed: a busy room holds many; --json lists each.
            let formats = Dictionary(grouping: match.others, by: \.format).map { "\($0.value.count) \($0.key)" }
                .sorted()
            lines.append(
                "also heard \(match.others.count) other beacon(s): \(formats.joined(separator: ", ")) (--json lists them)"
            )
        }
        return lines
    }

    /// The JSON report; `heardAny` false: nothing of the asked-for UUID was heard (not good).
    static func json(_ match: ScanMatch, source: Source, cutShort: CaptureError?, reports: Int, heardAny: Bool)
        -> JSONValue
    {
        .object(
            source.jsonFields + cutShortField(source, cutShort) + [
                ("reports", .integer(reports)),
                ("allGood", .bool(heardAny && match.allGood)),
                (
                    "stations",
                    .array(
                        match.stations.map { heard in
                            .object(
                                [("name", .string(heard.station.name))]
                                    + EncodeCommand.identityFields(heard.station.identity) + [
                                        ("heard", .bool(heard.reports > 0)), ("reports", .integer(heard.reports)),
                                        ("addresses", .array(heard.addresses.map { .string($0) })),
                                        (
                                            "exactBytes",
                                            .bool(heard.reports > 0 && heard.exactBytes && heard.partial == 0)
                                        ),
                                        ("partialReports", .integer(heard.partial)),
                                        ("rssiCount", .integer(heard.rssi.count)),
                                        ("rssiMin", heard.rssi.first.map { .integer($0) } ?? .null),
                                        ("rssiMedian", heard.medianRSSI.map { .integer($0) } ?? .null),
                                        ("rssiMax", heard.rssi.last.map { .integer($0) } ?? .null),
                                        ("eventTypes", .array(heard.eventTypes.map { .string($0) })),
                                    ])
                        })
                ),
                (
                    "strangers",
                    .array(
                        match.strangers.map {
                            .object(EncodeCommand.identityFields($0.identity) + [("address", .string($0.address))])
                        })
                ),
                (
                    "others",
                    .array(
                        match.others.map {
                            .object([
                                ("address", .string($0.address)), ("format", .string($0.format)),
                                ("beacon", .string($0.beacon)), ("reports", .integer($0.reports)),
                            ])
                        })
                ),
            ])
    }
}

import BeaconPayload
import BeaconScan
import StructuredText

#if canImport(FoundationEssentials)
    import FoundationEssentials  // UUID
#else
    import Foundation
#endif

/// `ccbeacon scan`: what a capture heard, against the stations that should be on air.
enum ScanCommand {
    static let spec = CommandSpec(name: "scan", summary: "check a capture of what is on air against the stations") {
        table
    }
    static let table = CommandTable(
        details: """
            Reads the LE advertising reports (legacy and extended) of a btsnoop capture — what
            'btmon -w FILE' records, or Android's Bluetooth HCI snoop log — and matches them against
            what should be on air: the stations of a batch record (--stations out/stations.json), or
            every iBeacon of one UUID (--uuid, narrowed by --major and --minor).

            For each expected station: heard or not, from which address, whether the advertising
            data is exactly the bytes ccbeacon burned (the iBeacon data with flags 02 01 06, as the
            bundled template sends it), and the RSSI (count, min, median, max). Also flagged: one
            identity from two addresses, and an iBeacon of the same UUID that is no expected
            station. Exit status 0 only when every expected station was heard with exactly its
            bytes from one address; 1 otherwise.

            Live scanning through a controller (--hci) is not there yet: record with
            'sudo btmon -w scan.btsnoop' while 'bluetoothctl scan on' runs, then read the file.

            Example:
              ccbeacon scan --from scan.btsnoop --stations out/stations.json
            """,
        options: [
            from.spec, stations.spec, Options.uuid.spec, Options.major.spec, Options.minor.spec, Options.json.spec,
        ],
        groups: [
            OptionGroup(
                [stations.spec.name, Options.uuid.spec.name], required: true,
                missing: "give --stations FILE or --uuid UUID")
        ])
    static let command = Command(spec, run: run)

    static let from = Option<String>(
        "--from", value: "CAPTURE", help: "a btsnoop capture (btmon -w, Android HCI snoop log)"
    ).required
    static let stations = Option<String>("--stations", value: "FILE", help: "the stations.json a batch wrote")

    static func run(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        let capturePath = try command.value(from)
        var expected: [ExpectedStation]
        if let path = try command.value(stations) {
            if command.isGiven(Options.major) || command.isGiven(Options.minor) {
                throw .usage(
                    "--major and --minor narrow --uuid; with --stations every station of the record is expected")
            }
            expected = try record(try FileAccess.read(path), file: path)
        } else {
            expected = []
        }
        let reports = try heard(try FileAccess.read(capturePath), file: capturePath)
        if let uuid = try command.value(Options.uuid) {
            // Every iBeacon of that UUID (and major, minor) heard is expected once.
            let major = try command.value(Options.major)
            let minor = try command.value(Options.minor)
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
                if command.isSet(Options.json) {
                    console.output(
                        json(
                            ScanMatch(reports: [], expected: []), capture: capturePath, reports: reports.count,
                            heardAny: false
                        )
                        .rendered() + "\n")
                }
                throw CommandFailure(
                    .failure,
                    "no iBeacon of UUID \(uuid.uuidString)\(major.map { " major \($0)" } ?? "")\(minor.map { " minor \($0)" } ?? "") in \(capturePath) (\(reports.count) advertising reports)"
                )
            }
        }
        let match = ScanMatch(reports: reports, expected: expected)
        if command.isSet(Options.json) {
            console.output(json(match, capture: capturePath, reports: reports.count, heardAny: true).rendered() + "\n")
        } else {
            console.output(text(match, capture: capturePath, reports: reports.count))
        }
        if !match.allGood {
            let missing = match.stations.filter { !$0.isGood }.count
            throw CommandFailure(
                .failure, "\(missing) of \(match.stations.count) station(s) not heard exactly as burned", hint: nil)
        }
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
                let address = try station.optionalString("address")
                guard !result.contains(where: { $0.identity == identity }) else {
                    throw DataFileError(
                        file: file, line: node.line, column: node.column, keyPath: "stations[\(index)]",
                        message: "the identity of '\(name)' is listed twice; a record holds each station once")
                }
                result.append(ExpectedStation(name: name, identity: identity, address: address))
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

    /// Every advertising report of a capture.
    static func heard(_ bytes: [UInt8], file: String) throws(CommandFailure) -> [AdvertisingReport] {
        do { return try AdvertisingReport.reports(inCapture: bytes, file: file) } catch {
            throw .data(
                error.description, hint: "give a btsnoop capture as btmon -w or Android's HCI snoop log write it")
        }
    }

    static func rssiText(_ station: HeardStation) -> String {
        guard let low = station.rssi.first, let high = station.rssi.last, let median = station.medianRSSI else {
            return "no RSSI"
        }
        return "RSSI \(station.rssi.count)× \(low)/\(median)/\(high) dBm (min/median/max)"
    }

    static func text(_ match: ScanMatch, capture: String, reports: Int) -> String {
        var lines = ["\(capture): \(reports) advertising report(s)"]
        for heard in match.stations {
            let name = "\(heard.station.name) (\(heard.station.identity))"
            if heard.reports == 0 {
                lines.append("NOT HEARD  \(name)")
                continue
            }
            var state = heard.isGood ? "ok" : "WRONG"
            if !heard.exactBytes { state += ", advertises other bytes than it was burned with" }
            if heard.addresses.count > 1 { state += ", from \(heard.addresses.count) addresses" }
            if heard.strangeAddress, let burned = heard.station.address {
                state += ", from an address it was not burned with (\(burned))"
            }
            lines.append(
                "\(heard.isGood ? "heard     " : "HEARD     ") \(name) from \(heard.addresses.joined(separator: ", ")): \(state); \(rssiText(heard))"
            )
        }
        for stranger in match.strangers {
            lines.append("STRANGER   \(stranger.identity) from \(stranger.address): our UUID, but no expected station")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The JSON report; `heardAny` false: nothing of the asked-for UUID was heard (not good).
    static func json(_ match: ScanMatch, capture: String, reports: Int, heardAny: Bool) -> JSONValue {
        .object([
            ("capture", .string(capture)), ("reports", .integer(reports)),
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
                                    ("exactBytes", .bool(heard.reports > 0 && heard.exactBytes)),
                                    ("rssiCount", .integer(heard.rssi.count)),
                                    ("rssiMin", heard.rssi.first.map { .integer($0) } ?? .null),
                                    ("rssiMedian", heard.medianRSSI.map { .integer($0) } ?? .null),
                                    ("rssiMax", heard.rssi.last.map { .integer($0) } ?? .null),
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
        ])
    }
}

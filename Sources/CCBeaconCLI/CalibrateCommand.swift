import BeaconPayload
import BeaconScan
import CommandLineKit
import HexText
import Provisioning
import StationLedger
import Stations
import Storage
import StructuredText

/// `ccbeacon calibrate`: a station's measured power from RSSI samples taken 1 m away.
enum CalibrateCommand {
    static let spec = CommandSpec(
        name: "calibrate", summary: "measured power from RSSI samples taken 1 m away", manual: manual,
        table: CommandTable(
            details: """
                Phones estimate a station's distance from its measured power, the RSSI expected 1 m away.
                Take at least 20 RSSI samples with a phone (or a Linux scanner) 1 m from the station,
                then give them here: the lowest and highest tenth are dropped, the rest averaged and
                rounded to the nearest dBm. Fewer than 20 samples are refused, with how many more.

                Samples: --rssi FILE, one value per line or a CSV with an "rssi" column (as phone apps
                export), or --from CAPTURE.btsnoop (btmon -w, Android's HCI snoop log) filtered to the
                station's advertiser address: --address, or --station NAME looked up in a batch record
                (--stations), a ledger (--ledger: the address it was burned with) or a list with an
                address column (--list).

                --write records the value for --station NAME: in the list (--list FILE, CSV: its power
                cell is replaced and every other byte kept; a list without a power column gets one,
                empty for the other stations) and/or in the ledger (--ledger FILE: a calibration row,
                and the station's power from then on). batch burns the list's value; provision burns
                the ledger's, and with --reprovision burns a station again on its chip when its
                calibrated power differs from the one it carries.

                Examples:
                  ccbeacon calibrate --rssi hall-a-1m.csv
                  ccbeacon calibrate --from bench.btsnoop --station "Hall A" --ledger provisioning.sqlite --write
                """,
            options: [
                rssi.spec, from.spec, address.spec, station.spec, stations.spec, ledger.spec, list.spec, write.spec,
                force.spec, Options.json.spec,
            ],
            groups: [
                OptionGroup(
                    [rssi.spec.name, from.spec.name], required: true, missing: "give --rssi FILE or --from CAPTURE")
            ]))
    static let command = Command(spec, Arguments.self, run: run)

    static let rssi = Option<String>(
        "--rssi", value: "FILE", help: "RSSI samples: one per line, or a CSV with an rssi column", completion: .files)
    static let from = Option<String>(
        "--from", value: "CAPTURE", help: "a btsnoop capture (btmon -w, Android HCI snoop log)", completion: .files)
    static let address = Option<[UInt8]>(
        "--address", value: "XX:…", help: "the station's advertiser address in the capture (with --from)"
    ) { text throws(CommandFailure) in try Values.deviceAddress(text, option: "--address") }
    static let station = Option<String>("--station", value: "NAME", help: "the station calibrated")
    static let stations = Option<String>(
        "--stations", value: "FILE", help: "a batch record (stations.json): the station's address", completion: .files)
    static let ledger = Options.ledger(help: "a ledger: the station's address; with --write, a calibration row")
    static let list = Option<String>(
        "--list", value: "FILE", help: "a station list: its address column; with --write, its power column",
        completion: .files)
    static let write = Flag("--write", help: "record the value for --station in --list and/or --ledger")
    static let force = Flag(
        "--force", help: "take a measured power more than 25 dB from the station's registered power")

    /// Where calibrate's RSSI samples come from.
    enum SampleSource: Sendable {
        case rssi(String)
        case capture(String)
    }

    /// What `calibrate` was asked.
    struct Arguments: CommandArguments {
        var name: String?
        var writing: Bool
        var listPath: String?
        var ledgerPath: String?
        var stationsPath: String?
        /// Where the samples come from: --rssi FILE or --from CAPTURE.
        var samples: SampleSource
        var address: [UInt8]?
        var force: Bool
        var json: Bool

        init(_ command: ParsedCommand) throws(CommandFailure) {
            name = try command.value(station)
            writing = command.isSet(write)
            listPath = try command.value(list)
            ledgerPath = try command.value(ledger)
            stationsPath = try command.value(stations)
            if let path = try command.value(rssi) {
                samples = .rssi(path)
            } else {
                samples = .capture(try command.value(from.required))
            }
            address = try command.value(CalibrateCommand.address)
            force = command.isSet(CalibrateCommand.force)
            json = command.isSet(Options.json)
        }

        func validate() throws(CommandFailure) {
            if writing {
                guard let name else { throw .usage("--write needs --station NAME, the station calibrated") }
                guard listPath != nil || ledgerPath != nil else {
                    throw .usage(
                        "--write needs --list FILE (its power column) or --ledger FILE (a calibration row) for '\(name)'"
                    )
                }
            }
            if name == nil, stationsPath != nil || ledgerPath != nil || listPath != nil {
                throw .usage("--stations, --ledger and --list are where --station NAME is found; give --station")
            }
            if case .rssi = samples, address != nil { throw .usage("--address applies to --from only") }
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (name, writing, listPath, ledgerPath) = (
            arguments.name, arguments.writing, arguments.listPath, arguments.ledgerPath
        )
        // The station as the record, ledger and list given know it: read once, when first needed.
        var lookup: (stations: [ExpectedStation], looked: [String])?
        func lookedUp(_ name: String) throws(CommandFailure) -> (stations: [ExpectedStation], looked: [String]) {
            if let lookup { return lookup }
            let found = try known(arguments, name: name)
            lookup = found
            return found
        }
        let samples: [Int]
        let source: String
        switch arguments.samples {
        case .rssi(let path):
            samples = try rssiSamples(try FileAccess.read(path), file: path)
            source = path
        case .capture(let path):
            let wanted = try stationAddress(arguments, name: name, lookUp: lookedUp)
            // A station looked up is heard only in its own iBeacon: another device at that address
            // (a public address of the same six bytes) or other data from it are not its samples.
            let identity =
                try name.map { name throws(CommandFailure) in try lookedUp(name).stations.first?.identity } ?? nil
            samples = try captureSamples(
                try FileAccess.read(path), file: path, address: wanted, identity: identity, console: console)
            source = "\(path), \(HexText.colonSeparated(wanted))"
            if samples.isEmpty {
                throw .data(
                    "\(path): no advertising report from \(HexText.colonSeparated(wanted)) (with an RSSI\(identity == nil ? "" : ", carrying the station's UUID, major and minor"))",
                    hint: "check the station's advertiser address ('ccbeacon scan' lists what the capture heard)")
            }
        }
        let calibration: Calibration
        do { calibration = try Calibration(samples: samples) } catch {
            if case .impossibleRSSI = error {
                throw .data(
                    "\(source): \(error.description); nothing was calibrated",
                    hint: "record again with a receiver that reports RSSI (btmon -w, Android's HCI snoop log)")
            }
            throw .data("\(source): \(error.description)", hint: "take more samples 1 m from the station")
        }
        if !arguments.force {
            // What the station's board and TX power predict (its registered power), or the
            // generic 1 m figure when the station cannot be looked up.
            let registered = try name.flatMap { name throws(CommandFailure) in
                try lookedUp(name).stations.first?.identity.measuredPower
            }
            let predicted = registered.map(Int.init) ?? Calibration.genericMeasuredPower
            if let distance = calibration.distance(from: predicted) {
                let what =
                    registered != nil
                    ? "the \(predicted) dBm registered for '\(name ?? "")' (its board's figure at its TX power, or the list's)"
                    : "the \(predicted) dBm a beacon gives 1 m away at 0 dBm TX power"
                throw .data(
                    "\(source): measured power \(calibration.measuredPower) dBm is \(distance) dB from \(what); a calibration 1 m away lands within \(Calibration.plausibleDistance) dB; nothing was written",
                    hint:
                        "check the samples are this station's, taken 1 m away with nothing on the antenna; --force takes the value as it is"
                )
            }
        }
        var written: [String] = []
        if writing, let name {
            written = try record(
                calibration, station: name, source: source, listPath: listPath, ledgerPath: ledgerPath, console: console
            )
        }
        if arguments.json {
            console.data(
                JSONValue.object([
                    ("station", name.map { .string($0) } ?? .null),
                    ("measuredPower", .integer(calibration.measuredPower)),
                    ("samples", .integer(calibration.sampleCount)),
                    ("used", .integer(calibration.usedCount)), ("min", .integer(calibration.spread.lowerBound)),
                    ("max", .integer(calibration.spread.upperBound)),
                    ("mean", .number((calibration.mean * 100).rounded() / 100)),
                    ("written", .array(written.map { .string($0) })),
                ]).rendered() + "\n")
            return
        }
        let dropped = (calibration.sampleCount - calibration.usedCount) / 2
        console.output(
            lines: [
                "measured power \(calibration.measuredPower) dBm from \(calibration.sampleCount) samples of \(source) (the lowest and highest \(dropped) left out; \(calibration.usedCount) averaged, \(calibration.spread.lowerBound)…\(calibration.spread.upperBound) dBm, mean \(meanText(calibration.mean)))"
            ] + written.map { "recorded: \($0)" })
    }

    /// The advertiser address the capture is filtered to: `--address`, or the station's in the
    /// record, ledger or list given (`lookUp`: `known`).
    static func stationAddress(
        _ arguments: Arguments, name: String?,
        lookUp: (String) throws(CommandFailure) -> (stations: [ExpectedStation], looked: [String])
    ) throws(CommandFailure) -> [UInt8] {
        if let given = arguments.address { return given }
        guard let name else {
            throw .usage(
                "--from needs the station's advertiser address: --address XX:XX:XX:XX:XX:XX, or --station NAME with --stations, --ledger or --list"
            )
        }
        let (stations, looked) = try lookUp(name)
        guard let found = stations.lazy.compactMap(\.address).first,
            let bytes = RandomStaticAddress.bytes(parsing: found)
        else {
            throw .usage(
                looked.isEmpty
                    ? "--from with --station needs --stations, --ledger or --list to find its address, or give --address"
                    : "no advertiser address of '\(name)' in \(looked.joined(separator: " or ")); give --address XX:XX:XX:XX:XX:XX"
            )
        }
        return bytes
    }

    /// The station `name` as each source given knows it — the batch record, the ledger (as
    /// burned), the list, in that order — and the sources looked in.
    static func known(_ arguments: Arguments, name: String) throws(CommandFailure) -> (
        stations: [ExpectedStation], looked: [String]
    ) {
        var found: [ExpectedStation] = []
        var looked: [String] = []
        if let path = arguments.stationsPath {
            looked.append(path)
            found += try ScanCommand.record(try FileAccess.read(path), file: path).filter { $0.name == name }
        }
        if let path = arguments.ledgerPath {
            looked.append(path)
            found += try ScanCommand.verifiedStations(path, requireAny: false).filter { $0.name == name }
        }
        if let path = arguments.listPath {
            looked.append(path)
            found += try CommandSupport.stations(path, consequence: "nothing was calibrated").filter {
                $0.name == name
            }.map { ExpectedStation(name: $0.name, identity: $0.identity, address: $0.address?.description) }
        }
        return (found, looked)
    }

    /// Records `calibration` of `station`: every target is checked first (the list's new bytes
    /// made and read back, the ledger opened and the station found), then the ledger written (one
    /// transaction), then the list (atomically). Returns what was written, in words.
    static func record(
        _ calibration: Calibration, station: String, source: String, listPath: String?, ledgerPath: String?,
        console: Console
    ) throws(CommandFailure) -> [String] {
        // The ledger named is one calibrate can write, before the list's folder is touched.
        if let ledgerPath {
            try refuseServer(ledgerPath)
            guard Files.exists(ledgerPath) else {
                throw .usage("no ledger at \(ledgerPath); calibrate --write records into an existing ledger")
            }
        }
        var listEdit: (path: String, edited: ListPowerEdit.Edited, prepared: PreparedRewrite?)?
        if let listPath {
            // Held from before the list is read until it is rewritten: two runs calibrating
            // stations of one list take turns, each editing what the other wrote.
            let lock: RewriteLock
            do {
                lock = try Files.lockForRewrite(listPath) {
                    console.diagnostics(line: "waiting for another ccbeacon that is rewriting \(listPath)")
                }
            } catch {
                throw CommandFailure(
                    .failure, "\(error.description); nothing was recorded",
                    hint: "calibrate writes the list in place: it must be a writable file in a writable folder")
            }
            let original = try FileAccess.read(listPath)
            let before = try CommandSupport.stations(listPath, consequence: "nothing was written")
            let edited: ListPowerEdit.Edited
            do {
                edited = try ListPowerEdit.settingPower(
                    calibration.measuredPower, of: station, inCSV: original, file: listPath)
            } catch {
                throw .data(error.description, hint: "give the CSV station list that holds '\(station)'")
            }
            // The new list must read as the old one with this one power changed, or nothing is written.
            let after = try? StationListReader.read(edited.bytes, file: listPath)
            let expected = before.map { old -> Station in
                guard old.name == station else { return old }
                var new = old
                new.identity.measuredPower = Int8(calibration.measuredPower)
                new.powerOrigin = .list
                return new
            }
            guard let after, after.map(\.identity) == expected.map(\.identity),
                after.map(\.name) == expected.map(\.name)
            else {
                throw CommandFailure(
                    .failure,
                    "\(listPath): setting the power of '\(station)' would change more than that; nothing was written",
                    hint: "set the power column by hand")
            }
            if edited.bytes == original {
                listEdit = (listPath, edited, nil)  // already this value: nothing to write
            } else {
                // The new list is made ready beside the old one before the ledger is written, so
                // whatever could keep it from its place (permissions, owner, attributes) is found
                // while nothing is recorded yet.
                do {
                    let prepared = try Files.prepareRewrite(
                        listPath, from: original, to: edited.bytes, holding: lock)
                    // What a run killed while rewriting left beside it (its process is gone; this
                    // run's own new file is kept, its process lives).
                    _ = Files.removeAbandonedTemporaryFiles(in: Files.directory(of: prepared.target))
                    listEdit = (listPath, edited, prepared)
                } catch {
                    throw CommandFailure(
                        .failure, "\(error.description); nothing was recorded",
                        hint: "calibrate writes the list in place: it must be a writable file in a writable folder")
                }
            }
        }
        var written: [String] = []
        if let ledgerPath {
            let ledger = try openLedger(ledgerPath)
            do {
                try ledger.recordCalibration(
                    CalibrationRecord(
                        station: station, recordedAt: "", power: calibration.measuredPower,
                        samples: calibration.sampleCount, used: calibration.usedCount, source: source))
            } catch {
                throw CommandFailure(
                    .failure,
                    "\(ledgerPath): \(error.description)\(listEdit == nil ? "" : "; the list was not written either")",
                    hint: "check the station's name ('ccbeacon ledger show')")
            }
            written.append(
                "\(ledgerPath): calibration of '\(station)', \(calibration.measuredPower) dBm from \(calibration.sampleCount) samples"
            )
        }
        if let listEdit {
            do { try listEdit.prepared?.commit() } catch {
                throw CommandFailure(
                    .failure,
                    "\(error.description)\(written.isEmpty ? "" : "; the ledger has the calibration, the list was left as it was")",
                    hint: written.isEmpty
                        ? "set the power column by hand, or run again"
                        : "set the list's power column to \(calibration.measuredPower) by hand (running again would record a second calibration)"
                )
            }
            let change =
                listEdit.prepared == nil
                ? "power already \(calibration.measuredPower) dBm, unchanged"
                : listEdit.edited.addedColumn
                    ? "power column added, \(calibration.measuredPower) dBm"
                    : "power \(listEdit.edited.previous.map { $0.isEmpty ? "(empty)" : $0 } ?? "") → \(calibration.measuredPower) dBm"
            written.append("\(listEdit.path):\(listEdit.edited.line): '\(station)', \(change)")
        }
        return written
    }

    /// The mean with two decimals (so -60.45 never reads as -60.5, which rounds the other way).
    static func meanText(_ mean: Double) -> String {
        let hundredths = Int((abs(mean) * 100).rounded())
        let digits = String(hundredths % 100)
        return (mean < 0 && hundredths > 0 ? "-" : "") + "\(hundredths / 100)." + (digits.count == 1 ? "0" : "")
            + digits
    }

    /// RSSI values from a file: one per line, or the `rssi` column of a CSV with a header row.
    static func rssiSamples(_ bytes: [UInt8], file: String) throws(CommandFailure) -> [Int] {
        let rows: [[CSVField]]
        do { rows = try CSVTable.parse(bytes, file: file) } catch { throw .data(error.description) }
        let filled = rows.filter { !$0.allSatisfy { CSVTable.trimmed($0.text).isEmpty } }
        guard let first = filled.first else { throw .data("\(file): no RSSI values in it") }
        var column = 0
        var values = filled[...]
        if first.contains(where: { $0.text.contains(where: \.isLetter) }) {
            guard let index = first.firstIndex(where: { CSVTable.trimmed($0.text).lowercased() == "rssi" }) else {
                throw .data(
                    "\(file):\(first[0].line): the header names no rssi column",
                    hint: "give one value per line, or a CSV whose header has a column named rssi")
            }
            if let twice = first[(index + 1)...].first(where: { CSVTable.trimmed($0.text).lowercased() == "rssi" }) {
                throw .data(
                    "\(file):\(twice.line):\(twice.column): column '\(CSVTable.trimmed(twice.text))' appears twice (column names are read without regard to case); which one holds the samples?",
                    hint: "keep one rssi column")
            }
            column = index
            values = filled.dropFirst()
        }
        return try values.map { row throws(CommandFailure) -> Int in
            guard column < row.count else {
                throw .data("\(file):\(row[0].line): the row has no rssi cell (column \(column + 1))")
            }
            let cell = row[column]
            let text = CSVTable.trimmed(cell.text)
            let range = Calibration.rssiRange
            guard let value = Int(text), range.contains(value) else {
                throw .data(
                    "\(file):\(cell.line):\(cell.column): '\(text.excerpt())' is not an RSSI; give a whole number of dBm, \(range.lowerBound)…\(range.upperBound)"
                )
            }
            return value
        }
    }

    /// The RSSI of every report from `address` in a capture (127, "not available", left out); with
    /// `identity`, of those that carry its iBeacon (UUID, major and minor: the measured power is
    /// what is being calibrated).
    static func captureSamples(
        _ bytes: [UInt8], file: String, address: [UInt8], identity: IBeacon? = nil, console: Console
    ) throws(CommandFailure) -> [Int] {
        func carries(_ report: AdvertisingReport) -> Bool {
            guard let identity else { return true }
            guard let heard = try? IBeacon(advertisingData: report.data) else { return false }
            return (heard.uuid, heard.major, heard.minor) == (identity.uuid, identity.major, identity.minor)
        }
        var samples: [Int] = []
        var controllers: Set<Int> = []
        for report in try ScanCommand.heard(bytes, file: file, console: console).reports
        where report.address == address && report.rssi != 127 && carries(report) {
            samples.append(Int(report.rssi))
            controllers.insert(report.controller)
        }
        // Two receivers hear one advertisement twice, each with its own RSSI: one radio only.
        guard controllers.count <= 1 else {
            throw .data(
                "\(file): the station was heard by \(controllers.count) controllers (hci\(controllers.sorted().map(String.init).joined(separator: ", hci"))); a calibration needs the samples of one receiver",
                hint: "record with one controller (btmon -i hciN -w FILE)")
        }
        return samples
    }
}

import BeaconScan
import HexText
import StructuredText

/// `ccbeacon calibrate`: a station's measured power from RSSI samples taken 1 m away.
enum CalibrateCommand {
    static let spec = CommandSpec(name: "calibrate", summary: "measured power from RSSI samples taken 1 m away") {
        table
    }
    static let table = CommandTable(
        details: """
            Phones estimate a station's distance from its measured power, the RSSI expected 1 m away.
            Take at least 20 RSSI samples with a phone (or a Linux scanner) 1 m from the station,
            then give them here: the lowest and highest tenth are dropped, the rest averaged and
            rounded to the nearest dBm. Fewer than 20 samples are refused, with how many more.

            Samples: --rssi FILE, one value per line or a CSV with an "rssi" column (as phone apps
            export), or --from CAPTURE.btsnoop (btmon -w, Android's HCI snoop log) with --address,
            the station's advertiser address. Burn the result with --power (generate) or the list's
            power column (batch, provision --reprovision).

            Example:
              ccbeacon calibrate --rssi hall-a-1m.csv
            """,
        options: [rssi.spec, from.spec, address.spec, Options.json.spec],
        groups: [
            OptionGroup(
                [rssi.spec.name, from.spec.name], required: true, missing: "give --rssi FILE or --from CAPTURE")
        ])
    static let command = Command(spec, run: run)

    static let rssi = Option<String>(
        "--rssi", value: "FILE", help: "RSSI samples: one per line, or a CSV with an rssi column")
    static let from = Option<String>(
        "--from", value: "CAPTURE", help: "a btsnoop capture (btmon -w, Android HCI snoop log)")
    static let address = Option<[UInt8]>(
        "--address", value: "XX:…", help: "the station's advertiser address in the capture (with --from)"
    ) { text throws(CommandFailure) in try Values.deviceAddress(text, option: "--address") }

    static func run(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        let samples: [Int]
        let source: String
        if let path = try command.value(rssi) {
            if command.isGiven(address) { throw .usage("--address applies to --from only") }
            samples = try rssiSamples(try FileAccess.read(path), file: path)
            source = path
        } else {
            let path = try command.value(from.required)
            guard let wanted = try command.value(address) else {
                throw .usage("--from needs --address XX:XX:XX:XX:XX:XX, the station's advertiser address")
            }
            samples = try captureSamples(try FileAccess.read(path), file: path, address: wanted)
            source = "\(path), \(HexText.colonSeparated(wanted))"
            if samples.isEmpty {
                throw .data(
                    "\(path): no advertising report from \(HexText.colonSeparated(wanted)) (with an RSSI)",
                    hint: "check the station's advertiser address ('ccbeacon scan' lists what the capture heard)")
            }
        }
        let calibration: Calibration
        do { calibration = try Calibration(samples: samples) } catch {
            throw .data("\(source): \(error.description)", hint: "take more samples 1 m from the station")
        }
        if command.isSet(Options.json) {
            console.output(
                JSONValue.object([
                    ("measuredPower", .integer(calibration.measuredPower)),
                    ("samples", .integer(calibration.sampleCount)),
                    ("used", .integer(calibration.usedCount)), ("min", .integer(calibration.spread.lowerBound)),
                    ("max", .integer(calibration.spread.upperBound)),
                    ("mean", .string(meanText(calibration.mean))),
                ]).rendered() + "\n")
            return
        }
        let dropped = (calibration.sampleCount - calibration.usedCount) / 2
        console.output(
            "measured power \(calibration.measuredPower) dBm from \(calibration.sampleCount) samples of \(source) (the lowest and highest \(dropped) left out; \(calibration.usedCount) averaged, \(calibration.spread.lowerBound)…\(calibration.spread.upperBound) dBm, mean \(meanText(calibration.mean)))\n"
        )
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
            column = index
            values = filled.dropFirst()
        }
        return try values.map { row throws(CommandFailure) -> Int in
            guard column < row.count else {
                throw .data("\(file):\(row[0].line): the row has no rssi cell (column \(column + 1))")
            }
            let cell = row[column]
            let text = CSVTable.trimmed(cell.text)
            guard let value = Int(text), (-127...20).contains(value) else {
                throw .data(
                    "\(file):\(cell.line):\(cell.column): '\(text)' is not an RSSI; give a whole number of dBm, -127…20"
                )
            }
            return value
        }
    }

    /// The RSSI of every report from `address` in a capture (127, "not available", left out).
    static func captureSamples(_ bytes: [UInt8], file: String, address: [UInt8]) throws(CommandFailure) -> [Int] {
        var samples: [Int] = []
        var controllers: Set<Int> = []
        for report in try ScanCommand.heard(bytes, file: file) where report.address == address && report.rssi != 127 {
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

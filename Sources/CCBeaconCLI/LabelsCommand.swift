import BeaconLabels
import BeaconPayload
import CommandLineKit
import FirmwareTemplate
import PostgresLedger
import Provisioning
import StationLedger
import Stations
import Storage
import StructuredText

/// `ccbeacon labels`: a label with a QR code for every station, as SVG pages to print.
enum LabelsCommand {
    static let spec = CommandSpec(
        name: "labels", summary: "print a label with a QR code for every station (SVG)", manual: manual,
        table: CommandTable(
            details: """
                One label per station — its name, UUID, major, minor, advertiser address and a QR code
                — from a station list or from a ledger, on sheets of labels or one label per page.

                The QR code holds the text
                  ibeacon:UUID/MAJOR/MINOR?name=NAME&addr=ADDRESS
                with the UUID in upper case (8-4-4-4-12), major and minor in decimal, the whole name
                percent-encoded (letters, digits and - . _ ~ as they are, every other UTF-8 byte as
                %XX) and &addr= only when the address is known (AA:BB:CC:DD:EE:FF). A name too long
                for its line is cut with … on the label; the code always holds all of it.

                From a list, the stations are every row (the list checked whole first); the address is
                the list's, or else the one batch and provision derive from the identity — when the
                template (--template or --board, as for batch) has an advertiser-address field; a list
                that gives one station another's address is refused, as batch refuses it. With a
                template without one, a label has an address only where the list gives one.
                From batch's record (OUT/stations.json): its stations with the addresses batch gave
                them, under the template the record names (--template or --board may name the same one,
                no other).
                From a ledger (a file, read only, or a postgresql://… server): the verified stations,
                each with the address recorded on its verified attempt; with --all every station, the
                others with the address of their latest attempt (none if never attempted).

                Sheets: a4-3x8 (the default: A4, 3 × 8 labels of 70 × 37.125 mm, edge to edge),
                a4-3x7 (A4, 3 × 7 labels of 70 × 42.3 mm, 0.45 mm from the top), single (one label per
                page, of --label-size), or a sheet of your own, PAGE:GRID (--sheet 210x297:3x8: a page
                of 210 × 297 mm holding 3 columns and 8 rows), its labels --label-size (default: as
                large as the page allows), --gap apart, the first at --margin (default: the grid
                centred). Sizes in mm. Print at 100 % ("actual size"), never "fit to page".

                One page is written to OUT.svg; more pages to OUT-1.svg, OUT-2.svg, … (numbers padded
                to the same width: OUT-01.svg … OUT-12.svg), each listed as it is written. Files an
                earlier run left under those names are listed, never removed.

                Examples:
                  ccbeacon labels stations.csv --board hm10 -o labels.svg
                  ccbeacon labels --ledger provisioning.sqlite --sheet single --label-size 62x29 -o labels.svg
                """,
            options: Options.templateOptions + [
                ledger.spec, all.spec, output.spec, sheet.spec, labelSize.spec, margin.spec, gap.spec,
            ],
            positionals: [
                PositionalSpec(
                    "STATIONS file", usage: "STATIONS.csv|STATIONS.json", required: false, completion: .files)
            ],
            groups: [Options.optionalTemplate]))
    static let command = Command(spec, Arguments.self, run: run)

    static let ledger = Option<String>(
        "--ledger", value: "FILE|URL", help: "label a ledger's stations instead of a list's (file or postgresql://…)",
        completion: .files)
    static let all = Flag("--all", help: "with --ledger: every station, not only the verified ones")
    static let output = Options.output("OUT.svg", help: "the SVG (OUT-1.svg, OUT-2.svg, … for several pages)")
        .required
    static let sheet = Option<String>(
        "--sheet", value: (LabelSheet.names + ["PAGE:GRID"]).joined(separator: "|"),
        help: "the sheet: a4-3x8 (default), a4-3x7, single, or PAGE:GRID such as 210x297:3x8",
        completion: .words(LabelSheet.names))
    static let labelSize = Option<String>(
        "--label-size", value: "WxH", help: "label size in mm (single: required; PAGE:GRID: default fills the page)")
    static let margin = Option<String>(
        "--margin", value: "TOP,LEFT", help: "PAGE:GRID: where the first label starts, mm (default: centred)")
    static let gap = Option<String>("--gap", value: "X,Y", help: "PAGE:GRID: space between labels, mm (default 0,0)")

    /// The labels to print, what the command read them from, and what to tell about them.
    struct Source {
        var labels: [StationLabel]
        var inputs: [CommandSupport.Input]
        var notes: [String]
    }

    /// What `labels` was asked.
    struct Arguments: CommandArguments {
        var output: String
        var sheet: LabelSheet
        /// What the labels are made from: a list (its template chosen with it), or a ledger
        /// (`--all`: every station, not only the verified ones).
        var input: Input
        var template: TemplateChoice

        /// A station list or a ledger, never both.
        enum Input {
            case list(String)
            case ledger(LedgerChoice, everyStation: Bool)
        }

        init(_ command: ParsedCommand) throws(CommandFailure) {
            output = try command.value(LabelsCommand.output)
            guard Files.pathExtension(output).lowercased() == "svg", Files.lastComponent(output).count > 4 else {
                throw .usage("-o must name an .svg file, such as labels.svg (several pages go to labels-1.svg, …)")
            }
            let (named, size, margin, gap) = (
                try command.value(LabelsCommand.sheet) ?? "a4-3x8", try command.value(labelSize),
                try command.value(LabelsCommand.margin), try command.value(LabelsCommand.gap)
            )
            do throws(LabelSheetError) {
                sheet = try LabelSheet.named(named, labelSize: size, margin: margin, gap: gap)
            } catch { throw .usage(error.description) }
            template = try TemplateChoice(command)
            // A list or a ledger, and the options each takes.
            let everyStation = command.isSet(all)
            switch (command.positionals.first, try command.value(LabelsCommand.ledger)) {
            case (nil, nil):
                throw .usage("give a station list (STATIONS.csv or STATIONS.json) or --ledger FILE|URL")
            case (.some, .some):
                throw .usage("give a station list or --ledger, not both")
            case (let list?, nil):
                if everyStation {
                    throw .usage("--all applies to --ledger: a list's labels are all its stations")
                }
                input = .list(list)
            case (nil, .some):
                if let given = Options.templateOptions.first(where: { command.values[$0.name] != nil }) {
                    throw .usage(
                        "\(given.name) applies to a station list: a ledger's labels carry the addresses it recorded")
                }
                input = .ledger(try LedgerChoice(command), everyStation: everyStation)
            }
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (output, sheet) = (arguments.output, arguments.sheet)
        let source: Source
        switch arguments.input {
        case .list(let list): source = try fromList(list, template: arguments.template)
        case .ledger(let ledger, let everyStation): source = try fromLedger(ledger, everyStation: everyStation)
        }
        do { try LabelDocument.check(source.labels, on: sheet) } catch {
            throw .data(
                error.description,
                hint:
                    "shorten the station's name, or give it a larger label (--sheet, --label-size); no label was written"
            )
        }
        let pageCount = LabelDocument.pageCount(source.labels.count, on: sheet)
        let files = pageFiles(output, count: pageCount)
        try CommandSupport.checkOutputs(files, against: source.inputs)
        for note in source.notes { console.diagnostics(line: "note: \(note)") }
        let perPage = sheet.labelsPerPage
        // One page at a time, staged as it is made (a list of 100,000 stations is 4,167 pages),
        // and all put in place together: a sheet is never left with some pages of this list and
        // others of an earlier one.
        let pages = OutputSet(clearingLeftovers: true)
        for (index, file) in files.enumerated() {
            let page: String
            do { page = try LabelDocument.page(index + 1, of: source.labels, on: sheet) } catch {
                throw CommandFailure(
                    .failure, error.description + "; no page was replaced",
                    hint: "run again when the cause is gone")
            }
            try FileAccess.stage(Array(page.utf8), as: file, in: pages)
        }
        try FileAccess.commit(pages)
        for (index, file) in files.enumerated() {
            let first = index * perPage + 1
            let last = min(source.labels.count, first + perPage - 1)
            let what =
                pageCount == 1
                ? "\(source.labels.count) label\(source.labels.count == 1 ? "" : "s")"
                : first == last ? "label \(first)" : "labels \(first)–\(last)"
            console.output(line: "wrote \(file): \(what)")
        }
        console.output(
            line:
                "\(source.labels.count) label\(source.labels.count == 1 ? "" : "s") on \(pageCount) page\(pageCount == 1 ? "" : "s"), sheet \(sheet.name): \(sheet.summary)"
        )
        let earlier = leftovers(output, written: files).filter { name in
            !source.inputs.contains { PathIdentity.same(name, $0.path) }
        }
        if !earlier.isEmpty {
            let shown = earlier.joinedExcerpt()
            console.diagnostics(
                line:
                    "note: left alone, from an earlier run: \(earlier.count == 1 ? "" : "\(earlier.count) files, ")\(shown) (remove them, or they may be printed with these)"
            )
        }
    }

    /// The labels of a station list: every station, with the list's address or the one derived
    /// from its identity when the template has an address field.
    static func fromList(_ list: String, template choice: TemplateChoice) throws(CommandFailure) -> Source {
        // batch's record (a JSON object; a list is an array or CSV) names its template and holds
        // the addresses batch gave.
        let bytes = try FileAccess.read(list)
        if StationListReader.firstSignificantByte(bytes) == UInt8(ascii: "{") {
            return try fromRecord(list, bytes: bytes, template: choice)
        }
        guard choice.isMade else {
            throw .usage(
                "a list's labels need the template its stations are burned with, for their advertiser addresses: \(Options.requiredTemplate.missing)"
            )
        }
        let stations = try CommandSupport.stations(list, consequence: "no label was written")
        let (template, _, _) = try choice.resolve()
        let derives = template.manifest.field(.advertiserAddress) != nil
        // The addresses batch and provision would give: two stations must not share one.
        if derives {
            _ = try CommandSupport.addresses(
                stations, template: template, listPath: list, consequence: "no label was written")
        }
        let labels = stations.map { station in
            StationLabel(
                name: station.name, identity: station.identity,
                address: derives ? AddressPlan.address(of: station) : station.address)
        }
        var notes: [String] = []
        let bare = labels.filter { $0.address == nil }.count
        if bare > 0 {
            notes.append(
                "template '\(template.manifest.name)' has no advertiser-address field: \(bare) label\(bare == 1 ? "" : "s") without an address (the list gives none for \(bare == 1 ? "it" : "them"))"
            )
        }
        return Source(
            labels: labels,
            inputs: [CommandSupport.Input(role: "the station list", path: list)] + CommandSupport.inputs(of: template),
            notes: notes)
    }

    /// The labels of a batch record (`stations.json`): its stations with the addresses batch gave
    /// them. A template given must be the one the record was made with.
    static func fromRecord(_ path: String, bytes: [UInt8], template choice: TemplateChoice) throws(CommandFailure)
        -> Source
    {
        let stations = try ScanCommand.record(bytes, file: path)
        let made: String
        do {
            var root = try JSONObjectReader(try JSONParser.parse(bytes, file: path), file: path)
            var template = try root.object("template")
            made = try template.string("name")
        } catch { throw .data(error.description, hint: "give the stations.json batch wrote, or a station list") }
        try choice.refuseUnusedFolder()
        if choice.isMade {
            let (template, _, _) = try choice.resolve()
            guard template.manifest.name == made else {
                throw .usage(
                    "\(path) was made with template '\(made)', not '\(template.manifest.name)': leave out --template and --board, a record's labels follow its own template"
                )
            }
        }
        let labels = stations.map { station in
            StationLabel(
                name: station.name, identity: station.identity,
                address: station.address.flatMap { try? RandomStaticAddress(parsing: $0) })
        }
        let bare = labels.filter { $0.address == nil }.count
        return Source(
            labels: labels, inputs: [CommandSupport.Input(role: "the batch record", path: path)],
            notes: bare == 0
                ? []
                : [
                    "\(bare) label\(bare == 1 ? "" : "s") without an address: the record gives none for \(bare == 1 ? "it" : "them")"
                ])
    }

    /// The labels of a ledger: its verified stations with the address their verified attempt
    /// recorded, or with `--all` every station (the others with their latest attempt's address).
    static func fromLedger(_ choice: LedgerChoice, everyStation: Bool) throws(CommandFailure) -> Source {
        let (path, shown) = (choice.path, choice.shown)
        let ledger = try choice.openForReading()
        var entries: [(station: Station, address: String?)] = []
        do {
            if everyStation {
                let attempts = try ledger.attempts()
                for state in try ledger.states() {
                    let own = attempts.filter { $0.station == state.station.name }
                    let attempt = own.last { $0.outcome == .verified } ?? own.last
                    entries.append((state.station, attempt?.advertiserAddress))
                }
            } else {
                entries = try ledger.burnedStations().map { ($0.station, $0.attempt.advertiserAddress) }
            }
        } catch { throw ledgerFailure(error, path: shown) }
        guard !entries.isEmpty else {
            throw CommandFailure(
                .failure,
                everyStation
                    ? "\(shown) holds no station; no label was written"
                    : "\(shown) has no verified station yet; no label was written",
                hint: everyStation
                    ? "provision registers a list's stations in its ledger" : "--all labels every station of the ledger"
            )
        }
        var labels: [StationLabel] = []
        for (station, recorded) in entries {
            var address: RandomStaticAddress?
            if let recorded {
                do { address = try RandomStaticAddress(parsing: recorded) } catch {
                    throw .data(
                        "\(shown): station '\(station.name)' has the advertiser address '\(recorded)' recorded, which is not one: \(error)",
                        hint:
                            "ccbeacon never records such a value: another program or a hand edit wrote it; correct that row (sqlite3, psql) or label from the station list; no label was written"
                    )
                }
            }
            labels.append(StationLabel(name: station.name, identity: station.identity, address: address))
        }
        var notes: [String] = []
        let bare = labels.filter { $0.address == nil }.count
        if bare > 0 {
            notes.append(
                "\(bare) label\(bare == 1 ? "" : "s") without an address: the ledger records none for \(bare == 1 ? "that station" : "those stations") (a template without an address field, \(everyStation ? "never attempted, " : "")or an attempt recorded before ledgers kept addresses)"
            )
        }
        // The journal sits beside the ledger's real name, whatever name it was given by.
        return Source(labels: labels, inputs: CommandSupport.inputs(ofLedger: path), notes: notes)
    }

    /// The files `count` pages go to: `output` for one; `NAME-1.svg`, … for more, the numbers
    /// zero-padded to one width so the files sort in page order.
    static func pageFiles(_ output: String, count: Int) -> [String] {
        guard count > 1 else { return [output] }
        let (stem, suffix) = split(output)
        let width = String(count).count
        return (1...count).map { number in
            let digits = String(number)
            return stem + "-" + String(repeating: "0", count: width - digits.count) + digits + suffix
        }
    }

    /// `labels.svg` as (`labels`, `.svg`), the suffix as given.
    static func split(_ output: String) -> (stem: String, suffix: String) {
        (String(output.dropLast(4)), String(output.suffix(4)))
    }

    /// Files in `output`'s folder that are named as this command names pages (`NAME.svg`,
    /// `NAME-N.svg`) but were not `written` now: an earlier run's, which would be printed along.
    static func leftovers(_ output: String, written: [String]) -> [String] {
        let folder = Files.directory(of: output)
        let (stem, suffix) = split(Files.lastComponent(output))
        let writtenNames = Set(written.map(Files.lastComponent))
        guard let names = try? Files.list(folder) else { return [] }
        return names.filter { name in
            guard !writtenNames.contains(name), name.hasSuffix(suffix) else { return false }
            let middle = name.dropLast(suffix.count)
            if middle == stem { return true }
            guard middle.hasPrefix(stem + "-") else { return false }
            let number = middle.dropFirst(stem.count + 1)
            return !number.isEmpty && number.allSatisfy { $0.isASCII && $0.isNumber }
        }.map { output.contains("/") ? Files.join(folder, $0) : $0 }
    }
}

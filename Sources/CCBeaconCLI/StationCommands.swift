import BeaconPayload
import CommandLineKit
import FirmwareTemplate
import IntelHex
import Provisioning
import Stations
import Storage
import StructuredText
import TargetData

/// `ccbeacon generate`: one station image.
enum GenerateCommand {
    static let spec = CommandSpec(
        name: "generate", summary: "make one station's image from a template", manual: manual,
        table: CommandTable(
            details: """
                Checks the template (image sha256, placeholder bytes) and patches the identity into it.
                OUT.hex differs from the template only in the records that hold the payload (and the OAD
                header's CRC, for OAD templates); line endings, record layout and everything else are
                kept. --bin also writes the image as a flat binary from address 0, gaps 0xFF.

                Templates that expose them (the bundled cc2541-ibeacon does) also take the advertiser
                address (random static; by default one derived from the identity, so every station has
                its own), the advertising interval and the TX power; the others keep the template's.

                --battery estimates how long that battery lasts the station (reference firmware only;
                the model and its sources: docs/battery-life.md).

                Example:
                  ccbeacon generate --template cc2541-ibeacon --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 \\
                      --major 1 --minor 2 --power -59 --interval 250 --tx-power -6 -o hall-a.hex
                """,
            options: Options.templateOptions + Options.identityOptions + Options.settingOptions + [
                output.spec, bin.spec, Options.battery.spec,
            ],
            groups: [Options.requiredTemplate]))
    static let command = Command(spec, Arguments.self, run: run)

    static let output = Options.output("OUT.hex", help: "the station's HEX file").required
    static let bin = Option<String>(
        "--bin", value: "OUT.bin", help: "also write a flat binary from address 0", completion: .files)

    /// What `generate` was asked.
    struct Arguments: CommandArguments {
        var output: String
        var bin: String?
        /// With the measured power given, else -59 dBm (the power is chosen by `MeasuredPowerRule`).
        var identity: IBeacon
        var power: Int8?
        var settings: StationSettings
        var template: TemplateChoice
        var battery: Battery?

        init(_ command: ParsedCommand) throws(CommandFailure) {
            output = try command.value(GenerateCommand.output)
            guard try ImageFormat.of(output, role: "output") == .hex else {
                throw .usage("-o must name a .hex file; use --bin OUT.bin for a binary as well")
            }
            bin = try command.value(GenerateCommand.bin)
            if let bin, try ImageFormat.of(bin, role: "--bin output") != .bin {
                throw .usage("--bin must name a .bin file")
            }
            identity = try Options.identity(command)
            power = try command.value(Options.power)
            settings = try Options.settings(command)
            template = try TemplateChoice(command)
            battery = try command.value(Options.battery)
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (output, bin, settings) = (arguments.output, arguments.bin, arguments.settings)
        var identity = arguments.identity
        let (template, _, board) = try arguments.template.resolve()
        let checked = try CommandSupport.check(settings, for: template)
        let power = MeasuredPowerRule.choose(
            given: arguments.power.map { (dBm: $0, origin: .explicit) }, board: board,
            txPower: MeasuredPowerRule.txPower(of: template, settings: settings))
        identity.measuredPower = power.dBm
        let station = template.stationImage(for: identity, settings: checked)
        try CommandSupport.checkOutputs(
            [output] + (bin.map { [$0] } ?? []), against: CommandSupport.inputs(of: template))
        // The image and its .bin are one output: both in place, or neither replaced.
        let files = OutputSet(clearingLeftovers: true)
        try FileAccess.stage(station.file.text, as: output, in: files)
        var binary: [UInt8]?
        if let bin, let end = station.file.memory.endAddress {
            let bytes = station.file.memory.bytes(in: 0..<end, fill: 0xFF)
            try FileAccess.stage(bytes, as: bin, in: files)
            binary = bytes
        }
        try FileAccess.commit(files)
        var lines = [
            "wrote \(output): iBeacon \(identity) at \(CommandSupport.hexAddress(station.payloadAddress)), template '\(template.manifest.name)', rewrote line\(station.rewrittenLines.count == 1 ? "" : "s") \(station.rewrittenLines.map(String.init).joined(separator: ", "))"
        ]
        lines += template.describe(station.settings)
        lines.append("measured power \(power.explanation)")
        if let note = CommandSupport.intervalNote(settings) { lines.append(note) }
        if let bin, let binary { lines.append("wrote \(bin): \(binary.count) bytes from address 0") }
        if template.oadHeader != nil {
            lines.append("OAD header CRC recomputed; the boot manager will accept the image")
        }
        if let battery = arguments.battery {
            lines.append(CommandSupport.batteryReport(template, settings: station.settings, battery: battery).line)
        }
        console.output(lines: lines)
        if power.origin == .explicit, power.isFarFromExpected {
            console.diagnostics(
                line:
                    "warning: --power \(power.dBm) dBm is \(abs(Int(power.dBm) - Int(power.expected))) dB from the \(power.expected) dBm expected at this TX power (\(power.reference.source)); phones estimate distance from it — keep it only if it was measured at 1 m"
            )
        }
    }
}

/// `ccbeacon batch`: one image per station of a list.
enum BatchCommand {
    static let spec = CommandSpec(
        name: "batch", summary: "make an image for every station of a list", manual: manual,
        table: CommandTable(
            details: """
                The list is a CSV with a header row name,uuid,major,minor[,power][,address][,note] (columns in any
                order; an empty power is the board's measured power at the TX power, see generate; any other column,
                such as floor or room, is kept as the stations' attribute) or a JSON array of objects with those
                keys. The whole list is checked first; every bad row, duplicate name, duplicate (UUID, major,
                minor), duplicate address and file-name clash is reported with its line and column, and then nothing
                is written.

                Writes DIR/<name>.hex per station (names made file-safe), with --bin also DIR/<name>.bin,
                and DIR/stations.json: each station's identity, file and sha256, and the template with
                its sha256 and payload address.

                Every output path is checked first: a folder (or anything but a regular file) where a
                station file or stations.json goes is refused before anything changes.

                Running it again over the same DIR is safe: files that already hold exactly the new
                content are left alone, changed ones are replaced atomically, and files that belong to no
                station of the list are never touched (they are listed). Only files a batch recorded are
                replaced: a station file of other content that no batch wrote, or a stations.json that is
                no batch's record, is the user's, and the run is refused before anything changes. Every
                file is written to a temporary file, flushed to disk and renamed into place; stations.json
                is written only after all of them, and gives way to a marker (.stations.json.incomplete)
                while files change, so the folder never holds a record that disagrees with its files. A
                run killed part-way is reported by the next one, which also removes the temporary files
                it left.

                One batch at a time per folder: a second one waits for the first (or, with --no-wait,
                fails at once).

                With a template that exposes them, --interval and --tx-power apply to every station, and
                every station gets its own random static advertiser address: the list's address column,
                or one derived from its identity (recorded in stations.json). Two stations with one
                address are refused.

                Example:
                  ccbeacon batch stations.csv --board hm10 -o out/ --jobs 4
                """,
            options: Options.templateOptions + Options.listSettingOptions + [
                output.spec, bin.spec, jobs.spec, noWait.spec,
            ],
            positionals: [Options.stationList], groups: [Options.requiredTemplate],
            refusedOptions: Options.listRefusedOptions))

    static let command = Command(spec, Arguments.self, run: run)

    static let output = Options.output("DIR", help: "output folder (created if missing)", completion: .folders).required
    static let bin = Flag("--bin", help: "also write a .bin per station")
    static let jobs = Options.count(
        "--jobs", help: "stations generated in parallel (default: the processor count)", in: 1...256
    ) { "--jobs '\($0)' must be 1…256" }
    static let noWait = Flag("--no-wait", help: "fail at once when another batch is writing into DIR (default: wait)")

    /// What `batch` was asked.
    struct Arguments: CommandArguments {
        var listPath: String
        /// Without a trailing slash ("out/" and "out" are the same folder; messages stay free of
        /// doubled slashes).
        var directory: String
        /// `nil`: the processor count.
        var jobs: Int?
        var settings: StationSettings
        var template: TemplateChoice
        var writeBinary: Bool
        var wait: Bool

        init(_ command: ParsedCommand) throws(CommandFailure) {
            listPath = command.positionals[0]
            directory = Values.folder(try command.value(BatchCommand.output))
            jobs = try command.value(BatchCommand.jobs)
            settings = try Options.settings(command)
            template = try TemplateChoice(command)
            writeBinary = command.isSet(bin)
            wait = !command.isSet(noWait)
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (listPath, directory, writeBinary) = (arguments.listPath, arguments.directory, arguments.writeBinary)
        let jobs = arguments.jobs ?? Files.processorCount()
        let listed = try CommandSupport.stations(listPath, consequence: "nothing was written")
        let (template, _, board) = try arguments.template.resolve()
        let settings = try CommandSupport.check(arguments.settings, for: template)
        let (stations, farPower) = CommandSupport.resolvePower(
            listed, template: template, settings: settings.settings, board: board)
        if let warning = CommandSupport.powerWarning(farPower) { console.diagnostics(line: warning) }
        _ = try CommandSupport.addresses(
            stations, template: template, listPath: listPath, consequence: "nothing was written")
        if Files.exists(directory), !Files.isDirectory(directory) {
            throw .usage(
                "-o '\(directory)' is "
                    + (Files.linkEnd(directory).map {
                        $0.text + ($0.missing ? "; create the folder it leads to, or give another" : "")
                    } ?? "not a folder"))
        }
        var outputs = [BatchGenerator.manifestName, BatchGenerator.incompleteMarkerName, FolderLock.fileName]
        for station in stations {
            outputs.append(station.fileStem + ".hex")
            if writeBinary { outputs.append(station.fileStem + ".bin") }
        }
        // Every path is checked before the folder is locked or its record replaced: a folder
        // where a station file goes used to fail the run after the files before it were replaced.
        try CommandSupport.checkOutputs(
            outputs.map { Files.join(directory, $0) },
            against: [CommandSupport.Input(role: "the station list", path: listPath)]
                + CommandSupport.inputs(of: template),
            folder: .batch)
        let reporter = ProgressReporter(console: console, label: "generating")
        let summary: BatchSummary
        do {
            summary = try BatchGenerator.run(
                stations: stations, template: template, settings: settings, directory: directory,
                writeBinary: writeBinary, jobs: jobs, wait: arguments.wait,
                waiting: { holder in
                    console.diagnostics(
                        line:
                            "waiting: another ccbeacon batch\(holder.map { " (process \($0))" } ?? "") is writing into \(directory)/; it holds the folder until it ends (--no-wait to refuse instead)"
                    )
                }
            ) { done, total in reporter.update(done: done, total: total) }
        } catch {
            switch error.problem {
            case .folderBusy:
                throw CommandFailure(
                    .failure, error.description,
                    hint: "wait for it to finish, or choose another folder; nothing was written")
            case .unrecordedFiles:
                throw CommandFailure(
                    .failure, error.description, hint: "move them away, or choose another folder; nothing was written")
            case .file: break
            }
            throw CommandFailure(
                .failure, error.description, hint: "fix the cause and run again; finished files are kept")
        }
        if summary.previousRunInterrupted {
            console.diagnostics(
                line:
                    "note: the last batch into \(directory)/ was interrupted before it wrote its record; every file was checked and the record written anew"
            )
        }
        if !summary.removedTemporaryFiles.isEmpty {
            console.diagnostics(
                line:
                    "note: removed \(summary.removedTemporaryFiles.count) temporary file\(summary.removedTemporaryFiles.count == 1 ? "" : "s") an interrupted run left in \(directory)/: \(summary.removedTemporaryFiles.joined(separator: ", "))"
            )
        }
        var lines = [
            "\(stations.count) station\(stations.count == 1 ? "" : "s") from template '\(template.manifest.name)' in \(directory)/: "
                + "\(summary.count(.written)) written, \(summary.count(.replaced)) replaced, \(summary.count(.unchanged)) unchanged; record in \(directory)/\(BatchGenerator.manifestName)"
        ]
        if let previous = summary.previousTemplate {
            lines.append(
                "note: the previous \(BatchGenerator.manifestName) was for template '\(previous)'; it now describes this batch"
            )
        }
        if !summary.strayFiles.isEmpty {
            let shown = summary.strayFiles.joinedExcerpt()
            let one = summary.strayFiles.count == 1
            lines.append(
                "note: \(summary.strayFiles.count) file\(one ? "" : "s") in \(directory)/ \(one ? "belongs" : "belong") to no station of this list and \(one ? "was" : "were") left alone: \(shown)"
            )
        }
        if let note = CommandSupport.intervalNote(settings.settings) { lines.append(note) }
        console.output(lines: lines)
    }
}

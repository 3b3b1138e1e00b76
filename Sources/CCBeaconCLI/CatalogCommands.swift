import CommandLineKit
import FirmwareTemplate
import IntelHex
import Storage
import StructuredText
import TemplateFiles

/// `ccbeacon boards`: the bundled boards and their chips.
enum BoardsCommand {
    static let spec = CommandSpec(
        name: "boards", summary: "list the supported boards and modules", manual: manual,
        table: CommandTable(
            details: """
                Lists every board file of the bundled boards/ folder: its name (for --board), the chip it
                carries, how it is debugged, and the template generate uses for it by default. --names
                prints only the names, one a line, that a shell passes on as they are (the shell
                completions offer them after --board).

                Example:
                  ccbeacon boards
                """,
            options: [Options.json.spec, CatalogOutput.names.spec]))
    static let command = Command(spec, Arguments.self, run: run)

    /// What `boards` was asked: how to print.
    struct Arguments: CommandArguments {
        var output: CatalogOutput

        init(_ command: ParsedCommand) throws(CommandFailure) { output = try CatalogOutput(command) }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let catalog = try DataLocations.find(templatesOption: nil).loadBoards()
        if arguments.output.names {
            for name in CatalogOutput.offerable(catalog.boards.map(\.name)) { console.output(line: name) }
            return
        }
        if arguments.output.json {
            let boards = catalog.boards.map { board -> JSONValue in
                .object([
                    ("name", .string(board.name)), ("title", .string(board.title)), ("chip", .string(board.chip.name)),
                    ("flashSize", .integer(board.chip.flashSize)), ("debugger", .string(board.debugger.name)),
                    ("usb", .string(board.debugger.usb)), ("defaultTemplate", .string(board.defaultTemplate)),
                ])
            }
            console.data(JSONValue.array(boards).rendered() + "\n")
            return
        }
        let rows = catalog.boards.map { board in
            [
                board.name, board.chip.name, "\(board.debugger.name) (\(board.debugger.usb))", board.defaultTemplate,
                board.title,
            ]
        }
        console.output(
            composed: Table.render(header: ["BOARD", "CHIP", "DEBUGGER", "TEMPLATE", "DESCRIPTION"], rows: rows))
    }
}

/// `ccbeacon templates`: bundled and user templates, each checked.
enum TemplatesCommand {
    static let spec = CommandSpec(
        name: "templates", summary: "list the firmware templates", manual: manual,
        table: CommandTable(
            details: """
                Lists the templates in the user folders (--templates DIR, then $CCBEACON_TEMPLATES) and the
                bundled firmware-templates/ folder. Each one is loaded and checked (image sha256,
                placeholder bytes, chip); a broken template is listed with the reason.

                The TEMPLATE column is what --template takes: the folder's name, or its path where a
                folder of that name comes earlier in the search (a note says which one --template NAME
                takes). Where the template.json names the template otherwise (the name records and
                inspect show), the description says so. --json gives both, as reference and name.
                --names prints only the references of the templates that load, one a line, that a shell
                passes on as they are (see ccbeacon-completions(1); --json lists every one): the shell
                completions offer them after --template.

                Example:
                  ccbeacon templates --templates ~/beacon-templates
                """,
            options: [templates.spec, Options.json.spec, CatalogOutput.names.spec]))
    static let command = Command(spec, Arguments.self, run: run)

    static let templates = Option<String>(
        "--templates", value: "DIR", help: "also list the templates in DIR", completion: .folders)

    /// What `templates` was asked.
    struct Arguments: CommandArguments {
        var templatesFolder: String?
        var output: CatalogOutput

        init(_ command: ParsedCommand) throws(CommandFailure) {
            templatesFolder = try command.value(templates)
            output = try CatalogOutput(command)
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let locations = try DataLocations.find(templatesOption: arguments.templatesFolder)
        if let folder = Files.environment("CCBEACON_TEMPLATES"), !Files.isDirectory(folder) {
            console.diagnostics(
                line: "note: CCBEACON_TEMPLATES is '\(folder)', which is not a folder; it is not searched")
        }
        let catalog = try locations.loadBoards()
        var rows: [[String]] = []
        var json: [JSONValue] = []
        var usable: [String] = []
        for (directory, name) in locations.templateFolders() {
            let source = locations.isBundled(directory) ? "bundled" : directory
            let folder = Files.join(directory, name)
            let (reference, reached) = locations.reference(to: name, in: directory)
            if reference != name {
                console.diagnostics(
                    line: "note: \(folder) is reached only by its folder: --template \(name) "
                        + (reached.map { "takes \($0)" } ?? "is taken as a path"))
            }
            do {
                let template = try TemplateFolder.load(folder, catalog: catalog)
                let field = template.beaconField
                let oad = template.oadHeader.map { " OAD \($0.imageName)" } ?? ""
                let named = template.manifest.name
                let description =
                    template.manifest.description + (named == name ? "" : " (its template.json names it '\(named)')")
                usable.append(reference)
                rows.append([
                    reference, template.chip.name, CommandSupport.hexAddress(field.address) + oad, source, description,
                ])
                json.append(
                    .object([
                        ("name", .string(named)), ("reference", .string(reference)),
                        ("chip", .string(template.chip.name)),
                        ("payloadAddress", .string(CommandSupport.hexAddress(field.address))),
                        ("oad", .bool(template.oadHeader != nil)), ("folder", .string(folder)),
                        ("source", .string(source)), ("description", .string(template.manifest.description)),
                        ("ok", .bool(true)),
                    ]))
            } catch {
                rows.append([reference, "-", "-", source, "BROKEN: \(error)"])
                json.append(
                    .object([
                        ("name", .string(name)), ("reference", .string(reference)), ("folder", .string(folder)),
                        ("source", .string(source)), ("ok", .bool(false)), ("error", .string(error.description)),
                    ]))
            }
        }
        if arguments.output.names {
            for name in CatalogOutput.offerable(usable) { console.output(line: name) }
        } else if arguments.output.json {
            console.data(JSONValue.array(json).rendered() + "\n")
        } else if rows.isEmpty {
            console.output(line: "no templates found in \(locations.templateDirectories.joined(separator: ", "))")
        } else {
            console.output(
                composed: Table.render(header: ["TEMPLATE", "CHIP", "PAYLOAD", "SOURCE", "DESCRIPTION"], rows: rows))
        }
    }
}

/// `ccbeacon template import`: turn a firmware image into a template.
enum TemplateImportCommand {
    static let spec = CommandSpec(
        name: "template import", summary: "make a template from a firmware image with an iBeacon block", manual: manual,
        table: CommandTable(
            details: """
                Searches the image's memory (not its text) for the iBeacon advertising block: the 30 bytes
                02 01 xx 1A FF 4C 00 02 15 + UUID, major, minor, power, or the 27-byte manufacturer AD
                alone. Exactly one block must be found outside the NV pages and the last (lock-bit) page;
                otherwise every block is listed with its address and identity, and --address chooses
                (the others stay in every station as they are, and a note names them).
                The bytes found become the placeholder that generate checks before patching.

                Writes DIR/template.json and DIR/image.hex (DIR defaults to ./NAME). Both paths are
                checked before either is written, and a file already at either is replaced only with
                --force (an image.hex without a template.json is someone's file too). A HEX image is
                stored byte for byte, so stations differ from it only in the payload records. A .bin
                image (loaded at --base, default 0) is stored as HEX without its all-0xFF pages.
                An OAD image header (TI boot image manager) is detected by its CRC and recorded, so
                generate keeps the CRC valid.

                Example:
                  ccbeacon template import SimpleBLEPeripheral_ibeacon.hex --name lab13 --chip CC2541F256
                """,
            options: [
                name.spec, chip.spec, address.spec, Options.base.spec, description.spec, output.spec, force.spec,
            ],
            positionals: [PositionalSpec("IMAGE", usage: "IMAGE.hex|IMAGE.bin", completion: .files)]))
    static let command = Command(spec, Arguments.self, run: run)

    static let name = Option<String>("--name", value: "NAME", help: "template name (letters, digits, - _ .)") {
        text throws(CommandFailure) in
        guard TemplateManifest.isSafeName(text) else {
            throw .usage("--name '\(text)' must be letters, digits, '-', '_' or '.', not starting with '.'")
        }
        return text
    }.required
    static let chip = Option<String>("--chip", value: "C", help: "chip (see boards/chips.json)").defaulting(
        to: "CC2541F256")
    static let address = Option<Int>(
        "--address", value: "A", help: "address of the block to use when there are several"
    ) { text throws(CommandFailure) in try Values.address(text, option: "--address") }
    static let description = Option<String>(
        "--description", value: "TEXT", help: "one line saying what the firmware is"
    ) { text throws(CommandFailure) in
        // The manifest reader refuses what would not show; a template written with it could
        // never be used.
        if let hidden = HiddenCharacters.describeFirst(in: text, allowingTab: false) {
            throw .usage("--description holds \(hidden); give one line of visible text")
        }
        return text
    }
    static let output = Options.output("DIR", help: "template folder to create (default ./NAME)", completion: .folders)
    static let force = Flag("--force", help: "replace an existing template.json or image.hex in DIR")

    /// What `template import` was asked.
    struct Arguments: CommandArguments {
        var image: ImageArgument
        var name: String
        var chipName: String
        var address: Int?
        /// Without a trailing slash; `./NAME` when not given.
        var directory: String
        var force: Bool
        var description: String?

        init(_ command: ParsedCommand) throws(CommandFailure) {
            image = try ImageArgument(command.positionals[0], command)
            name = try command.value(TemplateImportCommand.name)
            chipName = try command.value(chip)
            address = try command.value(TemplateImportCommand.address)
            directory = Values.folder(try command.value(output) ?? name)
            force = command.isSet(TemplateImportCommand.force)
            description = try command.value(TemplateImportCommand.description)
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (imagePath, name, chipName, directory) = (
            arguments.image.path, arguments.name, arguments.chipName, arguments.directory
        )
        let catalog = try DataLocations.find(templatesOption: nil).loadBoards()
        guard let chip = catalog.chip(named: chipName) else {
            throw .usage(
                "--chip '\(chipName)' is unknown; the chips are \(catalog.chips.map(\.name).joined(separator: ", "))"
            )
        }
        let address = arguments.address
        let loaded = try arguments.image.load()
        let (memory, hexText) = (loaded.memory, loaded.hexText)
        let chosen: FoundBeacon
        let others: [FoundBeacon]
        do {
            let choice = try TemplateImport.chooseBlock(in: memory, chip: chip, address: address)
            chosen = choice.chosen
            others = choice.candidates.map(\.beacon).filter { $0.address != chosen.address }
        } catch {
            throw CommandFailure(
                .dataError, lines: ["\(imagePath): \(error.lines[0])"] + error.lines.dropFirst(), hint: error.hint)
        }
        let manifestPath = Files.join(directory, "template.json")
        let imageOutput = Files.join(directory, "image.hex")
        try checkOutputs(
            directory: directory, [imageOutput, manifestPath], importing: imagePath,
            force: arguments.force)
        let imageText = hexText ?? TemplateImport.hexText(forBinary: memory, pageSize: chip.pageSize)
        let manifest = TemplateImport.manifest(
            name: name,
            description: arguments.description ?? "imported from \(Files.lastComponent(imagePath))",
            chip: chip, imageFileName: "image.hex", imageBytes: imageText, beacon: chosen, memory: memory)
        // Check the result exactly as generate will before writing anything.
        do {
            _ = try StationTemplate(
                manifest: manifest, imageBytes: imageText, imagePath: imageOutput,
                directory: directory, catalog: catalog)
        } catch {
            throw .data(error.description, hint: error.hint)
        }
        do { try Files.createDirectory(directory) } catch { throw CommandFailure(.failure, error.description) }
        // The image and the manifest that names its digest are one output: a template is never
        // left with one new and the other old.
        let files = OutputSet(clearingLeftovers: true)
        try FileAccess.stage(imageText, as: imageOutput, in: files)
        try FileAccess.stage(Array((manifest.json().rendered() + "\n").utf8), as: manifestPath, in: files)
        try FileAccess.commit(files)
        var lines = [
            "template '\(name)' written to \(directory)/",
            "  payload: \(chosen.summary) at \(CommandSupport.hexAddress(chosen.address))",
        ]
        // Every station keeps the other blocks as they are: said, since a station whose firmware
        // advertises one of those would send the same identity as every other.
        for other in others {
            lines.append(
                "  note: the image also holds \(other.summary) at \(CommandSupport.hexAddress(other.address)); every station keeps it unchanged, so the firmware must advertise the block at \(CommandSupport.hexAddress(chosen.address))"
            )
        }
        if let oad = manifest.oad {
            lines.append(
                "  OAD header at \(CommandSupport.hexAddress(oad.headerAddress)) (\(oad.layout.rawValue)); generate keeps its CRC valid"
            )
        }
        lines.append(
            "  generate a station: ccbeacon generate --template \(directory) --uuid … --major … --minor … -o station.hex"
        )
        console.output(lines: lines)
    }
}

extension TemplateImportCommand {
    /// Checks both outputs before either is written: `-o` must be a folder (or not exist yet, to
    /// be created), neither file may be a folder or the imported image (`CommandSupport.checkOutputs`),
    /// and without `force` neither may exist — an image.hex without a template.json beside it is
    /// still someone's file.
    static func checkOutputs(directory: String, _ outputs: [String], importing imagePath: String, force: Bool)
        throws(CommandFailure)
    {
        if Files.exists(directory), !Files.isDirectory(directory) {
            throw .usage("-o '\(directory)' is not a folder; name the template folder to create")
        }
        try CommandSupport.checkOutputs(
            outputs, against: [CommandSupport.Input(role: "the image being imported", path: imagePath)],
            folder: .created)
        guard !force else { return }
        let hint = "choose another -o DIR, or add --force to replace it"
        if Files.isFile(Files.join(directory, "template.json")) {
            throw CommandFailure(.failure, "'\(directory)' already holds a template", hint: hint)
        }
        if let existing = outputs.first(where: Files.exists) {
            throw CommandFailure(
                .failure, "'\(directory)' already holds \(Files.lastComponent(existing))", hint: hint)
        }
    }
}

/// Fixed-width text tables.
/// A table of text for people: every cell made visible whole (`VisibleText.escaped`) before the
/// columns are measured, so a cell holding a line break or an escape sequence stays in its cell.
enum Table {
    static func render(header: [String], rows: [[String]]) -> String {
        let all = ([header] + rows).map { $0.map(VisibleText.escaped) }
        let widths = (0..<header.count).map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            zip(row, widths).enumerated().map { index, cell in
                index == row.count - 1 ? cell.0 : CommandLineTool.padded(cell.0, to: cell.1)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}

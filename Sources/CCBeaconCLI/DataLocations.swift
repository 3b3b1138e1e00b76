import CommandLineKit
import FirmwareTemplate
import Storage
import StructuredText
import TargetData
import TemplateFiles

/// Where ccbeacon finds its bundled `boards/` and `firmware-templates/` folders and the user's
/// templates.
///
/// Bundled data: `$CCBEACON_DATA`, else the nearest folder above the executable that holds
/// `boards/chips.json` (a development checkout: `.build/release/ccbeacon`), else
/// `<prefix>/share/ccbeacon` beside an installed `<prefix>/bin/ccbeacon`. User templates: the
/// `--templates DIR` option, then `$CCBEACON_TEMPLATES`; they are searched before the bundled ones.
struct DataLocations {
    var dataRoot: String
    var userTemplateDirectories: [String]

    var boardsDirectory: String { Files.join(dataRoot, "boards") }
    var bundledTemplatesDirectory: String { Files.join(dataRoot, "firmware-templates") }
    /// The folders searched, in order, each once (one folder given twice, as --templates and as
    /// $CCBEACON_TEMPLATES, or the bundled one again, is searched where it first comes).
    var templateDirectories: [String] {
        var seen: Set<String> = []
        return (userTemplateDirectories + [bundledTemplatesDirectory]).filter {
            seen.insert(PathIdentity.resolved($0)).inserted
        }
    }

    static func find(templatesOption: String?) throws(CommandFailure) -> DataLocations {
        // A folder of templates that is not there is a mistake to tell, not a place to skip.
        if let folder = templatesOption, !Files.isDirectory(folder) {
            throw .usage("--templates '\(folder)' is not a folder; give the folder that holds your templates")
        }
        // A stale CCBEACON_TEMPLATES must not stop a flash or an erase: it is searched when it
        // is a folder, and `templates` says when it is not.
        let environment = Files.environment("CCBEACON_TEMPLATES").flatMap { Files.isDirectory($0) ? $0 : nil }
        let user = [templatesOption, environment].compactMap { $0 }
        if let root = Files.environment("CCBEACON_DATA") {
            guard Files.isFile(Files.join(root, "boards/chips.json")) else {
                throw CommandFailure(
                    .failure, "CCBEACON_DATA is '\(root)', which holds no boards/chips.json",
                    hint: "point it at the folder that holds boards/ and firmware-templates/, or unset it")
            }
            return DataLocations(dataRoot: root, userTemplateDirectories: user)
        }
        if let executable = Files.executablePath() {
            var directory = Files.directory(of: executable)
            for _ in 0..<6 {
                if Files.isFile(Files.join(directory, "boards/chips.json")) {
                    return DataLocations(dataRoot: directory, userTemplateDirectories: user)
                }
                let installed = Files.join(directory, "share/ccbeacon")
                if Files.isFile(Files.join(installed, "boards/chips.json")) {
                    return DataLocations(dataRoot: installed, userTemplateDirectories: user)
                }
                let parent = Files.directory(of: directory)
                if parent == directory { break }
                directory = parent
            }
        }
        throw CommandFailure(
            .failure, "cannot find ccbeacon's bundled boards/ and firmware-templates/",
            hint: "set CCBEACON_DATA to the folder that holds them (the source checkout, or <prefix>/share/ccbeacon)")
    }

    func loadBoards() throws(CommandFailure) -> BoardCatalog {
        let directory = boardsDirectory
        do {
            let files = try Files.list(directory).filter { $0.hasSuffix(".json") }.map { name throws(FileError) in
                (name: name, bytes: try Files.read(Files.join(directory, name)))
            }
            return try BoardCatalog.load(files: files, directory: directory)
        } catch let error as FileError {
            throw CommandFailure(
                .failure, error.description, hint: "the installation is incomplete; reinstall ccbeacon")
        } catch let error as DataFileError {
            throw .data(error.description, hint: "fix the board file at that spot")
        } catch {
            throw CommandFailure(.failure, "\(error)")
        }
    }

    /// The folder of template `reference`: a path (containing `/`, or an existing folder), or a
    /// name looked up in the user folders and then the bundled one. A reference that names no
    /// template is a usage error, like an unknown board, and the message lists the templates.
    func templateDirectory(_ reference: String) throws(CommandFailure) -> String {
        // A manifest's path (a folder whose name merely ends so, or is so, is a folder).
        if reference == "template.json" || reference.hasSuffix("/template.json"), !Files.isDirectory(reference) {
            return Files.directory(of: reference)
        }
        if reference.contains("/") || Files.isDirectory(reference) {
            guard Files.exists(Files.join(reference, "template.json")) else {
                throw .usage(
                    "'\(reference)' is not a template folder (it has no template.json); \(templateList())")
            }
            return reference
        }
        for directory in templateDirectories where Files.exists(Files.join(directory, "\(reference)/template.json")) {
            return Files.join(directory, reference)
        }
        throw .usage(
            "\(TemplateError.notFound(name: reference, searched: templateDirectories)); \(templateList())")
    }

    /// Every template folder (one holding an entry named template.json, whatever it is: loading
    /// it says what is wrong with it) of the template directories, in search order, by name.
    func templateFolders() -> [(directory: String, name: String)] {
        templateDirectories.flatMap { directory in
            ((try? Files.list(directory)) ?? []).filter { Files.exists(Files.join(directory, "\($0)/template.json")) }
                .map { (directory: directory, name: $0) }
        }
    }

    /// What --template takes to reach the template folder `name` of `directory`: the name where
    /// the lookup leads there (not to an earlier folder of that name, or to a folder of the current
    /// directory), else the folder's path.
    /// (`reached`: the folder the lookup of `name` leads to, if any.)
    func reference(to name: String, in directory: String) -> (reference: String, reached: String?) {
        let folder = Files.join(directory, name)
        let reached = try? templateDirectory(name)
        return (reached.map(PathIdentity.resolved) == PathIdentity.resolved(folder) ? name : folder, reached)
    }

    /// Whether `directory` is the bundled templates folder, however the path spells it.
    func isBundled(_ directory: String) -> Bool {
        PathIdentity.resolved(directory) == PathIdentity.resolved(bundledTemplatesDirectory)
    }

    /// `the templates are a, b (see 'ccbeacon templates')`, for messages about a missing one: each
    /// as --template reaches it.
    func templateList() -> String {
        var seen: Set<String> = []
        let names = templateFolders().map { reference(to: $0.name, in: $0.directory).reference }.filter {
            seen.insert($0).inserted
        }
        guard !names.isEmpty else { return "there are no templates; give a template folder" }
        return
            "the templates are \(names.joined(separator: ", ")) (see 'ccbeacon templates'), or give a template folder"
    }

    /// Every template that loads, user folders first (a broken one is skipped; `templates` lists
    /// it with its reason).
    func loadAllTemplates(catalog: BoardCatalog) -> [StationTemplate] {
        templateDirectories.flatMap { directory in
            ((try? Files.list(directory)) ?? []).compactMap { name in
                try? TemplateFolder.load(Files.join(directory, name), catalog: catalog)
            }
        }
    }

    func loadTemplate(_ reference: String, catalog: BoardCatalog) throws(CommandFailure) -> StationTemplate {
        let directory = try templateDirectory(reference)
        do {
            return try TemplateFolder.load(directory, catalog: catalog)
        } catch {
            let exit: ExitCode = if case .file = error { .failure } else { .dataError }
            throw CommandFailure(exit, error.description, hint: error.hint)
        }
    }
}

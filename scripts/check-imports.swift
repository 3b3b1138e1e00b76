// check-imports: every package module a target imports must be one of that target's declared
// direct dependencies. SwiftPM builds a tree that breaks this rule only when the build order
// happens to build the undeclared module first — a clean clone in CI is not always so kind.
//
// usage: swift package dump-package | check-imports PACKAGE_DIR [README.md]
// Prints `file:line: TARGET imports MODULE, which it does not list as a dependency` for each
// violation and exits 1; exits 0 when every import is declared. With a README, its module table
// (rows `| \`Sources/NAME\` | what | dependencies |`) must name every target under Sources/ and
// give exactly the package dependencies Package.swift declares for it.
import Foundation

/// One target of the package as `dump-package` describes it.
struct Target {
    var name: String
    var directory: String
    var dependencies: Set<String>
    var type: String

    /// The name other targets import it by.
    var moduleName: String { name.replacingOccurrences(of: "-", with: "_") }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("check-imports: \(message)\n".utf8))
    exit(2)
}

/// The targets of the `dump-package` JSON document.
func targets(fromDump data: Data, packageDirectory: String) -> [Target] {
    guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
        let list = root["targets"] as? [[String: Any]]
    else { fail("standard input is not the JSON of 'swift package dump-package'") }
    return list.compactMap { entry in
        guard let name = entry["name"] as? String, let type = entry["type"] as? String else { return nil }
        let folder = type == "test" ? "Tests" : (type == "plugin" ? "Plugins" : "Sources")
        let path = (entry["path"] as? String) ?? "\(folder)/\(name)"
        var dependencies = Set<String>()
        for dependency in entry["dependencies"] as? [[String: Any]] ?? [] {
            // Each is {"byName": [name, condition]}, {"target": [...]} or {"product": [name, package, …]}.
            for value in dependency.values {
                if let parts = value as? [Any], let first = parts.first as? String { dependencies.insert(first) }
            }
        }
        return Target(name: name, directory: packageDirectory + "/" + path, dependencies: dependencies, type: type)
    }
}

/// The module an `import` line names, or nil when the line is not an import. Handles attributes
/// (`@testable`, `@_implementationOnly`), access levels (`public import`) and kinds (`import struct M.T`).
func importedModule(_ line: Substring) -> String? {
    var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
    while let first = words.first, first.hasPrefix("@") { words = words.dropFirst() }
    let modifiers: Set<Substring> = ["public", "package", "internal", "fileprivate", "private"]
    if let first = words.first, modifiers.contains(first) { words = words.dropFirst() }
    guard words.first == "import" else { return nil }
    words = words.dropFirst()
    let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let", "actor"]
    if let first = words.first, kinds.contains(first) { words = words.dropFirst() }
    guard let path = words.first else { return nil }
    return String(path.split(separator: ".").first ?? path)
}

/// Every Swift file under `directory`, sorted.
func swiftFiles(in directory: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
    return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted()
        .map { directory + "/" + $0 }
}

guard (2...3).contains(CommandLine.arguments.count) else {
    fail("usage: swift package dump-package | check-imports PACKAGE_DIR [README.md]")
}
let packageDirectory = CommandLine.arguments[1]
let all = targets(fromDump: FileHandle.standardInput.readDataToEndOfFile(), packageDirectory: packageDirectory)
guard !all.isEmpty else { fail("the package has no targets") }
let moduleOwners = Dictionary(all.map { ($0.moduleName, $0.name) }, uniquingKeysWith: { first, _ in first })

var violations: [String] = []
for target in all {
    for file in swiftFiles(in: target.directory) {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { fail("cannot read \(file)") }
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard let module = importedModule(line.drop(while: { $0 == " " || $0 == "\t" })),
                let owner = moduleOwners[module], owner != target.name, !target.dependencies.contains(owner)
            else { continue }
            let relative =
                file.hasPrefix(packageDirectory + "/") ? String(file.dropFirst(packageDirectory.count + 1)) : file
            violations.append(
                "\(relative):\(number + 1): \(target.name) imports \(module), which it does not list as a dependency")
        }
    }
}
/// The README's module table against Package.swift: each row's first cell names its targets
/// (`Sources/NAME`), its last cell their dependencies; words that name no target (Glibc, "Swift
/// standard library only") are prose. A row with several targets lists what they depend on
/// outside the row. "all of the above" is not checked.
func moduleTableProblems(readme: String) -> [String] {
    guard let text = try? String(contentsOfFile: readme, encoding: .utf8) else { fail("cannot read \(readme)") }
    let byName = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    var problems: [String] = []
    var listed = Set<String>()
    for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
    where line.hasPrefix("| `Sources/") {
        let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        guard cells.count >= 3, let last = cells.last else { continue }
        let names = cells[0].components(separatedBy: "`").filter { $0.hasPrefix("Sources/") }.map {
            String($0.dropFirst("Sources/".count))
        }
        listed.formUnion(names)
        let place = "\(readme):\(number + 1)"
        for name in names where byName[name] == nil { problems.append("\(place): no target \(name) in Package.swift") }
        guard !last.contains("all of the above") else { continue }
        let words = Set(
            last.components(separatedBy: CharacterSet(charactersIn: ",;() `")).filter { byName[$0] != nil })
        let declared = names.reduce(into: Set<String>()) { $0.formUnion(byName[$1]?.dependencies ?? []) }
            .subtracting(names)
        if words != declared {
            let missing = declared.subtracting(words).sorted()
            let extra = words.subtracting(declared).sorted()
            problems.append(
                "\(place): the row of \(names.joined(separator: ", ")) says \(words.sorted().joined(separator: ", ")); Package.swift declares \(declared.sorted().joined(separator: ", "))"
                    + (missing.isEmpty ? "" : " (missing: \(missing.joined(separator: ", ")))")
                    + (extra.isEmpty ? "" : " (not declared: \(extra.joined(separator: ", ")))"))
        }
    }
    for target in all
    where target.type != "test" && target.directory.contains("/Sources/") && !listed.contains(target.name) {
        problems.append("\(readme): the module table has no row for Sources/\(target.name)")
    }
    return problems
}

if CommandLine.arguments.count == 3 { violations += moduleTableProblems(readme: CommandLine.arguments[2]) }
for violation in violations { print(violation) }
if !violations.isEmpty {
    print(
        "check-imports: \(violations.count) problem(s); declare each imported module in Package.swift, and keep the README's module table equal to it"
    )
    exit(1)
}
print("check-imports: \(all.count) targets, every package import declared")

// check-imports: every package module a target imports must be one of that target's declared
// direct dependencies. SwiftPM builds a tree that breaks this rule only when the build order
// happens to build the undeclared module first — a clean clone in CI is not always so kind.
//
// usage: swift package dump-package | check-imports PACKAGE_DIR
// Prints `file:line: TARGET imports MODULE, which it does not list as a dependency` for each
// violation and exits 1; exits 0 when every import is declared.
import Foundation

/// One target of the package as `dump-package` describes it.
struct Target {
    var name: String
    var directory: String
    var dependencies: Set<String>

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
        return Target(name: name, directory: packageDirectory + "/" + path, dependencies: dependencies)
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

guard CommandLine.arguments.count == 2 else { fail("usage: swift package dump-package | check-imports PACKAGE_DIR") }
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
for violation in violations { print(violation) }
if !violations.isEmpty {
    print(
        "check-imports: \(violations.count) undeclared import(s); add each module to the target's dependencies in Package.swift"
    )
    exit(1)
}
print("check-imports: \(all.count) targets, every package import declared")

// doc-coverage: how much of a module's public API a DocC archive documents.
//
// usage: doc-coverage MODULE ARCHIVE.doccarchive
// Reads the archive's documentation-coverage.json (`docc convert
// --experimental-documentation-coverage`) and counts the module's symbols that have an abstract:
// prints `MODULE: N of M public symbols documented (P %)`, then each undocumented symbol, and
// exits 1 unless every one is documented. Not counted: the `init(rawValue:)` the compiler makes
// for an enum with raw values (it cannot carry a comment of ours); the module's own page counts
// (its catalog's root page gives the abstract).
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: doc-coverage MODULE ARCHIVE.doccarchive\n".utf8))
    exit(2)
}
let (module, archive) = (arguments[1], arguments[2])
let path = archive + "/documentation-coverage.json"
guard let data = FileManager.default.contents(atPath: path),
    let entries = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
else {
    FileHandle.standardError.write(Data("doc-coverage: cannot read \(path)\n".utf8))
    exit(2)
}
var documented = 0
var missing: [String] = []
for entry in entries {
    guard let kind = entry["kind"] as? [String: Any], kind["isSymbol"] as? Bool == true,
        let reference = entry["referencePath"] as? String
    else { continue }
    let name = reference.components(separatedBy: "/documentation/").last ?? reference
    if kind["name"] as? String == "Initializer", name.hasSuffix("/init(rawValue:)") { continue }
    if entry["hasAbstract"] as? Bool == true {
        documented += 1
    } else {
        missing.append("\(kind["name"] as? String ?? "?") \(name)")
    }
}
let total = documented + missing.count
let percent = total == 0 ? 100 : documented * 100 / total
print("\(module): \(documented) of \(total) public symbols documented (\(percent) %)")
for symbol in missing.sorted() { print("  undocumented: \(symbol)") }
exit(missing.isEmpty ? 0 : 1)

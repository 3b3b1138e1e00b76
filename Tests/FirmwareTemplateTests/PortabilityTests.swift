import Foundation
import TestSupport
import Testing

/// The products an iOS or macOS app may use import nothing Linux-only, through any module they
/// import: no C library at all, and none of this package's modules that use one. The flasher and
/// the emulator use the POSIX C library only where macOS has it too (`Darwin` beside `Glibc`).
/// (Never built for those platforms here: this checks the imports, the one thing that can be
/// checked on Linux.)
struct PortabilityTests {
    static let portable = ["IntelHex", "BeaconPayload", "TargetData", "FirmwareTemplate", "BeaconScan"]
    static let posix = ["CCDebugger", "CCDebuggerEmulator"]
    static let linuxOnly: Set = ["Glibc", "Musl", "Storage", "CFileAttributes", "CLibUSB", "HCISocket", "CTextWidth"]

    /// The modules `module`'s files import, each with the file that does.
    static func imports(of module: String) throws -> [(module: String, file: String)] {
        let folder = SharedFixtures.checkout.appendingPathComponent("Sources/\(module)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        return try names.flatMap { name in
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            // The C library where each platform has it: POSIX, unless macOS's is missing.
            let cLibrary = text.contains("canImport(Darwin)") ? "POSIX" : "Glibc"
            return text.split(separator: "\n").compactMap { line -> (module: String, file: String)? in
                let words = line.split(separator: " ").filter { !["public", "package", "@testable"].contains($0) }
                if line.contains("canImport(Glibc)") { return (cLibrary, "\(module)/\(name)") }
                guard words.count == 2, words[0] == "import" else { return nil }
                let imported = ["Glibc", "Darwin"].contains(words[1]) ? cLibrary : String(words[1])
                return (imported, "\(module)/\(name)")
            }
        }
    }

    /// Every import of `module` and of the package's modules it imports, however deep.
    static func importsThroughout(_ module: String) throws -> [(module: String, file: String)] {
        var seen: Set<String> = []
        var queue = [module]
        var found: [(module: String, file: String)] = []
        while let next = queue.popLast() {
            guard seen.insert(next).inserted else { continue }
            for imported in try imports(of: next) {
                found.append(imported)
                let isOurs = FileManager.default.fileExists(
                    atPath: SharedFixtures.checkout.appendingPathComponent("Sources/\(imported.module)").path)
                if isOurs { queue.append(imported.module) }
            }
        }
        return found
    }

    @Test(arguments: portable) func importsNothingLinuxOnly(product: String) throws {
        let found = try Self.importsThroughout(product)
        #expect(!found.isEmpty)
        for imported in found where Self.linuxOnly.contains(imported.module) || imported.module == "POSIX" {
            Issue.record("\(product): \(imported.file) imports \(imported.module)")
        }
    }

    @Test(arguments: posix) func importsOnlyWhatMacOSHasToo(product: String) throws {
        let found = try Self.importsThroughout(product)
        #expect(found.contains { $0.module == "POSIX" })
        for imported in found where Self.linuxOnly.contains(imported.module) {
            Issue.record("\(product): \(imported.file) imports \(imported.module)")
        }
    }

    /// The check sees what it looks for: the modules that are not portable are caught.
    @Test(arguments: ["CCDebuggerUSB", "TemplateFiles", "Storage"]) func aLinuxModuleIsCaught(module: String) throws {
        #expect(try Self.importsThroughout(module).contains { Self.linuxOnly.contains($0.module) })
    }
}

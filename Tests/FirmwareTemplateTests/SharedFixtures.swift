import Foundation
import IntelHex

/// Locates `../shared/` beside the checkout. Tests that read it are skipped when it is absent,
/// so the suite still runs on a clone without the shared material.
enum SharedFixtures {
    static let directory: URL? = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }  // Tests/IntelHexTests/File.swift → checkout's parent
        let shared = url.appendingPathComponent("shared")
        return FileManager.default.fileExists(atPath: shared.path) ? shared : nil
    }()

    static var available: Bool { directory != nil }

    static func files(in subdirectory: String, withExtension ext: String) -> [URL] {
        guard let directory else { return [] }
        let folder = directory.appendingPathComponent(subdirectory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix("." + ext) }.sorted().map { folder.appendingPathComponent($0) }
    }

    static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }
}

extension SharedFixtures {
    /// The checkout's root (for the bundled boards/ and firmware-templates/).
    static let checkout: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// A corpus image as memory: HEX parsed, .bin loaded at 0.
    static func corpusMemory(_ name: String) throws -> MemoryImage {
        let bytes = try Self.bytes(directory!.appendingPathComponent("corpus/\(name)"))
        return name.hasSuffix(".hex")
            ? try IntelHexFile(text: bytes, fileName: name).memory : try MemoryImage(bytes: bytes, at: 0)
    }
}

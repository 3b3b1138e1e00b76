public import Foundation
public import IntelHex

/// Locates `../shared/` beside the checkout and the checkout itself. Tests that read `../shared/`
/// are skipped when it is absent, so the suite still runs on a clone without the shared material.
public enum SharedFixtures {
    /// The checkout's root (for the bundled boards/ and firmware-templates/).
    public static let checkout: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Tests/TestSupport/SharedFixtures.swift
        return url
    }()

    /// `../shared/`, or `nil` when it is not there.
    public static let directory: URL? = {
        let shared = checkout.deletingLastPathComponent().appendingPathComponent("shared")
        return FileManager.default.fileExists(atPath: shared.path) ? shared : nil
    }()

    /// True when `../shared/` is there.
    public static var available: Bool { directory != nil }

    /// The files of a `../shared/` subfolder with an extension, sorted.
    public static func files(in subdirectory: String, withExtension ext: String) -> [URL] {
        guard let directory else { return [] }
        let folder = directory.appendingPathComponent(subdirectory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix("." + ext) }.sorted().map { folder.appendingPathComponent($0) }
    }

    /// A file's bytes.
    public static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    /// A corpus image as memory: HEX parsed, .bin loaded at 0.
    public static func corpusMemory(_ name: String) throws -> MemoryImage {
        let bytes = try Self.bytes(directory!.appendingPathComponent("corpus/\(name)"))
        return name.hasSuffix(".hex")
            ? try IntelHexFile(text: bytes, fileName: name).memory : try MemoryImage(bytes: bytes, at: 0)
    }
}

public import Foundation

/// A fresh folder of its own under the system's temporary directory, for one test (or one helper
/// run); `remove()` deletes it with everything in it.
public struct TemporaryFolder: Sendable {
    /// The folder.
    public let url: URL

    /// Creates `<tmp>/<prefix>-<UUID>`.
    public init(prefix: String = "ccbeacon-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the folder.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to `name` and returns its path.
    public func write(_ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: url.appendingPathComponent(name))
        return path(name)
    }

    /// The bytes of `name`.
    public func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url.appendingPathComponent(name)))
    }

    /// The file `name` in the folder as UTF-8 text.
    public func text(_ name: String) throws -> String { String(decoding: try bytes(name), as: UTF8.self) }

    /// Deletes the folder.
    public func remove() { try? FileManager.default.removeItem(at: url) }
}

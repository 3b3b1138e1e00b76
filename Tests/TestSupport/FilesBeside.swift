public import Foundation

/// The files in `path`'s folder whose names start with its name — the file itself and anything
/// made beside it (SQLite's -wal, -shm and -journal files, temporary files) — with their bytes, so
/// a test can show that a command left a file, and its folder, exactly as they were.
public func filesBeside(_ path: String) throws -> [String: Data] {
    let file = URL(fileURLWithPath: path)
    let folder = file.deletingLastPathComponent()
    var files: [String: Data] = [:]
    for entry in try FileManager.default.contentsOfDirectory(atPath: folder.path)
    where entry.hasPrefix(file.lastPathComponent) {
        files[entry] = try Data(contentsOf: folder.appendingPathComponent(entry))
    }
    return files
}

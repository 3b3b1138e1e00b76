import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The image formats a file name can name.
enum ImageFormat: String {
    case hex, bin

    /// The format named by `path`'s extension.
    static func of(_ path: String, role: String) throws(CommandFailure) -> ImageFormat {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "hex", "ihx", "ihex": return .hex
        case "bin": return .bin
        default:
            throw .usage("cannot tell the format of \(role) '\(path)' from its extension; use .hex (Intel HEX) or .bin")
        }
    }
}

/// File reading and atomic writing with errors a user can act on.
enum FileAccess {
    static func read(_ path: String) throws(CommandFailure) -> [UInt8] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure(.failure, "cannot read '\(path)': no such file", hint: "check the path")
        }
        do {
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CommandFailure(
                .failure, "cannot read '\(path)': \(error.localizedDescription)",
                hint: "check that it is a readable file")
        }
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed to disk,
    /// then renamed over the target, so a crash leaves either the old file or the new one.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(CommandFailure) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = "\(directory)/.\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else {
            throw CommandFailure(
                .failure, "cannot write '\(path)': \(String(cString: strerror(errno)))",
                hint: "check that the directory '\(directory)' exists and is writable")
        }
        var written = 0
        let failure: Int32? = bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let result = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += result
            }
            return fsync(descriptor) == 0 ? nil : errno
        }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw CommandFailure(.failure, "cannot write '\(path)': \(String(cString: strerror(failure)))")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CommandFailure(.failure, "cannot write '\(path)': \(reason)")
        }
    }
}

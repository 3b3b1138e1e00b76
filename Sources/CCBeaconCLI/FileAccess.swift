import CommandLineKit
import Storage
import StructuredText

/// The image formats a file name can name.
enum ImageFormat: String {
    case hex, bin

    /// The format named by `path`'s extension.
    static func of(_ path: String, role: String) throws(CommandFailure) -> ImageFormat {
        switch Files.pathExtension(path).lowercased() {
        case "hex", "ihx", "ihex": return .hex
        case "bin": return .bin
        default:
            throw .usage(
                "cannot tell the format of \(role) '\(path)' from its extension; use .hex (Intel HEX) or .bin")
        }
    }
}

/// File access for commands: `Files` with its errors turned into messages, hints and exit codes.
enum FileAccess {
    static func read(_ path: String) throws(CommandFailure) -> [UInt8] {
        do {
            return try Files.read(path)
        } catch {
            if error.isNotRegularFile {
                throw .usage("cannot read '\(path)': \(error.reason); give the path of a file")
            }
            if error.isTooLarge {
                throw .usage(
                    "cannot read '\(path)': \(error.reason); give the path of a firmware image or station list"
                )
            }
            if error.isOutOfMemory {
                throw CommandFailure(
                    .failure, error.description, hint: "free memory or raise the memory limit (ulimit -v) and run again"
                )
            }
            throw CommandFailure(
                .failure, error.isMissing ? "cannot read '\(path)': no such file" : error.description,
                hint: error.isMissing ? "check the path" : "check that it is a readable file")
        }
    }

    /// Writes a command's one output whole (an `OutputSet` of one file, clearing what killed runs
    /// left in its folder).
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(CommandFailure) {
        let output = OutputSet(clearingLeftovers: true)
        try stage(bytes, as: path, in: output)
        try commit(output)
    }

    /// Stages `bytes` to replace `path` when `output` is committed (`OutputSet`).
    static func stage(_ bytes: [UInt8], as path: String, in output: OutputSet) throws(CommandFailure) {
        do { try output.stage(bytes, as: path) } catch { throw writeFailure(error, replacedNothing: true) }
    }

    /// Puts every file staged in `output` in place.
    static func commit(_ output: OutputSet) throws(CommandFailure) {
        do { try output.commit() } catch { throw writeFailure(error) }
    }

    /// A write that failed, with what to do: a full disk said as such.
    static func writeFailure(_ error: FileError, replacedNothing: Bool = false) -> CommandFailure {
        CommandFailure(
            .failure, error.description + (replacedNothing ? "; no file was replaced" : ""),
            hint: error.isDiskFull
                ? "the disk (or this user's quota) is full: free some space and run again"
                : "check that the directory '\(Files.directory(of: error.path))' exists and is writable")
    }
}

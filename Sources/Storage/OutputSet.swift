#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files a command writes as one — a station image and its `.bin`, a template's image and
/// manifest, the pages of a label sheet, the man pages — so that a failure leaves the old set, not
/// a mix of old and new files: each is staged beside its target (written whole under a temporary
/// name, `Files.temporaryName`, and synced), and only once all are staged does `commit` rename them
/// into place, in the order staged, and sync their folders.
///
/// What fails while staging (a full disk, a file too large, a folder that takes no new file)
/// replaces nothing: the staged files are removed. Known limits: a crash while staging leaves
/// its temporary files (`Files.removeAbandonedTemporaryFiles` clears such leftovers); a crash or
/// a failed rename among the renames — microseconds, after every byte is on the disk — leaves the
/// files renamed so far replaced, and `commit`'s error names them.
public final class OutputSet {
    private var staged: [(temporary: String, path: String)] = []
    private var settled = false

    /// An empty set.
    public init() {}

    /// The paths staged so far, in order.
    public var paths: [String] { staged.map(\.path) }

    /// Writes `bytes` whole beside `path`, to replace it at `commit`. On failure nothing is left
    /// of this file; the files staged before stay staged (for the caller to let go).
    public func stage(_ bytes: [UInt8], as path: String) throws(FileError) {
        precondition(!settled, "a committed or discarded set takes no more files")
        let folder = Files.directory(of: path)
        let temporary = Files.join(folder, Files.temporaryName(for: Files.lastComponent(path), inFolder: folder))
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Files.systemError(.write, path) }
        let failure: Int32? = bytes.withUnsafeBytes { buffer in
            if let code = Files.writeAll(buffer, to: descriptor) { return code }
            return fsync(descriptor) == 0 ? nil : errno
        }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw FileError(.write, path: path, reason: Files.describe(failure), code: failure)
        }
        staged.append((temporary, path))
    }

    /// Renames every staged file into place and syncs their folders. A rename that fails stops
    /// the commit: the files not yet renamed are removed, and the error names the ones already
    /// replaced.
    public func commit() throws(FileError) {
        precondition(!settled, "a set is committed once")
        settled = true
        var replaced: [String] = []
        for (index, file) in staged.enumerated() {
            guard rename(file.temporary, file.path) == 0 else {
                let code = errno
                for later in staged[index...] { unlink(later.temporary) }
                let already = replaced.isEmpty ? "" : "; already replaced: \(replaced.joined(separator: ", "))"
                throw FileError(.write, path: file.path, reason: Files.describe(code) + already, code: code)
            }
            replaced.append(file.path)
        }
        var folders: [String] = []
        for file in staged where !folders.contains(Files.directory(of: file.path)) {
            folders.append(Files.directory(of: file.path))
        }
        for folder in folders { try Files.syncDirectory(folder) }
    }

    /// Removes the staged files; every target stays as it was.
    public func discard() {
        guard !settled else { return }
        settled = true
        for file in staged { unlink(file.temporary) }
    }

    deinit { discard() }
}

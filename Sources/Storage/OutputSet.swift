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
/// replaces nothing: the staged files are removed. Two sets committed into one folder at once take
/// turns (`flock` on each folder, in name order), so their files are never mixed: the later set
/// is the one left whole (a set into a folder another process holds locked for long — a burn
/// test's report folder — waits for it). A run killed while staging leaves its temporary files; the
/// next set made `clearingLeftovers` that stages into that folder removes them
/// (`Files.removeAbandonedTemporaryFiles`, a listing of the folder: a command's outputs, not each
/// of a batch's thousands of files, each written alone; a writer of this machine is taken for
/// killed when its process has ended, and any file once it is a day old — another machine's, a
/// container's or host's sharing the folder). Known limit: a
/// crash or a failed rename among the renames — microseconds, after every byte is on the disk —
/// leaves the files renamed so far replaced, and `commit`'s error names them.
public final class OutputSet {
    private var staged: [(temporary: String, path: String)] = []
    /// Every folder staged into, in the order first used.
    private var folders: [String] = []
    private var settled = false
    private let clearingLeftovers: Bool

    /// An empty set; `clearingLeftovers`: each folder it stages into is cleared of what killed
    /// runs staged there.
    public init(clearingLeftovers: Bool = false) { self.clearingLeftovers = clearingLeftovers }

    /// The paths staged so far, in order.
    public var paths: [String] { staged.map(\.path) }

    /// Writes `bytes` whole beside `path`, to replace it at `commit`. On failure nothing is left
    /// of this file; the files staged before stay staged (for the caller to let go).
    public func stage(_ bytes: [UInt8], as path: String) throws(FileError) {
        precondition(!settled, "a committed or discarded set takes no more files")
        let folder = Files.directory(of: path)
        if !folders.contains(folder) {
            folders.append(folder)
            if clearingLeftovers { _ = Files.removeAbandonedTemporaryFiles(in: folder) }  // never a live run's
        }
        let temporary = try Files.writeTemporary(bytes, beside: path, mode: 0o644) { step, code in
            step == .create
                ? Files.systemError(.write, path, code: code)
                : FileError(.write, path: path, reason: Files.describe(code), code: code)
        }
        staged.append((temporary, path))
    }

    /// Renames every staged file into place and syncs their folders. A rename that fails stops
    /// the commit: the files not yet renamed are removed, and the error names the ones already
    /// replaced.
    public func commit() throws(FileError) {
        precondition(!settled, "a set is committed once")
        settled = true
        // A folder this process holds locked already (a burn test's report folder) is its own.
        let locks = folders.sorted().compactMap { folder -> Int32? in
            let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            if ExclusiveLock.isHeldHere(descriptor) {
                close(descriptor)
                return nil
            }
            var outcome = ExclusiveLock.take(descriptor)
            if outcome == .held { outcome = ExclusiveLock.wait(descriptor) }
            guard outcome == .taken else {
                close(descriptor)
                return nil
            }
            return descriptor
        }
        defer { for descriptor in locks { ExclusiveLock.release(descriptor) } }
        var replaced: [String] = []
        for (index, file) in staged.enumerated() {
            guard rename(file.temporary, file.path) == 0 else {
                let code = errno
                for later in staged[index...] { unlink(later.temporary) }
                let already = replaced.isEmpty ? "" : "; already replaced: \(replaced.joined(separator: ", "))"
                // Written and synced, then gone: removed by another program, or by a ccbeacon in
                // another container or on another host sharing the folder, which took its writer
                // for a killed one (process IDs say nothing across them).
                let reason =
                    code == ENOENT
                    ? "its new file, written beside it, was removed meanwhile by another program; run again"
                    : Files.describe(code)
                throw FileError(.write, path: file.path, reason: reason + already, code: code)
            }
            replaced.append(file.path)
        }
        for folder in folders {
            do { try Files.syncDirectory(folder) } catch {
                throw FileError(
                    .write, path: folder,
                    reason:
                        "\(replaced.count == 1 ? "the file was" : "the \(replaced.count) files were") replaced, but the folder could not be flushed to the disk (\(error.reason)); a power cut now could undo that",
                    code: error.code)
            }
        }
    }

    /// Removes the staged files; every target stays as it was.
    public func discard() {
        guard !settled else { return }
        settled = true
        for file in staged { unlink(file.temporary) }
    }

    deinit { discard() }
}

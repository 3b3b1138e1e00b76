#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The temporary files every write goes through: named, written and, when a writer was killed,
/// found and removed.
extension Files {
    /// A fresh temporary name for writing `name` into `folder`: hidden, with our marker, the
    /// writer's process ID, and its machine's token before eight random hex digits
    /// (`.<name>.ccbeacon-tmp.<pid>.<token><random>`). It stays within the folder's name limit: a
    /// name near it is shortened — by whole characters, from the end — never what
    /// `removeAbandonedTemporaryFiles` reads, so any name that can be written can be written
    /// atomically.
    package static func temporaryName(for name: String, inFolder folder: String, process: Int32 = getpid()) -> String {
        let random = LocalProcesses.hex8(UInt32.random(in: 0...UInt32.max))
        let suffix = "\(temporaryMarker)\(process).\(LocalProcesses.machineToken)\(random)"
        let budget = nameLimit(inFolder: folder) - 1 - suffix.utf8.count
        var kept = Substring(name)
        var size = kept.utf8.count
        // Counted as it is cut: a name of any length is shortened in one pass.
        while size > budget, let last = kept.last {
            size -= last.utf8.count
            kept = kept.dropLast()
        }
        return ".\(kept)\(suffix)"
    }

    /// How long a temporary file of a writer that cannot be judged (another machine's, an older
    /// ccbeacon's without the token) is left alone: no writer stages a file for a day.
    public static let temporaryLifetime = 86_400

    /// A step of writing a temporary file, for the caller's words when it fails.
    public enum TemporaryStep: Sendable {
        /// Creating it beside its target.
        case create
        /// Writing the bytes.
        case write
        /// Flushing them to the disk.
        case flush
    }

    /// A new temporary file beside `target` (`temporaryName`), written whole and flushed: the
    /// bytes, then `finish` on its descriptor (what must follow them: owner, mode, attributes),
    /// then `fsync`. On any failure it is removed, and `failed(step, errno)` (or `finish`'s error)
    /// is thrown. Returns its path, for the caller to rename over the target.
    static func writeTemporary(
        _ bytes: [UInt8], beside target: String, mode: mode_t, finish: (Int32) -> FileError? = { _ in nil },
        failed: (TemporaryStep, Int32) -> FileError
    ) throws(FileError) -> String {
        let folder = directory(of: target)
        let temporary = join(folder, temporaryName(for: lastComponent(target), inFolder: folder))
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw failed(.create, errno) }
        let failure: FileError? = bytes.withUnsafeBytes { buffer in
            if let code = writeAll(buffer, to: descriptor) { return failed(.write, code) }
            if let error = finish(descriptor) { return error }
            return fsync(descriptor) == 0 ? nil : failed(.flush, errno)
        }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw failure
        }
        return temporary
    }

    /// Removes the temporary files a killed writer left in `directory`, and returns their names.
    /// Only names ccbeacon gives count: `.NAME.ccbeacon-tmp.PID.` and this machine's token with 8
    /// random hex digits (`temporaryName`), or an older ccbeacon's 1–10 digits. A file of this
    /// machine goes once its process has ended, or once the process of that ID started more than an
    /// hour after the file was written (the ID given to another); a live writer's, never. Any other
    /// goes once a day old (mtime): a process ID of another host or container says nothing here.
    public static func removeAbandonedTemporaryFiles(in directory: String) -> [String] {
        var removed: [String] = []
        for name in (try? list(directory)) ?? [] {
            guard let (pid, token) = temporaryFileParts(name) else { continue }
            let path = join(directory, name)
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            let written = Double(status.st_mtim.tv_sec)
            let ended: Bool
            if token == LocalProcesses.machineToken, LocalProcesses.isKnown {
                ended =
                    LocalProcesses.hasEnded(pid) || (LocalProcesses.startTime(pid).map { $0 > written + 3600 } ?? false)
            } else {
                ended = Double(time(nil)) - written > Double(temporaryLifetime)
            }
            if ended, unlink(path) == 0 { removed.append(name) }
        }
        return removed
    }

    /// The writer's process ID and machine token (nil for an older ccbeacon's name) of a name
    /// `temporaryName` gives, or nil for any other name.
    static func temporaryFileParts(_ name: String) -> (pid: Int, token: String?)? {
        let bytes = Array(name.utf8)
        let marker = Array(temporaryMarker.utf8)
        guard bytes.first == UInt8(ascii: "."),
            let at = (1...max(1, bytes.count - marker.count)).last(where: { bytes[$0...].starts(with: marker) }),
            at > 1
        else { return nil }
        let rest = bytes[(at + marker.count)...].split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let digits: (ArraySlice<UInt8>) -> Bool = { !$0.isEmpty && $0.allSatisfy { (0x30...0x39).contains($0) } }
        let lowerHex: (UInt8) -> Bool = { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        guard rest.count == 2, digits(rest[0]), rest[0].count <= 10,
            let pid = Int(String(decoding: rest[0], as: UTF8.self))
        else { return nil }
        if rest[1].count == 16, rest[1].allSatisfy(lowerHex) {
            return (pid, String(decoding: rest[1].prefix(8), as: UTF8.self))
        }
        return digits(rest[1]) && rest[1].count <= 10 ? (pid, nil) : nil
    }
}

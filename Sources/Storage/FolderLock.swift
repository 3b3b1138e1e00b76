#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on a folder for one writer at a time: `flock` on a hidden lock file inside
/// it, taken by `ExclusiveLock`'s rule. The kernel drops the lock when the holder's descriptor closes — on `release()`, when the
/// lock is deinitialised, or when the process dies, even by `kill -9` — so a crash never leaves
/// a folder locked.
public final class FolderLock {
    /// The name of the lock file inside a locked folder.
    public static let fileName = ".ccbeacon.lock"

    /// The name of the lock file that guards the one file `name` rather than its whole folder
    /// (`.NAME.lock`, beside it).
    public static func name(guarding name: String) -> String { ".\(name).lock" }

    /// A lock that could not be taken.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Another process holds it (its process ID, when it wrote one).
        case held(directory: String, holder: Int32?)
        /// The lock file cannot be opened or locked.
        case file(FileError)

        /// Plain-words reason.
        public var description: String {
            switch self {
            case .held(let directory, let holder):
                return
                    "another ccbeacon\(holder.map { " (process \($0))" } ?? "") is writing into '\(directory)'"
            case .file(let error): return error.description
            }
        }
    }

    private var descriptor: Int32
    /// The lock file.
    let path: String
    /// Whether taking the lock made its file (the folder had none).
    public let createdFile: Bool

    private init(descriptor: Int32, path: String, created: Bool) {
        (self.descriptor, self.path, self.createdFile) = (descriptor, path, created)
    }

    deinit { release() }

    /// Takes the lock on `directory` (which must exist). When another process holds it:
    /// with `wait`, `waiting(holder)` is called once and the call blocks until the lock is free;
    /// without, `Failure.held` is thrown at once.
    /// `name` is the lock file's name inside `directory` (another name locks something else in
    /// the same folder, such as one ledger).
    public static func acquire(
        _ directory: String, name: String = fileName, wait: Bool, waiting: (Int32?) -> Void = { _ in }
    ) throws(Failure) -> FolderLock {
        let path = Files.join(directory, name)
        var toldWaiting = false
        while true {
            var created = true
            var descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
            if descriptor < 0, errno == EEXIST {
                created = false
                descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
                if descriptor < 0, errno == ENOENT { continue }  // removed by its holder meanwhile
            }
            guard descriptor >= 0 else { throw .file(Files.systemError(.write, path)) }
            var outcome = ExclusiveLock.take(descriptor)
            if outcome == .held {
                let holder = holderID(descriptor)
                guard wait else {
                    close(descriptor)
                    throw .held(directory: directory, holder: holder)
                }
                if !toldWaiting { waiting(holder) }
                toldWaiting = true
                outcome = ExclusiveLock.wait(descriptor)
            }
            if case .failed(let code) = outcome {
                close(descriptor)
                throw .file(FileError(.write, path: path, reason: Files.describe(code), code: code))
            }
            // A holder that removed the file as it let go (`releaseRemovingFile`) left this lock
            // on a file the folder no longer holds: the lock is the one on the file there now.
            guard let held = PathIdentity.fileID(descriptor: descriptor), let now = PathIdentity.fileID(path),
                held == now
            else {
                ExclusiveLock.release(descriptor)
                continue
            }
            return locked(descriptor, path: path, created: created)
        }
    }

    /// The lock on `descriptor`, taken: the file says who holds it, for the message a waiting
    /// process prints.
    private static func locked(_ descriptor: Int32, path: String, created: Bool) -> FolderLock {
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(descriptor, 0) == 0 {
            _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return FolderLock(descriptor: descriptor, path: path, created: created)
    }

    /// Releases the lock (idempotent).
    public func release() {
        guard descriptor >= 0 else { return }
        ExclusiveLock.release(descriptor)
        descriptor = -1
    }

    /// Releases the lock and removes its file, which this lock made (`createdFile`): for a
    /// command that leaves the folder as it found it. Another process waiting for the lock takes
    /// it on the file made next (`acquire` checks the file is still there).
    public func releaseRemovingFile() {
        guard descriptor >= 0 else { return }
        if createdFile { unlink(path) }
        release()
    }

    /// The process ID written in the lock file, if any.
    static func holderID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<count], as: UTF8.self).filter(\.isNumber))
    }
}

/// Where a path really leads, to tell whether two paths name one file.
public enum PathIdentity {
    /// The device and inode of the file `path` leads to (following symbolic links), or `nil`
    /// when there is none.
    public static func fileID(_ path: String) -> (device: UInt64, inode: UInt64)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// The device and inode of the file open at `descriptor`, or `nil` when it cannot be told.
    public static func fileID(descriptor: Int32) -> (device: UInt64, inode: UInt64)? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// `path` with symbolic links, `.` and `..` resolved; for a file that does not exist yet, its
    /// folder resolved and the name appended. Falls back to the path as given.
    public static func resolved(_ path: String) -> String {
        if let full = realPath(path) { return full }
        let name = Files.lastComponent(path)
        guard let folder = realPath(Files.directory(of: path)) else { return path }
        return Files.join(folder, name)
    }

    /// True when writing `output` would replace the file at `input`: the same resolved path, or
    /// the same device and inode (a hard link, a bind mount, a symlinked folder).
    public static func same(_ output: String, _ input: String) -> Bool {
        if resolved(output) == resolved(input) { return true }
        guard let a = fileID(output), let b = fileID(input) else { return false }
        return a == b
    }

    static func realPath(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}

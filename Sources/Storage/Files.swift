import CFileAttributes
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Our own error code for "not a regular file" (outside errno's range; POSIX has no EFTYPE).
private let EFTYPE_CCBEACON: Int32 = 10_001
/// Our own error code for "larger than `Files.maximumReadSize`" (EFBIG means something else).
private let ETOOLARGE_CCBEACON: Int32 = 10_002

/// A file-system operation that failed, with the path and the system's reason.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done.
    public enum Operation: String, Sendable {
        case read, write, list, create
    }

    /// What was being done.
    public var operation: Operation
    /// The path concerned.
    public var path: String
    /// The system's reason (`strerror`), or our own.
    public var reason: String
    /// `errno`, when the system gave one.
    public var code: Int32

    /// Creates an error.
    public init(_ operation: Operation, path: String, reason: String, code: Int32 = 0) {
        self.operation = operation
        self.path = path
        self.reason = reason
        self.code = code
    }

    /// True when the path does not exist.
    public var isMissing: Bool { code == ENOENT }

    /// True when the path is not a regular file (a FIFO, a directory, a device).
    public var isNotRegularFile: Bool { code == Files.notRegularFile }

    /// True when the file is larger than `Files.maximumReadSize`.
    public var isTooLarge: Bool { code == Files.tooLarge }

    /// True when the disk, or the user's quota on it, is full.
    public var isDiskFull: Bool { code == ENOSPC || code == EDQUOT }

    /// True when the file could not be held in memory.
    public var isOutOfMemory: Bool { code == ENOMEM }

    /// `cannot read 'x': no such file`.
    public var description: String { "cannot \(operation.rawValue) '\(path)': \(reason)" }
}

/// File reading, atomic writing and directory listing over POSIX calls. (Plain POSIX keeps full
/// Foundation out of the binary, which would triple its start-up time.)
public enum Files {
    /// The largest file `read` takes: 256 MiB. The largest real inputs are far smaller — a HEX of
    /// a 256 KiB flash is about 720 KB, a list of 100,000 stations about 10 MB and the
    /// `stations.json` of such a batch about 40 MB — and reading and parsing a file holds several
    /// times its size in memory, so a larger file is not an input that was meant (a disk image, a
    /// sparse file) and is refused from its size alone.
    public static let maximumReadSize = 256 << 20

    /// The whole content of a regular file. Anything else (a FIFO, a directory, a device, a
    /// socket) is refused before a byte is read: the file is opened without blocking, so a FIFO
    /// with no writer cannot hang the caller, and checked on the open descriptor, so it cannot be
    /// swapped between the check and the read. A file larger than `maximumReadSize` is refused
    /// before its buffer is allocated, and so is one whose buffer the memory limit cannot hold.
    public static func read(_ path: String) throws(FileError) -> [UInt8] {
        let (descriptor, size) = try openRegularFile(path)
        defer { close(descriptor) }
        guard size <= maximumReadSize else { throw tooLargeError(path, size: size) }
        // Swift aborts the process when an array cannot be allocated; ask malloc first, so that a
        // memory limit (`ulimit -v`) is an error. (Only a probe: memory taken by another thread
        // in between could still make the array fail, but nothing else here allocates that much.)
        guard let probe = malloc(max(size, 1)) else {
            throw FileError(
                .read, path: path, reason: "not enough memory to read its \(describeSize(size))", code: ENOMEM)
        }
        free(probe)
        // Read straight into the array's storage, never zero-filled first.
        var failure: FileError?
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let (filled, code) = readFully(descriptor, into: buffer)
            if let code { failure = systemError(.read, path, code: code) }
            initialized = filled
        }
        if let failure { throw failure }
        // The buffer has the size fstat gave and is never grown to look for more: growing copies
        // it, so a large file would briefly be held twice. Only a file that grew since fstat (or
        // says it is empty, as /proc files do) is read on, through a chunk of its own, and no
        // further than the limit.
        guard bytes.count == size else { return bytes }
        // Usually the end: one byte asked for, none there, no chunk allocated.
        var next: UInt8 = 0
        var probed = Glibc.read(descriptor, &next, 1)
        while probed < 0, errno == EINTR { probed = Glibc.read(descriptor, &next, 1) }
        if probed < 0 { throw systemError(.read, path) }
        if probed == 0 { return bytes }
        guard bytes.count + 1 <= maximumReadSize else { throw tooLargeError(path, size: bytes.count + 1) }
        bytes.append(next)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw systemError(.read, path)
            }
            if count == 0 { break }
            guard bytes.count + count <= maximumReadSize else { throw tooLargeError(path, size: bytes.count + count) }
            bytes.append(contentsOf: chunk[..<count])
        }
        return bytes
    }

    /// The first `limit` bytes of the regular file at `path` (all of a shorter one), or nil where
    /// there is no regular file there or it cannot be read: `read`'s rules, for a look at a
    /// file's start.
    public static func readStart(_ path: String, limit: Int) -> [UInt8]? {
        guard let (descriptor, _) = try? openRegularFile(path) else { return nil }
        defer { close(descriptor) }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: limit) { buffer, initialized in
            let (filled, code) = readFully(descriptor, into: buffer)
            failed = code != nil
            initialized = filled
        }
        return failed ? nil : bytes
    }

    /// `path` opened to read without blocking (a FIFO with no writer cannot hang the caller), and
    /// its size, if it is a regular file — checked on the open descriptor, so it cannot be swapped
    /// between the check and the read.
    static func openRegularFile(_ path: String) throws(FileError) -> (descriptor: Int32, size: Int) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw systemError(.read, path) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = systemError(.read, path)
            close(descriptor)
            throw error
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw FileError(
                .read, path: path, reason: "it is \(kindDescription(status.st_mode)), not a regular file",
                code: notRegularFile)
        }
        return (descriptor, Int(status.st_size))
    }

    /// Reads from `descriptor` until `buffer` is full or the file ends: how many bytes came, and
    /// the error code of a read that failed.
    static func readFully(_ descriptor: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>) -> (
        filled: Int, failure: Int32?
    ) {
        guard let base = buffer.baseAddress else { return (0, nil) }
        var filled = 0
        while filled < buffer.count {
            let count = Glibc.read(descriptor, base + filled, buffer.count - filled)
            if count < 0 {
                if errno == EINTR { continue }
                return (filled, errno)
            }
            if count == 0 { break }
            filled += count
        }
        return (filled, nil)
    }

    /// `it is 64 GiB, larger than the 256 MiB ccbeacon reads`.
    static func tooLargeError(_ path: String, size: Int) -> FileError {
        // Rounded, a size just over the limit would read as the limit itself.
        let shown =
            describeSize(size) == describeSize(maximumReadSize)
            ? "\(size) bytes" : describeSize(size)
        return FileError(
            .read, path: path,
            reason: "it is \(shown), larger than the \(describeSize(maximumReadSize)) ccbeacon reads",
            code: tooLarge)
    }

    /// A size for messages in binary units, rounded down (`1023 bytes`, `1.5 KiB`, `64 GiB`).
    public static func describeSize(_ bytes: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard bytes >= 1024 else { return "\(bytes) bytes" }
        var unit = 0
        var scale = 1024
        while unit < units.count - 1, bytes >= scale * 1024 {
            scale *= 1024
            unit += 1
        }
        let tenths = bytes / (scale / 1024) * 10 / 1024  // never overflows, even for an exabyte
        let whole = tenths / 10
        return whole >= 10 || tenths % 10 == 0 ? "\(whole) \(units[unit])" : "\(whole).\(tenths % 10) \(units[unit])"
    }

    /// `errno`-style code of `FileError` for an input that is not a regular file.
    public static let notRegularFile: Int32 = EFTYPE_CCBEACON

    /// `errno`-style code of `FileError` for an input larger than `maximumReadSize`.
    public static let tooLarge: Int32 = ETOOLARGE_CCBEACON

    /// Writes `bytes` to `path` atomically and durably (an `OutputSet` of one file): a temporary
    /// file in the same directory (named `temporaryName`, so a later run can recognise leftovers),
    /// written, `fsync`ed, renamed over the target, then the directory `fsync`ed so the rename
    /// itself survives a power cut. A crash leaves either the old file or the new one, never a mix.
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(FileError) {
        let output = OutputSet()
        try output.stage(bytes, as: path)
        try output.commit()
    }

    /// Copies every extended attribute of `source` to `destination` (ACLs are the
    /// `system.posix_acl_*` ones); an attribute that cannot be read or set is an error, since the
    /// rewritten file would not be the same file to its users.
    static func copyAttributes(from source: Int32, to destination: Int32, path: String) -> FileError? {
        func names(of descriptor: Int32) -> [[CChar]]? {
            let size = flistxattr(descriptor, nil, 0)
            if size < 0 { return errno == ENOTSUP ? [] : nil }  // no extended attributes here
            guard size > 0 else { return [] }
            var buffer = [CChar](repeating: 0, count: size)
            let listed = flistxattr(descriptor, &buffer, size)
            guard listed >= 0 else { return nil }
            // NUL-separated names, kept as bytes: a name need not be UTF-8.
            return buffer[..<listed].split(separator: 0).map { Array($0) + [0] }
        }
        func failure(_ what: String) -> FileError {
            FileError(.write, path: path, reason: "\(what) (\(describe(errno)))", code: errno)
        }
        guard let wanted = names(of: source) else { return failure("its extended attributes cannot be listed") }
        // What the new file got that the list has not — a default ACL its folder passes on —
        // goes: it would change who may read or write the list.
        guard let inherited = names(of: destination) else {
            return failure("the new file's extended attributes cannot be listed")
        }
        func text(_ name: [CChar]) -> String {
            String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        for name in inherited where !wanted.contains(name) {
            guard fremovexattr(destination, name) == 0 else {
                return failure("the attribute \(text(name)) its folder gives new files cannot be removed")
            }
        }
        for name in wanted {
            let length = fgetxattr(source, name, nil, 0)
            var value = [UInt8](repeating: 0, count: max(length, 0))
            let got = length < 0 ? -1 : fgetxattr(source, name, &value, value.count)
            guard got >= 0, fsetxattr(destination, name, value, got, 0) == 0 else {
                return failure("its extended attribute \(text(name)) cannot be kept; rewriting it would drop it")
            }
        }
        return nil
    }

    /// The Linux inode flags that forbid replacing a file or changing a folder's entries
    /// (FS_IOC_GETFLAGS: FS_IMMUTABLE_FL 0x10, FS_APPEND_FL 0x20); 0 where the file system has none.
    static func protectionFlags(_ path: String) -> Int {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var flags = 0
        guard ioctl(descriptor, UInt(0x8008_6601), &flags) == 0 else { return 0 }
        return flags & 0x30
    }

    /// Whether `rewrite` may replace the file `path`: a regular file (through symbolic links),
    /// with one name, this user's (or any, as root), writable and not read-only, neither it nor
    /// its folder immutable or append-only, in a folder it may write. Returns the file's real path
    /// and what it keeps; refuses with the reason.
    public static func checkRewritable(_ path: String) throws(FileError) -> RewritableFile {
        guard let resolved = realpath(path, nil) else { throw systemError(.write, path) }
        let target = String(cString: resolved)
        free(resolved)
        var info = stat()
        guard stat(target, &info) == 0 else { throw systemError(.write, path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw FileError(.write, path: path, reason: "not a regular file", code: notRegularFile)
        }
        guard info.st_nlink == 1 else {
            throw FileError(
                .write, path: path,
                reason:
                    "it has \(info.st_nlink) names (hard links); rewriting it under one would part it from the others")
        }
        guard info.st_mode & 0o222 != 0 else {
            throw FileError(
                .write, path: path,
                reason:
                    "it is read-only (mode \(String(info.st_mode & 0o7777, radix: 8))); make it writable to change it")
        }
        guard geteuid() == 0 || info.st_uid == geteuid() else {
            throw FileError(
                .write, path: path,
                reason:
                    "it belongs to another user (uid \(info.st_uid)); a rewritten file would be yours, so only its owner or root may rewrite it"
            )
        }
        guard access(target, W_OK) == 0 else {
            let code = errno
            throw FileError(.write, path: path, reason: "it may not be written: \(describe(code))", code: code)
        }
        let folder = directory(of: target)
        guard access(folder, W_OK) == 0 else {
            let code = errno
            throw FileError(
                .write, path: path,
                reason:
                    "its folder '\(folder)' may not be written (\(describe(code))), and the new file goes there first",
                code: code)
        }
        for (what, name) in [("it", target), ("its folder", folder)] where protectionFlags(name) != 0 {
            throw FileError(
                .write, path: path, reason: "\(what) is immutable or append-only (chattr); it cannot be replaced")
        }
        return RewritableFile(
            target: target, mode: UInt32(info.st_mode & 0o7777), owner: info.st_uid, group: info.st_gid)
    }

    /// A file `rewrite` may replace: where it really is, and what it keeps.
    public struct RewritableFile: Sendable, Equatable {
        /// The real path (symbolic links resolved).
        public var target: String
        /// Permission bits.
        public var mode: UInt32
        /// Owner ID.
        public var owner: UInt32
        /// Group ID.
        public var group: UInt32
    }

    /// Writes all of `buffer` to `descriptor` (again after an interrupted or short write), at
    /// the descriptor's offset or, given `offset`, at that offset (`pwrite`, which leaves the
    /// descriptor's own); returns `errno` when a write fails, `nil` when all is written.
    public static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, at offset: Int64? = nil)
        -> Int32?
    {
        var written = 0
        while written < buffer.count {
            let start = buffer.baseAddress! + written
            let result =
                if let offset {
                    pwrite(descriptor, start, buffer.count - written, off_t(offset) + off_t(written))
                } else {
                    write(descriptor, start, buffer.count - written)
                }
            if result < 0 {
                if errno == EINTR { continue }
                return errno
            }
            // A write that takes nothing would loop for ever: the device is full in all but name.
            if result == 0 { return ENOSPC }
            written += result
        }
        return nil
    }

    /// The marker in the names of our temporary files (`temporaryName`).
    public static let temporaryMarker = ".ccbeacon-tmp."

    /// The longest file name, in bytes, when the folder cannot tell (NAME_MAX of Linux's file
    /// systems: ext4, XFS, Btrfs, tmpfs).
    static let nameMax = 255
    /// The longest path the system takes, in bytes, with its terminating NUL (Linux's PATH_MAX).
    static let pathMax = 4096

    /// The longest file name `folder` takes, in bytes: its file system's NAME_MAX, or `nameMax`
    /// where the folder does not exist yet or does not say.
    static func nameLimit(inFolder folder: String) -> Int {
        let limit = pathconf(folder, Int32(_PC_NAME_MAX))
        return limit > 0 ? limit : nameMax
    }

    /// The bytes a path keeps free for the temporary file written beside it
    /// (`temporaryName`, the name cut to fit): at most 39 more than the
    /// file's own path.
    public static let temporaryRoom = 40

    /// Why the system would refuse to create a file at `path`, or `nil`: a folder's name of more
    /// than `nameMax` bytes, a file name longer than its folder takes less `nameRoom` (room for the
    /// names of files kept beside it), or a path that leaves less than `room` bytes of PATH_MAX for
    /// the temporary file beside it. Said before anything is written, so that the last of several
    /// outputs cannot fail on its name after the first were written.
    public static func lengthProblem(_ path: String, room: Int = temporaryRoom, nameRoom: Int = 0) -> String? {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        if let long = components.dropLast().first(where: { $0.utf8.count > nameMax }) {
            return "a folder's name in it is \(long.utf8.count) bytes long, and names may have at most \(nameMax)"
        }
        if path.utf8.count + room >= pathMax {
            return
                "the path is \(path.utf8.count) bytes long, and a path may have at most \(pathMax - 1 - room) (the rest is room for the files written beside it)"
        }
        let (folder, name) = (directory(of: path), lastComponent(path))
        let limit = nameLimit(inFolder: folder) - nameRoom
        guard name.utf8.count > limit else { return nil }
        return "its name is \(name.utf8.count) bytes long, and the folder takes names of at most \(limit)"
            + (nameRoom > 0 ? " here (the rest is room for the files kept beside it)" : "")
    }

    /// `fsync`s a directory, so that renames and removals in it are durable.
    public static func syncDirectory(_ directory: String) throws(FileError) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw systemError(.write, directory) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw systemError(.write, directory) }
    }

    /// Renames `from` to `to` (replacing `to`) and syncs the directory; a missing `from` is fine.
    public static func renameDurably(_ from: String, to: String) throws(FileError) {
        if rename(from, to) != 0 {
            guard errno == ENOENT else { throw systemError(.write, to) }
            return
        }
        try syncDirectory(directory(of: to))
    }

    /// Removes `path` and syncs its directory; a missing file is fine.
    public static func removeDurably(_ path: String) throws(FileError) {
        if unlink(path) != 0 {
            guard errno == ENOENT else { throw systemError(.write, path) }
            return
        }
        try syncDirectory(directory(of: path))
    }

    /// A word for a file type (`a FIFO`, `a directory`), for messages.
    static func kindDescription(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "a regular file"
        }
    }

    /// Number of processors online (at least 1).
    public static func processorCount() -> Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Names in a directory (without `.` and `..`), sorted.
    public static func list(_ path: String) throws(FileError) -> [String] {
        guard let handle = opendir(path) else { throw systemError(.list, path) }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// True for an existing directory.
    public static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// True when something (of any type) is at `path`; a dangling symbolic link counts.
    public static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// Where a symbolic link at `path` that does not lead to a folder ends, in words, and whether
    /// making a folder there mends it: `a link to 'B', where nothing is` (the last link of a chain
    /// followed, its target taken from the link's folder), `a link to 'B', which is not a folder`,
    /// `a link that leads in a circle, or through more than 40 links`, or `a link to 'B', which
    /// cannot be reached (why)`. Nil
    /// where `path` is no link, or leads to a folder.
    public static func linkEnd(_ path: String) -> (text: String, missing: Bool)? {
        var status = stat()
        // `link/` names what the link leads to: the link itself is looked at.
        let path = withoutTrailingSeparators(path)
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return nil }
        var current = path
        // The system follows at most 40 links in one path (MAXSYMLINKS).
        for _ in 0..<40 {
            guard let target = linkTarget(current) else { break }
            let next = target.hasPrefix("/") ? target : join(directory(of: current), target)
            guard lstat(next, &status) == 0 else {
                let code = errno
                return code == ENOENT
                    ? ("a link to '\(next)', where nothing is", true)
                    : ("a link to '\(next)', which cannot be reached (\(describe(code)))", false)
            }
            if status.st_mode & S_IFMT != S_IFLNK {
                return status.st_mode & S_IFMT == S_IFDIR ? nil : ("a link to '\(next)', which is not a folder", false)
            }
            current = next
        }
        return ("a link that leads in a circle, or through more than 40 links", false)
    }

    /// `path`, or its nearest ancestor, whichever exists first (at the last `.` or `/`): what a
    /// folder to be created at `path` will be made in.
    public static func nearestExisting(_ path: String) -> String {
        var path = withoutTrailingSeparators(path)
        while !exists(path), directory(of: path) != path { path = directory(of: path) }
        return path
    }

    /// True for an existing directory this process may create files in.
    public static func isWritableDirectory(_ path: String) -> Bool {
        isDirectory(path) && access(path, W_OK | X_OK) == 0
    }

    /// What is at `path` when it is something other than a regular file (`a directory`,
    /// `a FIFO`, …, following symbolic links); `nil` for a regular file or nothing at all.
    public static func nonFileKind(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) != S_IFREG else { return nil }
        return kindDescription(status.st_mode)
    }

    /// True for an existing regular file.
    public static func isFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    /// Creates a directory and its missing parents.
    public static func createDirectory(_ path: String) throws(FileError) {
        if isDirectory(path) { return }
        let parent = directory(of: path)
        if parent != path, parent != ".", parent != "/", !isDirectory(parent) { try createDirectory(parent) }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw systemError(.create, path) }
    }

    /// Removes a file; missing files are fine.
    public static func remove(_ path: String) {
        unlink(path)
    }

    /// `path` without what may follow its last real component — slashes and `.` (`dir/`,
    /// `dir/.` and `dir/./` are `dir`; `/` and `.` stay): either would make the system follow a
    /// link at `dir` that a check of the name (`lstat`, `O_NOFOLLOW`) refuses.
    public static func withoutTrailingSeparators(_ path: String) -> String {
        var trimmed = Substring(path)
        while true {
            if trimmed.count > 1, trimmed.hasSuffix("/") {
                trimmed = trimmed.dropLast()
            } else if trimmed.count > 2, trimmed.hasSuffix("/.") {
                trimmed = trimmed.dropLast(2)
            } else {
                return String(trimmed)
            }
        }
    }

    /// The directory part of a path (`.` when there is none).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last path component.
    public static func lastComponent(_ path: String) -> String {
        String(path.split(separator: "/", omittingEmptySubsequences: false).last ?? Substring(path))
    }

    /// The extension of the last path component, without the dot (empty when there is none).
    public static func pathExtension(_ path: String) -> String {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// `a/b` joined, without doubling slashes.
    public static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The path of the running executable (Linux `/proc/self/exe`), or `nil`.
    public static func executablePath() -> String? { linkTarget("/proc/self/exe") }

    /// What the symbolic link at `path` holds (`/proc/self/exe`, `/proc/self/fd/N`), or `nil`.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBytes { readlink(path, $0.baseAddress!, $0.count - 1) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// The value of an environment variable, or `nil` when unset or empty.
    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    static func systemError(_ operation: FileError.Operation, _ path: String, code: Int32 = errno) -> FileError {
        FileError(
            operation, path: path, reason: code == ENOENT ? "no such file or directory" : describe(code), code: code)
    }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// A folder held open by its descriptor, so that what is written "into it" goes into the folder
/// that was checked even if its name is swapped for a link or another folder meanwhile: `path`
/// (`/proc/self/fd/N`) leads to the open folder itself, whatever its name now leads to. Linux
/// only (it needs /proc), as the rest of the tool.
public final class PinnedDirectory: Sendable {
    /// A path that leads into the pinned folder (`Files.join(path, name)` names a file in it).
    public let path: String
    private let descriptor: Int32
    /// Whether `lockExclusively` took the folder's lock.
    private let locked = Mutex(false)

    /// Opens the folder at `folder`, never through a link (a link there is refused with ELOOP,
    /// a file with ENOTDIR).
    public init(_ folder: String) throws(FileError) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw Files.systemError(.list, folder) }
        self.descriptor = descriptor
        path = "/proc/self/fd/\(descriptor)"
    }

    /// Takes the folder's exclusive lock (`flock` by `ExclusiveLock`'s rule, held until this is
    /// released), without waiting: false when another process holds it.
    public func lockExclusively() -> Bool {
        locked.withLock { locked in
            locked = locked || ExclusiveLock.take(descriptor) == .taken
            return locked
        }
    }

    deinit {
        if locked.withLock({ $0 }) { ExclusiveLock.release(descriptor) } else { close(descriptor) }
    }
}

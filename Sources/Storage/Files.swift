#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// glibc's `syncfs(2)`: the Glibc module hides it behind `_GNU_SOURCE`, so it is bound by name.
@_silgen_name("syncfs")
private func linuxSyncfs(_ descriptor: Int32) -> Int32

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

    /// `cannot read 'x': no such file`.
    public var description: String { "cannot \(operation.rawValue) '\(path)': \(reason)" }
}

/// File reading, atomic writing and directory listing over POSIX calls. (Plain POSIX keeps full
/// Foundation out of the binary, which would triple its start-up time.)
public enum Files {
    /// The whole content of a regular file.
    public static func read(_ path: String) throws(FileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw systemError(.read, path) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw systemError(.read, path) }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw FileError(.read, path: path, reason: "not a regular file", code: EISDIR)
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while true {
            if filled == bytes.count { bytes.append(contentsOf: [UInt8](repeating: 0, count: 65536)) }
            let count = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw systemError(.read, path)
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed to disk
    /// (unless `flush` is false, for callers that sync the whole file system once at the end), then
    /// renamed over the target, so a crash leaves either the old file or the new one.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, flush: Bool = true) throws(FileError) {
        let temporary =
            "\(directory(of: path))/.\(lastComponent(path)).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw systemError(.write, path) }
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
            return !flush || fsync(descriptor) == 0 ? nil : errno
        }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw FileError(.write, path: path, reason: describe(failure), code: failure)
        }
        guard rename(temporary, path) == 0 else {
            let error = systemError(.write, path)
            unlink(temporary)
            throw error
        }
    }

    /// Flushes every written file of the file system holding `directory` to disk, and the directory
    /// itself (so renames in it are durable).
    public static func syncFileSystem(containing directory: String) throws(FileError) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw systemError(.write, directory) }
        defer { close(descriptor) }
        guard linuxSyncfs(descriptor) == 0, fsync(descriptor) == 0 else { throw systemError(.write, directory) }
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
    public static func executablePath() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { readlink("/proc/self/exe", $0.baseAddress!, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// The value of an environment variable, or `nil` when unset or empty.
    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    static func systemError(_ operation: FileError.Operation, _ path: String) -> FileError {
        let code = errno
        return FileError(
            operation, path: path, reason: code == ENOENT ? "no such file or directory" : describe(code), code: code)
    }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}

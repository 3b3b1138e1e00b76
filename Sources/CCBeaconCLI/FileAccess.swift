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
        switch FileAccess.pathExtension(path).lowercased() {
        case "hex", "ihx", "ihex": return .hex
        case "bin": return .bin
        default:
            throw .usage("cannot tell the format of \(role) '\(path)' from its extension; use .hex (Intel HEX) or .bin")
        }
    }
}

/// File reading and atomic writing over POSIX calls, with errors a user can act on. (Plain POSIX
/// keeps full Foundation out of the binary, which would triple its start-up time.)
enum FileAccess {
    static func read(_ path: String) throws(CommandFailure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            let reason = errno
            throw CommandFailure(
                .failure, "cannot read '\(path)': \(reason == ENOENT ? "no such file" : describe(reason))",
                hint: reason == ENOENT ? "check the path" : "check that it is a readable file")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw CommandFailure(
                .failure, "cannot read '\(path)': not a regular file", hint: "give a file, not a directory")
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
                throw CommandFailure(.failure, "cannot read '\(path)': \(describe(errno))")
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed to disk,
    /// then renamed over the target, so a crash leaves either the old file or the new one.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(CommandFailure) {
        let directory = directoryPart(path)
        let temporary = "\(directory)/.\(lastComponent(path)).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else {
            throw CommandFailure(
                .failure, "cannot write '\(path)': \(describe(errno))",
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
            throw CommandFailure(.failure, "cannot write '\(path)': \(describe(failure))")
        }
        guard rename(temporary, path) == 0 else {
            let reason = describe(errno)
            unlink(temporary)
            throw CommandFailure(.failure, "cannot write '\(path)': \(reason)")
        }
    }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func lastComponent(_ path: String) -> Substring {
        path.split(separator: "/", omittingEmptySubsequences: false).last ?? Substring(path)
    }

    static func directoryPart(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func pathExtension(_ path: String) -> Substring {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...]
    }
}

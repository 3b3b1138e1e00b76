import CCDebugger
import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// The file `--trace FILE` writes: a new file, or a pcap file an earlier trace left there (it is
/// replaced) — never anything else (a list, a ledger, an image given by mistake) and never
/// through a link. Records are written as they happen (`USBTrace`), so a command that is killed
/// leaves whole records up to that moment.
final class TraceFile {
    /// The trace the debuggers record into.
    let trace: USBTrace
    /// Where it goes.
    let path: String
    private let descriptor: Int32

    /// Checks `path` and opens it for a new trace (the pcap header is written at once).
    init(path: String) throws(CommandFailure) {
        guard !path.isEmpty else { throw .usage("--trace needs a file name") }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw .usage(
                    "--trace \(path) is not a regular file (a link, a folder or a device); give a new file, or a trace ccbeacon wrote"
                )
            }
            if info.st_size > 0, !Self.holdsATrace(path) {
                throw .usage(
                    "--trace \(path) is a file that does not hold a USB trace; it would be replaced, so give a new file or a trace ccbeacon wrote"
                )
            }
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else {
            throw CommandFailure(.failure, "cannot write the trace \(path): \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        self.path = path
        trace = USBTrace { bytes in TraceFile.writeAll(bytes, to: descriptor) }
    }

    deinit { close(descriptor) }

    /// Whether the file starts as a trace does: the pcap magic (either byte order) and link type
    /// 220 (usbmon) — what `USBTrace` and Linux's own capture write.
    static func holdsATrace(_ path: String) -> Bool {
        let file = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard file >= 0 else { return false }
        defer { close(file) }
        var head = [UInt8](repeating: 0, count: 24)
        guard read(file, &head, head.count) == head.count else { return false }
        if head[0..<4] == [0xD4, 0xC3, 0xB2, 0xA1] { return head[20..<24] == [220, 0, 0, 0] }
        if head[0..<4] == [0xA1, 0xB2, 0xC3, 0xD4] { return head[20..<24] == [0, 0, 0, 220] }
        return false
    }

    /// Writes all of `bytes` (`Files.writeAll`); nil, or why it could not.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> String? {
        bytes.withUnsafeBytes { Files.writeAll($0, to: descriptor) }.map { String(cString: strerror($0)) }
    }
}

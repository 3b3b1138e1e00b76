import CCBeaconCLI
import CCDebuggerUSB
import CommandLineKit
import HCISocket

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes all of `text` to a file descriptor (unbuffered, so stdout and stderr stay in order);
/// a write that fails or takes no bytes ends it with the system's reason.
func writeAll(_ text: String, to descriptor: Int32) throws(OutputError) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0, errno == EINTR { continue }
        if written < 0 { throw OutputError(reason: String(cString: strerror(errno))) }
        if written == 0 { throw OutputError(reason: "the write took no bytes") }
        offset += written
    }
    bytes.removeAll()
}

// A standard descriptor the caller closed (`>&-`) would be handed to the next file we open, and a
// result meant for stdout would land in it. Hold each closed one with /dev/null opened read-only:
// reads see the end of input, and writes still fail with EBADF, so a closed stdout is reported.
for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
    _ = open("/dev/null", O_RDONLY | O_CLOEXEC)
}

// A file-size limit (`ulimit -f`) would kill the process mid-burn with SIGXFSZ, the chip half
// written and nothing said: ignored, a write past the limit fails with EFBIG and is reported as
// any failed write is (a ledger's transaction rolls back, a trace stops on a whole record).
signal(SIGXFSZ, SIG_IGN)

let console = Console(
    writingOutput: { text throws(OutputError) in try writeAll(text, to: 1) },
    diagnostics: { text in try? writeAll(text, to: 2) }, diagnosticsIsTerminal: isatty(2) == 1,
    outputIsTerminal: isatty(1) == 1)
// libusb starts when a command first needs a debugger.
exit(
    CommandLineTool.run(
        Array(CommandLine.arguments.dropFirst()), console: console, debuggers: LazyLibUSBProvider(),
        radios: HCISocketProvider()))

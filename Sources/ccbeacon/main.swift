import CCBeaconCLI
import CCDebuggerUSB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes all of `text` to a file descriptor (unbuffered, so stdout and stderr stay in order).
func writeAll(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0, errno == EINTR { continue }
        if written <= 0 { return }
        offset += written
    }
    bytes.removeAll()
}

let console = Console(
    output: { writeAll($0, to: 1) }, diagnostics: { writeAll($0, to: 2) }, diagnosticsIsTerminal: isatty(2) == 1)
// libusb starts when a command first needs a debugger.
exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst()), console: console, debuggers: LazyLibUSBProvider()))

public import Foundation

/// The executables `swift build` put beside the test bundle (ccbeacon, cc-debugger-emulator), for
/// tests that must run the real program as its own process: to kill it, to run two at once, or to
/// give it a FIFO that would hang a test in process.
public enum BuiltTools {
    /// The build folder (`.build/debug`).
    public static let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent()
    /// The ccbeacon executable.
    public static let ccbeacon = directory.appendingPathComponent("ccbeacon").path
    /// The cc-debugger-emulator executable.
    public static let emulator = directory.appendingPathComponent("cc-debugger-emulator").path

    /// True when ccbeacon was built (`swift build --build-tests` builds it).
    public static var ccbeaconAvailable: Bool { FileManager.default.isExecutableFile(atPath: ccbeacon) }

    /// Runs ccbeacon `arguments` in `directory` under bash's `ulimit` `limits` (`-f 10`: no file
    /// written past 10 KiB, the write failing with EFBIG as SIGXFSZ is ignored; `-t 20`: 20 s of
    /// CPU; `-v 1048576`: 1 GiB of address space), killed after `timeout` seconds.
    public static func runLimited(
        _ limits: String, _ arguments: [String], in directory: URL, timeout: Double = 60
    ) throws -> ProcessResult {
        try ChildProcess.run(
            "/bin/bash", ["-c", "ulimit \(limits) && trap '' XFSZ && exec \"$0\" \"$@\"", ccbeacon] + arguments,
            in: directory, timeout: timeout)
    }
}

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
}

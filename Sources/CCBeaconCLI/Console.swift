/// Where a command writes: results to `output` (stdout), diagnostics to `diagnostics` (stderr).
/// The sinks may be called from worker threads (batch progress), so they must be thread-safe.
public struct Console: Sendable {
    /// Writes to standard output.
    public var output: @Sendable (String) -> Void
    /// Writes to standard error.
    public var diagnostics: @Sendable (String) -> Void
    /// True when standard error is a terminal (progress bars redraw there, print lines otherwise).
    public var diagnosticsIsTerminal: Bool

    /// Creates a console from two sinks.
    public init(
        output: @escaping @Sendable (String) -> Void, diagnostics: @escaping @Sendable (String) -> Void,
        diagnosticsIsTerminal: Bool = false
    ) {
        self.output = output
        self.diagnostics = diagnostics
        self.diagnosticsIsTerminal = diagnosticsIsTerminal
    }
}

/// Process exit statuses (design.md, after sysexits.h).
public enum ExitCode: Int32, Sendable {
    /// Success.
    case success = 0
    /// The operation failed (device error, verify mismatch, file cannot be read or written).
    case failure = 1
    /// `provision` stopped with stations of the list left: pending (failed ones included) or held.
    case stationsLeft = 3
    /// The command line is wrong.
    case usage = 64
    /// The input data is wrong (malformed HEX, bad identity, bad station list).
    case dataError = 65
}

/// A command that could not do its job: what happened, what to do, and the exit status.
struct CommandFailure: Error {
    var exitCode: ExitCode
    var message: String
    var hint: String?

    init(_ exitCode: ExitCode, _ message: String, hint: String? = nil) {
        self.exitCode = exitCode
        self.message = message
        self.hint = hint
    }

    static func usage(_ message: String) -> CommandFailure { CommandFailure(.usage, message) }
    static func data(_ message: String, hint: String? = nil) -> CommandFailure {
        CommandFailure(.dataError, message, hint: hint)
    }
}

import StructuredText
import Synchronization

/// Standard output refused what a command wrote (a full disk, a closed descriptor, a file-size
/// limit): the result did not reach its reader, so the command must not report success.
public struct OutputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system's reason (`strerror`).
    public var reason: String

    /// Creates an error.
    public init(reason: String) {
        self.reason = reason
    }

    /// `cannot write to standard output: No space left on device`.
    public var description: String { "cannot write to standard output: \(reason)" }
}

/// Where a command writes: results to `output` (stdout), diagnostics to `diagnostics` (stderr).
/// The sinks may be called from worker threads (batch progress), so they must be thread-safe.
public struct Console: Sendable {
    /// Writes to standard output. A console made with `init(writingOutput:…)` keeps the first
    /// failure (`outputFailure`) and drops what comes after it, so commands need not check each write.
    public var output: @Sendable (String) -> Void
    /// Writes to standard error.
    public var diagnostics: @Sendable (String) -> Void
    /// True when standard error is a terminal (progress bars redraw there, print lines otherwise).
    public var diagnosticsIsTerminal: Bool
    private let failure: FirstOutputFailure

    /// Creates a console from two sinks that cannot fail (tests that capture the output).
    public init(
        output: @escaping @Sendable (String) -> Void, diagnostics: @escaping @Sendable (String) -> Void,
        diagnosticsIsTerminal: Bool = false
    ) {
        self.output = output
        self.diagnostics = diagnostics
        self.diagnosticsIsTerminal = diagnosticsIsTerminal
        failure = FirstOutputFailure()
    }

    /// Creates a console whose output may fail: the first failure is kept for `CommandLineTool.run`,
    /// which turns a command that succeeded into exit 1. Diagnostics have nowhere to report a
    /// failure of their own, so their sink cannot fail.
    public init(
        writingOutput write: @escaping @Sendable (String) throws(OutputError) -> Void,
        diagnostics: @escaping @Sendable (String) -> Void, diagnosticsIsTerminal: Bool = false
    ) {
        let failure = FirstOutputFailure()
        self.output = { text in
            guard failure.error == nil else { return }
            do throws(OutputError) { try write(text) } catch { failure.keep(error) }
        }
        self.diagnostics = diagnostics
        self.diagnosticsIsTerminal = diagnosticsIsTerminal
        self.failure = failure
    }

    /// The first write to standard output that failed, if any.
    public var outputFailure: OutputError? { failure.error }

    /// The same console, its diagnostics made visible line by line (`VisibleText.escapedLines`):
    /// for messages that quote what a ledger or a list holds.
    var escapingDiagnostics: Console {
        var console = self
        let write = diagnostics
        console.diagnostics = { text in write(VisibleText.escapedLines(text)) }
        return console
    }
}

/// The first output failure of a console, shared by its copies and its worker threads.
private final class FirstOutputFailure: Sendable {
    private let first = Mutex<OutputError?>(nil)

    var error: OutputError? { first.withLock { $0 } }

    func keep(_ error: OutputError) { first.withLock { $0 = $0 ?? error } }
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

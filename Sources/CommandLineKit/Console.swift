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

/// Where a command writes: text for people to `output` (stdout) and `diagnostics` (stderr), a
/// line at a time, documents to `data` (stdout), and the live status's drawing to `drawing`
/// (stderr). Text from lists, ledgers, devices and the air reaches a terminal only through here,
/// so every sink but `drawing` makes what would not show visible (`VisibleText`) by
/// construction: no command can forget it. The sinks may be called from worker threads (batch
/// progress), so they must be thread-safe.
public struct Console: Sendable {
    private var writeOutput: @Sendable (String) -> Void
    private let writeDiagnostics: @Sendable (String) -> Void
    /// True when standard error is a terminal (progress bars redraw there, print lines otherwise).
    public var diagnosticsIsTerminal: Bool
    /// True when standard output is a terminal: documents written there are made visible too.
    public var outputIsTerminal: Bool
    private let failure: FirstOutputFailure

    /// Creates a console from two sinks that cannot fail (tests that capture the output).
    public init(
        output: @escaping @Sendable (String) -> Void, diagnostics: @escaping @Sendable (String) -> Void,
        diagnosticsIsTerminal: Bool = false, outputIsTerminal: Bool = false
    ) {
        self.writeOutput = output
        self.writeDiagnostics = diagnostics
        self.diagnosticsIsTerminal = diagnosticsIsTerminal
        self.outputIsTerminal = outputIsTerminal
        failure = FirstOutputFailure()
    }

    /// Creates a console whose output may fail: the first failure is kept for `CommandLineTool.run`,
    /// which turns a command that succeeded into exit 1. Diagnostics have nowhere to report a
    /// failure of their own, so their sink cannot fail.
    public init(
        writingOutput write: @escaping @Sendable (String) throws(OutputError) -> Void,
        diagnostics: @escaping @Sendable (String) -> Void, diagnosticsIsTerminal: Bool = false,
        outputIsTerminal: Bool = false
    ) {
        let failure = FirstOutputFailure()
        self.writeOutput = { text in
            guard failure.error == nil else { return }
            do throws(OutputError) { try write(text) } catch { failure.keep(error) }
        }
        self.writeDiagnostics = diagnostics
        self.diagnosticsIsTerminal = diagnosticsIsTerminal
        self.outputIsTerminal = outputIsTerminal
        self.failure = failure
    }

    /// Writes one line of text for people to standard output: every hidden character in it made
    /// visible (`VisibleText.escaped`), a line feed inside a value included, then ended. A value
    /// quoted in it can never start a line of its own that a reader takes for ours.
    public func output(line: String) { writeOutput(VisibleText.escaped(line) + "\n") }

    /// Writes `lines` to standard output, each one line whatever it holds (see `output(line:)`).
    public func output(lines: [String]) { writeOutput(lines.map { VisibleText.escaped($0) + "\n" }.joined()) }

    /// Writes text of several lines that ccbeacon laid out itself to standard output: help, and
    /// tables whose cells `Table` made visible. Its line feeds are kept as the layout's; every
    /// other hidden character is escaped. Never for text holding a value from outside as it is:
    /// that goes through `output(line:)` or `output(lines:)`.
    public func output(composed text: String) { writeOutput(VisibleText.escapedLines(text)) }

    /// Writes one line to standard error, made visible whole (see `output(line:)`).
    public func diagnostics(line: String) { writeDiagnostics(VisibleText.escaped(line) + "\n") }

    /// Writes lines to standard error, each made visible whole (see `output(line:)`).
    package func diagnostics(lines: [String]) {
        writeDiagnostics(lines.map { VisibleText.escaped($0) + "\n" }.joined())
    }

    /// Writes a question to standard error, made visible whole, not ended (the answer follows it).
    package func diagnostics(prompt: String) { writeDiagnostics(VisibleText.escaped(prompt)) }

    /// Writes a document to standard output (CSV, JSON, HEX, C, a script): as it is into a file
    /// or a pipe, whose reader wants the data whole; made visible on a terminal
    /// (`VisibleText.escapedDocument`), where a control character would act instead of show.
    public func data(_ text: String) { writeOutput(outputIsTerminal ? VisibleText.escapedDocument(text) : text) }

    /// Writes the progress bar's and the live status's drawing to standard error as it is: the
    /// cursor movements are ours, and the drawers make the text they draw visible themselves.
    package func drawing(_ text: String) { writeDiagnostics(text) }

    /// The first write to standard output that failed, if any.
    public var outputFailure: OutputError? { failure.error }

    /// The same console writing its output to standard error (while the events take stdout).
    package var outputToDiagnostics: Console {
        var console = self
        console.writeOutput = writeDiagnostics
        console.outputIsTerminal = diagnosticsIsTerminal
        return console
    }
}

/// The first output failure of a console, shared by its copies and its worker threads.
private final class FirstOutputFailure: Sendable {
    private let first = Mutex<OutputError?>(nil)

    package var error: OutputError? { first.withLock { $0 } }

    package func keep(_ error: OutputError) { first.withLock { $0 = $0 ?? error } }
}

/// Process exit statuses, after sysexits.h (design.md).
public struct ExitCode: RawRepresentable, Sendable, Equatable {
    /// The status the process exits with.
    public let rawValue: Int32

    /// A status; a tool names its own beyond these as static constants.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Success.
    public static let success = ExitCode(rawValue: 0)
    /// The operation failed (device error, verify mismatch, file cannot be read or written).
    public static let failure = ExitCode(rawValue: 1)
    /// The command line is wrong.
    public static let usage = ExitCode(rawValue: 64)
    /// The input data is wrong (malformed input, with its position).
    public static let dataError = ExitCode(rawValue: 65)
}

/// A command that could not do its job: what happened, what to do, and the exit status.
package struct CommandFailure: Error {
    package var exitCode: ExitCode
    /// One line: a line feed in it is shown `\x0a`.
    package var message: String
    /// Lines shown under the message, indented (each problem of a list).
    package var details: [String]
    /// What to do, one line.
    package var hint: String?
    /// Lines shown under the hint, indented (a udev rule to install).
    package var hintLines: [String] = []

    package init(_ exitCode: ExitCode, _ message: String, details: [String] = [], hint: String? = nil) {
        self.exitCode = exitCode
        self.message = message
        self.details = details
        self.hint = hint
    }

    /// A failure told in `lines`: the first is the message, the others its details (their own
    /// indentation dropped: details are shown indented).
    package init(_ exitCode: ExitCode, lines: [String], hint: String? = nil) {
        self.init(
            exitCode, lines.first ?? "", details: lines.dropFirst().map { String($0.drop { $0 == " " }) }, hint: hint)
    }

    package static func usage(_ message: String) -> CommandFailure { CommandFailure(.usage, message) }
    package static func data(_ message: String, hint: String? = nil) -> CommandFailure {
        CommandFailure(.dataError, message, hint: hint)
    }
}

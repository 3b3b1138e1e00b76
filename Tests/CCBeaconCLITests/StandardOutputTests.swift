import Foundation
import IntelHex
import Storage
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// A result that cannot reach standard output is a failure: a full disk, a closed descriptor or a
/// file-size limit used to leave a cut or empty result behind exit status 0.
struct StandardOutputTests {
    static let identity = ["--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "1", "--minor", "2"]

    /// Runs the built ccbeacon through `sh`, with `redirection` applied to its standard output;
    /// `limited` caps the files it may write at one block of `ulimit -f`.
    static func ccbeacon(_ arguments: [String], stdout redirection: String, in scratch: Scratch, limited: Bool = false)
        throws -> ProcessResult
    {
        let limit = limited ? "ulimit -f 1; trap '' XFSZ; " : ""
        return try ChildProcess.run(
            "/bin/sh", ["-c", limit + "exec \"$0\" \"$@\" \(redirection)", BuiltTools.ccbeacon] + arguments,
            in: scratch.url, timeout: 60)
    }

    /// Commands whose whole result is on standard output, and one that writes a file first.
    static func commands(_ scratch: Scratch) throws -> [[String]] {
        let station = scratch.path("station.hex")
        let generated = ToolRun(["generate", "--template", "cc2541-ibeacon", "-o", station] + identity)
        try #require(generated.status == 0, "\(generated.diagnostics)")
        let ledger = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(ledger)
        return [
            ["ledger", "export", "--ledger", ledger], ["ledger", "export", "--ledger", ledger, "--format", "json"],
            ["ledger", "show", "--ledger", ledger], ["ledger", "check", "--ledger", ledger, "--json"],
            ["inspect", station, "--json"], ["verify", station, "--json"] + identity, ["encode"] + identity,
            ["templates"], ["help", "batch"], ["--version"],
            ["generate", "--template", "cc2541-ibeacon", "-o", scratch.path("other.hex")] + identity,
        ]
    }

    @Test(
        .enabled(
            if: BuiltTools.ccbeaconAvailable && Files.exists("/dev/full"), "needs the built ccbeacon and /dev/full"))
    func aFullDeviceOrAClosedStandardOutputIsAFailure() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        for arguments in try Self.commands(scratch) {
            for (redirection, reason) in [("> /dev/full", "No space left on device"), (">&-", "Bad file descriptor")] {
                let run = try Self.ccbeacon(arguments, stdout: redirection, in: scratch)
                #expect(run.status == 1, "\(arguments) \(redirection): \(run.errors)")
                #expect(
                    run.errors.contains("cannot write to standard output: \(reason)"),
                    "\(arguments) \(redirection): \(run.errors)")
            }
        }
        // The file written before the result line is whole; only the report of it was lost.
        #expect(throws: Never.self) { try IntelHexFile(text: try Files.read(scratch.path("other.hex"))) }
    }

    /// A file-size limit stops the output part-way (as a full disk does, mid-row): the short write
    /// is noticed. `SIGXFSZ` is ignored so that the limit shows as `EFBIG`, as `ENOSPC` would.
    @Test(.enabled(if: BuiltTools.ccbeaconAvailable, "needs the built ccbeacon"))
    func aShortWriteIsAFailure() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let whole = try Self.ccbeacon(["help", "batch"], stdout: "", in: scratch)
        try #require(whole.status == 0 && whole.output.utf8.count > 1024)
        let cut = try Self.ccbeacon(
            ["help", "batch"], stdout: "> help.txt", in: scratch, limited: true)
        #expect(cut.status == 1, "\(cut.errors)")
        #expect(cut.errors.contains("cannot write to standard output: File too large"), "\(cut.errors)")
        let written = try scratch.bytes("help.txt")
        #expect(!written.isEmpty && written.count < whole.output.utf8.count, "the limit cut the text")
    }

    /// In process: a console whose writer fails makes any command fail with the writer's reason,
    /// and a command that failed on its own keeps its status.
    @Test func aFailingWriterFailsTheCommand() throws {
        let diagnostics = Mutex("")
        let attempts = Mutex(0)
        let console = Console(
            writingOutput: { _ throws(OutputError) in
                attempts.withLock { $0 += 1 }
                throw OutputError(reason: "No space left on device")
            }, diagnostics: { text in diagnostics.withLock { $0 += text } })
        #expect(CommandLineTool.run(["encode"] + Self.identity, console: console) == 1)
        #expect(
            diagnostics.withLock { $0 }
                == "ccbeacon encode: error: cannot write to standard output: No space left on device\n")
        #expect(console.outputFailure == OutputError(reason: "No space left on device"))
        // `ledger check` on a damaged ledger prints its problems, then exits 65: it keeps 65.
        let scratch = try Scratch()
        defer { scratch.remove() }
        try LedgerFiles.damaged(scratch.path("ledger.sqlite"))
        let checkDiagnostics = Mutex("")
        let check = Console(
            writingOutput: { _ throws(OutputError) in throw OutputError(reason: "closed") },
            diagnostics: { text in checkDiagnostics.withLock { $0 += text } })
        #expect(
            CommandLineTool.run(["ledger", "check", "--ledger", scratch.path("ledger.sqlite")], console: check) == 65)
        #expect(
            checkDiagnostics.withLock { $0 }.hasSuffix(
                "ccbeacon ledger check: error: cannot write to standard output: closed\n"))
        let help = Console(
            writingOutput: { _ throws(OutputError) in throw OutputError(reason: "closed") }, diagnostics: { _ in })
        #expect(CommandLineTool.run(["--version"], console: help) == 1)
        // After the first failure nothing more is attempted.
        console.output(line: "more")
        #expect(attempts.withLock { $0 } == 1)
    }
}

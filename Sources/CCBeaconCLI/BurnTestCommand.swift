import CCDebugger
import CommandLineKit
import HexText
import Storage
import StructuredText
import TargetData

#if canImport(Glibc)
    import Glibc
#endif

/// `ccbeacon doctor --burn-test`: the first burn on a new bench (`BurnTest`), its summary on the
/// terminal and, with `--report DIR`, everything a bug report needs in DIR.
enum BurnTestCommand {
    static let burnTest = Flag(
        "--burn-test",
        help:
            "erase the attached chip, write and read back every page with each USB framing, leave it erased (asks first)"
    )
    static let yes = Flag("--yes", help: "with --burn-test: do not ask before erasing the chip")
    static let report = Option<String>(
        "--report", value: "DIR",
        help: "with --burn-test: write summary.txt, summary.json, trace.pcap and descriptors.txt into DIR",
        completion: .folders)

    /// The files a report folder holds: a folder holding anything else is never written into.
    static let reportFiles = ["summary.txt", "summary.json", "trace.pcap", "descriptors.txt"]

    /// Everything the options say, checked before any debugger is touched.
    struct Request: Sendable {
        var device: DeviceChoice
        var confirmed: Bool
        var reportFolder: String?
    }

    /// The burn test's options of `doctor`'s arguments: the request when `--burn-test` is given.
    static func request(_ command: ParsedCommand, device: DeviceChoice) throws(CommandFailure) -> Request? {
        guard command.isSet(burnTest) else { return nil }
        return Request(
            device: device, confirmed: command.isSet(yes),
            reportFolder: try command.value(report).map(Files.withoutTrailingSeparators))
    }

    /// The options' combination, checked before anything is opened (a trace included):
    /// `--yes`, `--report` and `--device` belong to `--burn-test`; its report holds its trace, so
    /// `--trace` is not given beside `--report`; the report folder is new, empty or an earlier
    /// report.
    static func validate(_ arguments: DoctorCommand.Arguments) throws(CommandFailure) {
        guard let request = arguments.burnTest else {
            for (given, name) in [
                (arguments.confirmed, yes.spec.name), (arguments.reportGiven, report.spec.name),
                (arguments.device.selector != nil, Options.device.spec.name),
                (arguments.device.flashSize != nil, Options.flashSize.spec.name),
            ] where given {
                throw .usage("\(name) is for --burn-test")
            }
            return
        }
        if arguments.json {
            throw .usage("--json is not for --burn-test; its summary in JSON is summary.json in --report DIR")
        }
        if request.reportFolder != nil, arguments.traced {
            throw .usage("--report DIR holds the trace of the burn test (DIR/trace.pcap); leave out --trace")
        }
        if let folder = request.reportFolder { try checkFolder(folder) }
    }

    /// Without `--yes` there must be a terminal to ask on.
    static func checkConfirmation(_ request: Request, console: Console) throws(CommandFailure) {
        if !request.confirmed, !(console.diagnosticsIsTerminal && isatty(0) == 1) {
            throw .usage("the burn test erases the chip; with no terminal to ask on, confirm with --yes")
        }
    }

    /// A report folder: absent (it is made, in an existing folder), or a folder that holds nothing
    /// but an earlier report's files (they are replaced; each a regular file) and what a killed
    /// report left (its temporary files). Never a link.
    static func checkFolder(_ folder: String) throws(CommandFailure) {
        let name = folder
        guard !folder.isEmpty else { throw .usage("--report needs a folder") }
        var info = stat()
        guard lstat(folder, &info) == 0 else {
            let parent = Files.directory(of: folder).isEmpty ? "." : Files.directory(of: folder)
            guard Files.isWritableDirectory(parent) else {
                throw .usage("--report \(name): \(parent) is not a folder this user may write")
            }
            return
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .usage("--report \(name) is not a folder (a file or a link); give a new folder")
        }
        try checkContents(folder, shownAs: name)
    }

    /// What a report folder (`folder`, which may be a pinned folder's path) holds: an earlier
    /// report's files, each a regular file, and a killed report's temporary files — nothing else.
    static func checkContents(_ folder: String, shownAs name: String) throws(CommandFailure) {
        let names: [String]
        do { names = try Files.list(folder) } catch {
            throw .usage(
                "--report \(name): cannot see what the folder holds (\(error.reason)); give a folder this user may read"
            )
        }
        let leftovers = reportFiles.map { "." + $0 + Files.temporaryMarker }
        let foreign = names.filter { name in
            !reportFiles.contains(name) && !leftovers.contains { name.hasPrefix($0) }
        }
        guard foreign.isEmpty else {
            throw .usage(
                "--report \(name) holds other files (\(foreign.prefix(3).map { "'\($0)'" }.joined(separator: ", "))); give a new folder, or one an earlier burn test wrote"
            )
        }
        for file in reportFiles where names.contains(file) {
            var entry = stat()
            guard lstat(Files.join(folder, file), &entry) == 0 else { continue }
            switch entry.st_mode & S_IFMT {
            case S_IFREG:
                if let evidence = CommandSupport.stationListEvidence(at: Files.join(folder, file)) {
                    throw .usage("--report \(name)/\(file) \(evidence); give a new folder")
                }
            case S_IFLNK: throw .usage("--report \(name)/\(file) is a link; give a new folder")
            case S_IFDIR: throw .usage("--report \(name)/\(file) is a folder; give a new folder")
            default: throw .usage("--report \(name)/\(file) is not a regular file; give a new folder")
            }
        }
        guard Files.isWritableDirectory(folder) else {
            throw .usage("--report \(name) is not a folder this user may write")
        }
        // An earlier report's trace is checked as --trace's would be (an earlier trace, not
        // where the output goes), before anything is touched.
        if names.contains("trace.pcap"),
            let earlier = try TraceFile.inspect(
                Files.join(folder, "trace.pcap"), shownAs: "\(name)/trace.pcap", option: "--report")
        {
            close(earlier)
        }
    }

    /// The report folder once the test may begin: made if absent, held open (`PinnedDirectory`)
    /// so that a folder swapped for a link meanwhile is never written through, locked against a
    /// second burn test, checked again through that hold, cleared of a killed report's leftovers
    /// and of an earlier report's summaries, its trace open.
    struct ReportFolder {
        let folder: String
        let pinned: PinnedDirectory
        let trace: TraceFile

        init(_ folder: String) throws(CommandFailure) {
            if mkdir(folder, 0o755) != 0, errno != EEXIST {
                throw CommandFailure(
                    .failure, "cannot make the report folder \(folder): \(String(cString: strerror(errno)))")
            }
            // A folder made here and then refused stays (empty): removing it by name could remove
            // the one another run has just begun to use.
            do { pinned = try PinnedDirectory(folder) } catch {
                throw CommandFailure(
                    .failure,
                    "the report folder \(folder) changed since it was checked (\(error.reason)); nothing was written",
                    hint: "give a new folder")
            }
            // One burn test at a time writes into a folder: a second one would replace the
            // first's report with its own and take its temporary files for a dead writer's.
            guard pinned.lockExclusively() else {
                throw CommandFailure(
                    .failure, "another burn test is writing its report into \(folder)",
                    hint: "give each burn test its own --report folder")
            }
            // Checked before the prompt; what is wrong now changed since (not the command line's
            // fault: exit 1).
            do throws(CommandFailure) {
                try BurnTestCommand.checkContents(pinned.path, shownAs: folder)
                _ = Files.removeAbandonedTemporaryFiles(in: pinned.path)
                trace = try TraceFile(
                    path: Files.join(pinned.path, "trace.pcap"), shownAs: Files.join(folder, "trace.pcap"),
                    option: "--report")
            } catch  where error.exitCode == .usage {
                throw CommandFailure(
                    .failure, "the report folder changed since it was checked: \(error.message)",
                    hint: "give a new folder")
            }
            // An earlier report's summaries go now: a run killed from here on leaves its own
            // trace, never beside summaries of another run.
            for name in BurnTestCommand.reportFiles where name != "trace.pcap" {
                unlink(Files.join(pinned.path, name))
            }
            self.folder = folder
        }

        /// Writes one of the report's files whole.
        func write(_ name: String, _ text: String) throws(FileError) {
            try Files.writeAtomically(Array(text.utf8), to: Files.join(pinned.path, name))
        }

        /// Writes one of the report's text files for people, each line made visible whole as on
        /// a terminal (`VisibleText`): a device's strings may hold anything.
        func write(_ name: String, lines: [String]) throws(FileError) {
            try write(name, lines.map { VisibleText.escaped($0) + "\n" }.joined())
        }
    }

    /// Runs the test on the selected debugger after asking (unless confirmed), prints the summary
    /// and writes the report; fails (exit 1) when anything disagreed.
    static func run(_ request: Request, debuggers: (any DebuggerProvider)?, chips: [Chip], console: Console)
        throws(CommandFailure)
    {
        var provider = try DeviceSupport.provider(debuggers)
        var device = try DeviceSupport.choose(
            try DeviceSupport.listDevices(provider), selector: request.device.selector)
        let name =
            "debugger \(device.selector)" + (device.portPath.map { " (port \($0))" } ?? "")
            + (device.serial.map { ", serial \($0)" } ?? "")
        if !request.confirmed {
            try ProvisionCommand.confirm(
                "The burn test erases the chip behind \(name) (its whole flash). Erase it? [y/N] ", console: console)
        }
        let folder = try request.reportFolder.map { (path) throws(CommandFailure) in try ReportFolder(path) }
        var succeeded = false
        defer { folder?.trace.finish(succeeded: succeeded) }
        if let folder {
            // Listed again through the report's trace: its descriptor requests are in it too.
            provider = TracingProvider(provider, trace: folder.trace.trace)
            device = try DeviceSupport.choose(try DeviceSupport.listDevices(provider), selector: device.selector)
        }
        let opened = provider
        let chosen = device
        let reporters = ProgressBoard(console: console)
        let test = BurnTest(
            open: { () throws(DebuggerError) in
                let counting = CountingTransport(try opened.open(chosen))
                let session = CC254xSession(transport: counting, chips: chips)
                session.assumedFlashSize = request.device.flashSize
                return (session, counting)
            },
            progress: { step, progress in reporters.update(step, progress) })
        let outcome: Result<BurnTest.Report, BurnTest.CannotBegin>
        do { outcome = .success(try test.run()) } catch { outcome = .failure(error) }
        let lines = summary(outcome, device: device, trace: folder?.trace.trace)
        if case .success = outcome { console.output(lines: lines) }
        if let folder {
            do { try write(outcome, lines: lines, device: device, into: folder) } catch {
                // The trace may have taken the room the summaries need: they matter more than its
                // last records, which are cut (whole) to make room, once.
                guard error.code == ENOSPC || error.code == EDQUOT,
                    case let cut = folder.trace.makeRoom(bytes: 1 << 18), cut > 0
                else { throw CommandFailure(.failure, "cannot write the report: \(error.description)") }
                let note = "  trace.pcap: its last \(cut) records were cut to make room for the summaries (a full disk)"
                do { try write(outcome, lines: lines + [note], device: device, into: folder) } catch {
                    throw CommandFailure(.failure, "cannot write the report: \(error.description)")
                }
            }
            console.output(
                line: "report: \(folder.folder)/ (\(reportFiles.joined(separator: ", "))); attach it to a bug report")
        }
        succeeded = true
        switch outcome {
        case .failure(let notBegun): throw DeviceSupport.failure(notBegun.error, flashChanged: notBegun.erased)
        case .success(let result) where !result.passed:
            throw CommandFailure(
                .failure, "the burn test failed: \(firstProblem(result))",
                hint:
                    "see the summary above; the trace (--report) shows every transfer. The First hardware section of the README says what to send"
            )
        case .success: break
        }
    }

    /// The summary, one fact per line: what the test found, or why it could not begin.
    static func summary(
        _ outcome: Result<BurnTest.Report, BurnTest.CannotBegin>, device: DebuggerDevice, trace: USBTrace?
    ) -> [String] {
        let state: DebuggerState? =
            switch outcome {
            case .success(let result): result.state
            case .failure(let notBegun): notBegun.state
            }
        var lines = [
            "burn test on debugger \(device.selector)\(device.portPath.map { " (port \($0))" } ?? ""): \(device.product) \(device.usbID)"
                + "\(device.serial.map { ", serial \($0)" } ?? "")"
                + (state.map {
                    ", firmware \(HexText.address(Int($0.firmwareID))) rev \(HexText.address(Int($0.firmwareRevision)))"
                } ?? ", firmware unknown")
        ]
        if let note = state.flatMap({ DebuggerModel.firmwareNote(revision: $0.firmwareRevision) }) {
            lines.append("  note: \(note)")
        }
        switch outcome {
        case .failure(let notBegun):
            lines.append(
                notBegun.erased
                    ? "  the burn test stopped after erasing the chip (it was debug-locked): \(notBegun.error.description)"
                    : "  the burn test could not begin: \(notBegun.error.description)")
        case .success(let result):
            lines += findings(result)
        }
        if let trace, let failure = trace.failure {
            lines.append("  trace.pcap stopped after \(trace.records) records: \(failure)")
        }
        return lines
    }

    /// The lines of a test that ran: the chip, each pass, the final erase, the framings.
    static func findings(_ result: BurnTest.Report) -> [String] {
        let secondary =
            result.wasLocked
            ? "unknown (the chip was locked; its erase cleared the page)"
            : result.secondaryAddress.map(HexText.colonSeparated) ?? "none"
        let primary = result.primaryAddress.map(HexText.colonSeparated) ?? "none"
        // The CC243x's flash is checked by reading it back (`VerifyMode.effective(on:)`).
        let byCRC = VerifyMode.crc.effective(on: result.chip) == .crc
        var lines = [
            "  chip: \(result.chip.name) (chip ID \(HexText.address(Int(result.identity.chipID))), revision \(HexText.address(Int(result.identity.revision)))), IEEE address \(primary), secondary address \(secondary)"
        ]
        for pass in result.passes { lines.append("  " + describe(pass, byCRC: byCRC)) }
        if result.leftErased {
            lines.append("  the chip is left erased (checked by \(byCRC ? "CRC" : "reading it back"))")
        } else {
            lines.append(
                "  the chip could NOT be left erased: \(result.finalError?.description ?? "?"); run 'ccbeacon erase'")
        }
        let works = result.passes.filter(\.outcome.works).map(\.framing.rawValue)
        // A byte read back wrong may be the flash as much as the framing: neither verdict.
        let undecided = result.passes.filter {
            if case .readBackDiffers = $0.outcome { return true } else { return false }
        }.map(\.framing.rawValue)
        lines.append(
            "  framings that work on this debugger: \(works.isEmpty ? "none" : works.joined(separator: ", "))"
                + (works.contains(USBFraming.proven.rawValue) ? " (proven is the default)" : "")
                + (undecided.isEmpty
                    ? ""
                    : "; undecided: \(undecided.joined(separator: ", ")) (its read-back differed: a flash fault as likely as the framing)")
        )
        return lines
    }

    static func describe(_ pass: BurnTest.Pass, byCRC: Bool) -> String {
        let cost = "\(pass.transfers) USB transfers, \(pass.seconds.oneDecimal) s"
        let measured = pass.outcome.works ? "\(pass.bytesWritten) bytes, \(cost)" : "after \(cost)"
        switch pass.outcome {
        case .works:
            return
                "\(pass.framing.rawValue) framing: works (erased, written, every byte read back\(byCRC ? ", CRC verified" : ""); \(measured))"
        case .readBackDiffers(let address, let wrote, let read):
            return
                "\(pass.framing.rawValue) framing: READ-BACK DIFFERS at \(HexText.address(address)) (wrote \(HexText.address(Int(wrote))), read \(HexText.address(Int(read)))); \(measured)"
        case .failed(let step, let error):
            var line = "\(pass.framing.rawValue) framing: FAILED while \(step): \(error.description); \(measured)"
            if pass.framing == .packed, case .transport(.pipe, _) = error {
                line += " — this debugger takes a burst only alone in its transfer: keep the default (proven)"
            }
            return line
        case .imageRefused(let reason):
            return "\(pass.framing.rawValue) framing: not run: \(reason)"
        }
    }

    static func firstProblem(_ result: BurnTest.Report) -> String {
        for pass in result.passes {
            switch pass.outcome {
            case .works: continue
            case .readBackDiffers(let address, let wrote, let read):
                return
                    "the read-back differs at \(HexText.address(address)) (wrote \(HexText.address(Int(wrote))), read \(HexText.address(Int(read)))) with the \(pass.framing.rawValue) framing"
            case .failed(let step, let error):
                if pass.framing != .proven, pass.outcome.refusesTheFraming { continue }
                return "\(step) with the \(pass.framing.rawValue) framing: \(error.description)"
            case .imageRefused(let reason): return reason
            }
        }
        return "the chip could not be left erased: \(result.finalError?.description ?? "?")"
    }

    /// summary.txt, summary.json and descriptors.txt, each written whole (trace.pcap was written
    /// as the test ran).
    static func write(
        _ outcome: Result<BurnTest.Report, BurnTest.CannotBegin>, lines: [String], device: DebuggerDevice,
        into folder: ReportFolder
    ) throws(FileError) {
        let trace = folder.trace.trace
        var state: DebuggerState?
        var fields: [(String, JSONValue)] = [
            ("schema", .integer(1)), ("ccbeacon", .string(CommandLineTool.version)),
        ]
        switch outcome {
        case .failure(let notBegun):
            state = notBegun.state
            fields += [
                ("passed", .bool(false)), ("error", .string(notBegun.error.description)),
                // Whether the chip erase had begun (a locked chip is erased to tell its part).
                ("erased", .bool(notBegun.erased)),
            ]
        case .success(let result):
            state = result.state
            fields.append(("passed", .bool(result.passed)))
        }
        fields.append(
            (
                "debugger",
                .object([
                    ("selector", .string(device.selector)), ("port", device.portPath.map(JSONValue.string) ?? .null),
                    ("usbID", .string(device.usbID)), ("product", .string(device.product)),
                    ("serial", device.serial.map(JSONValue.string) ?? .null),
                    ("bcdDevice", .integer(Int(device.debuggerID))),
                    ("firmwareID", state.map { .integer(Int($0.firmwareID)) } ?? .null),
                    ("firmwareRevision", state.map { .integer(Int($0.firmwareRevision)) } ?? .null),
                    ("targetID", state.map { .integer(Int($0.targetID)) } ?? .null),
                ])
            ))
        if case .success(let result) = outcome {
            fields += [
                (
                    "chip",
                    .object([
                        ("name", .string(result.chip.name)), ("chipID", .integer(Int(result.identity.chipID))),
                        ("revision", .integer(Int(result.identity.revision))),
                        ("flashSize", .integer(result.chip.flashSize)), ("wasLocked", .bool(result.wasLocked)),
                        // null where the chip has no factory address.
                        ("primaryAddress", result.primaryAddress.map { .string(HexText.colonSeparated($0)) } ?? .null),
                        (
                            "secondaryAddress",
                            result.secondaryAddress.map { .string(HexText.colonSeparated($0)) } ?? .null
                        ),
                    ])
                ),
                ("passes", .array(result.passes.map(passJSON))), ("leftErased", .bool(result.leftErased)),
            ]
        }
        fields += [
            ("traceRecords", .integer(folder.trace.recordsKept)),
            ("traceFailure", trace.failure.map(JSONValue.string) ?? .null),
        ]
        let descriptors = [
            "USB device \(device.usbID) (idVendor \(HexText.address(Int(device.vendorID))), idProduct \(HexText.address(Int(device.productID))))",
            "bcdDevice \(HexText.address(Int(device.debuggerID)))",
            "product '\(device.product)'", "serial \(device.serial.map { "'\($0)'" } ?? "none")",
            "bus \(device.bus), address \(device.address), port \(device.portPath ?? "unknown")",
            state.map {
                "GET_STATE: target \(HexText.address(Int($0.targetID))), firmware \(HexText.address(Int($0.firmwareID))), revision \(HexText.address(Int($0.firmwareRevision)))"
            } ?? "GET_STATE: no answer",
            "(the descriptor requests made while listing the debuggers, and their answers, are in trace.pcap)",
        ]
        try folder.write("summary.txt", lines: lines)
        try folder.write("summary.json", JSONValue.object(fields).rendered() + "\n")
        try folder.write("descriptors.txt", lines: descriptors)
    }

    /// One pass in summary.json.
    static func passJSON(_ pass: BurnTest.Pass) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("framing", .string(pass.framing.rawValue)), ("works", .bool(pass.outcome.works)),
            ("seconds", .number(pass.seconds)), ("transfers", .integer(pass.transfers)),
            ("bytesWritten", .integer(pass.bytesWritten)),
        ]
        switch pass.outcome {
        case .works: break
        case .readBackDiffers(let address, let wrote, let read):
            fields.append(
                (
                    "firstDifference",
                    .object([
                        ("address", .integer(address)), ("wrote", .integer(Int(wrote))), ("read", .integer(Int(read))),
                    ])
                ))
        case .failed(let step, let error):
            fields += [("step", .string(step)), ("error", .string(error.description))]
        case .imageRefused(let reason): fields.append(("error", .string(reason)))
        }
        return .object(fields)
    }
}

/// One progress line per step of the burn test.
final class ProgressBoard {
    private let console: Console
    private var reporters: [String: ProgressReporter] = [:]

    init(console: Console) { self.console = console }

    func update(_ step: String, _ progress: FlashProgress?) {
        guard let progress else { return }
        let reporter = reporters[step] ?? ProgressReporter(console: console, label: step)
        reporters[step] = reporter
        reporter.update(done: progress.done, total: progress.total)
    }
}

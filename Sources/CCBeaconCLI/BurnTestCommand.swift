import BoardSupport
import CCDebugger
import HexText
import Storage
import StructuredText

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
        help: "with --burn-test: write summary.txt, summary.json, trace.pcap and descriptors.txt into DIR")

    /// The files a report folder holds: a folder holding anything else is never written into.
    static let reportFiles = ["summary.txt", "summary.json", "trace.pcap", "descriptors.txt"]

    /// Everything the options say, checked before any debugger is touched.
    struct Request {
        var selector: String?
        var confirmed: Bool
        var reportFolder: String?
    }

    /// The options read and checked: `--yes`, `--report` and `--device` belong to `--burn-test`;
    /// the report folder is new, empty or an earlier report; without `--yes` there must be a
    /// terminal to ask on.
    static func request(_ command: ParsedCommand, console: Console) throws(CommandFailure) -> Request? {
        let selector = try command.value(Options.device)
        let folder = try command.value(report)
        guard command.isSet(burnTest) else {
            for (given, name) in [
                (command.isSet(yes), yes.spec.name), (folder != nil, report.spec.name),
                (selector != nil, Options.device.spec.name),
            ] where given {
                throw .usage("\(name) is for --burn-test")
            }
            return nil
        }
        if command.isSet(Options.json) {
            throw .usage("--json is not for --burn-test; its summary in JSON is summary.json in --report DIR")
        }
        if let folder { try checkFolder(folder) }
        let confirmed = command.isSet(yes)
        if !confirmed, !(console.diagnosticsIsTerminal && isatty(0) == 1) {
            throw .usage("the burn test erases the chip; with no terminal to ask on, confirm with --yes")
        }
        return Request(selector: selector, confirmed: confirmed, reportFolder: folder)
    }

    /// A report folder: absent (it is made, in an existing folder), or a folder that holds nothing
    /// but an earlier report's files (they are replaced). Never a link.
    static func checkFolder(_ folder: String) throws(CommandFailure) {
        guard !folder.isEmpty else { throw .usage("--report needs a folder") }
        var info = stat()
        guard lstat(folder, &info) == 0 else {
            let parent = Files.directory(of: folder).isEmpty ? "." : Files.directory(of: folder)
            guard Files.isWritableDirectory(parent) else {
                throw .usage("--report \(folder): \(parent) is not a folder this user may write")
            }
            return
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .usage("--report \(folder) is not a folder (a file or a link); give a new folder")
        }
        let names = (try? Files.list(folder)) ?? []
        let foreign = names.filter { !reportFiles.contains($0) }
        guard foreign.isEmpty else {
            throw .usage(
                "--report \(folder) holds other files (\(foreign.prefix(3).map { "'\(visible: $0)'" }.joined(separator: ", "))); give a new folder, or one an earlier burn test wrote"
            )
        }
        guard Files.isWritableDirectory(folder) else {
            throw .usage("--report \(folder) is not a folder this user may write")
        }
    }

    /// Runs the test on the selected debugger after asking (unless confirmed), prints the summary
    /// and writes the report; fails (exit 1) when anything disagreed.
    static func run(_ request: Request, debuggers: (any DebuggerProvider)?, chips: [Chip], console: Console)
        throws(CommandFailure)
    {
        var provider = try DeviceSupport.provider(debuggers)
        let device = try DeviceSupport.choose(try DeviceSupport.listDevices(provider), selector: request.selector)
        let name =
            "debugger \(device.selector)" + (device.portPath.map { " (port \($0))" } ?? "")
            + (device.serial.map { ", serial \($0)" } ?? "")
        if !request.confirmed {
            try ProvisionCommand.confirm(
                "The burn test erases the chip behind \(name) (its whole flash). Erase it? [y/N] ", console: console)
        }
        var traceFile: TraceFile?
        if let folder = request.reportFolder {
            if !Files.exists(folder) {
                do { try Files.createDirectory(folder) } catch {
                    throw CommandFailure(.failure, "cannot make the report folder: \(error.description)")
                }
            }
            let file = try TraceFile(path: Files.join(folder, "trace.pcap"))
            provider = TracingProvider(provider, trace: file.trace)
            traceFile = file
        }
        let opened = provider
        let reporters = ProgressBoard(console: console)
        let test = BurnTest(
            open: { () throws(DebuggerError) in
                let counting = CountingTransport(try opened.open(device))
                return (CC254xSession(transport: counting, chips: chips), counting)
            },
            progress: { step, progress in reporters.update(step, progress) })
        let result: BurnTest.Report
        do { result = try test.run() } catch { throw DeviceSupport.failure(error) }
        let lines = summary(result, device: device)
        console.output(lines: lines)
        if let folder = request.reportFolder {
            try write(result, lines: lines, device: device, into: folder, trace: traceFile)
            console.output(
                line: "report: \(folder)/ (\(reportFiles.joined(separator: ", "))); attach it to a bug report")
        }
        guard result.passed else {
            throw CommandFailure(
                .failure, "the burn test failed: \(firstProblem(result))",
                hint:
                    "see the summary above; the trace (--report) shows every transfer. The First hardware section of the README says what to send"
            )
        }
    }

    /// The summary, one fact per line.
    static func summary(_ result: BurnTest.Report, device: DebuggerDevice) -> [String] {
        var lines = [
            "burn test on debugger \(device.selector)\(device.portPath.map { " (port \($0))" } ?? ""): \(device.product) \(device.usbID)"
                + "\(device.serial.map { ", serial \($0)" } ?? ""), firmware \(HexText.address(Int(result.state.firmwareID))) rev \(HexText.address(Int(result.state.firmwareRevision)))",
            "  chip: \(result.chip.name) (chip ID \(HexText.address(Int(result.identity.chipID))), revision \(HexText.address(Int(result.identity.revision)))), IEEE address \(result.primaryAddress.map(HexText.colonSeparated) ?? "unknown"), secondary address \(result.secondaryAddress.map(HexText.colonSeparated) ?? "none")",
        ]
        for pass in result.passes { lines.append("  " + describe(pass)) }
        if result.leftErased {
            lines.append("  the chip is left erased (checked by CRC)")
        } else {
            lines.append(
                "  the chip could NOT be left erased: \(result.finalError?.description ?? "?"); run 'ccbeacon erase'")
        }
        let works = result.passes.filter(\.outcome.works).map(\.framing.rawValue)
        lines.append(
            "  framings that work on this debugger: \(works.isEmpty ? "none" : works.joined(separator: ", "))"
                + (works.contains(USBFraming.proven.rawValue) ? " (proven is the default)" : ""))
        return lines
    }

    static func describe(_ pass: BurnTest.Pass) -> String {
        let cost = "\(pass.transfers) USB transfers, \(LiveStatus.decimal(pass.seconds)) s"
        let measured = pass.outcome.works ? "\(pass.bytesWritten) bytes, \(cost)" : "after \(cost)"
        switch pass.outcome {
        case .works:
            return
                "\(pass.framing.rawValue) framing: works (erased, written, every byte read back, CRC verified; \(measured))"
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
                if case .transport = error, pass.framing != .proven { continue }
                return "\(step) with the \(pass.framing.rawValue) framing: \(error.description)"
            case .imageRefused(let reason): return reason
            }
        }
        return "the chip could not be left erased: \(result.finalError?.description ?? "?")"
    }

    /// summary.txt, summary.json and descriptors.txt, each written whole (trace.pcap was written
    /// as the test ran).
    static func write(
        _ result: BurnTest.Report, lines: [String], device: DebuggerDevice, into folder: String, trace: TraceFile?
    ) throws(CommandFailure) {
        let passes = result.passes.map { pass -> JSONValue in
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
                            ("address", .integer(address)), ("wrote", .integer(Int(wrote))),
                            ("read", .integer(Int(read))),
                        ])
                    ))
            case .failed(let step, let error):
                fields += [("step", .string(step)), ("error", .string(error.description))]
            case .imageRefused(let reason): fields.append(("error", .string(reason)))
            }
            return .object(fields)
        }
        let json = JSONValue.object([
            ("schema", .integer(1)), ("ccbeacon", .string(CommandLineTool.version)),
            ("passed", .bool(result.passed)),
            (
                "debugger",
                .object([
                    ("selector", .string(device.selector)), ("port", device.portPath.map(JSONValue.string) ?? .null),
                    ("usbID", .string(device.usbID)), ("product", .string(device.product)),
                    ("serial", device.serial.map(JSONValue.string) ?? .null),
                    ("bcdDevice", .integer(Int(device.debuggerID))),
                    ("firmwareID", .integer(Int(result.state.firmwareID))),
                    ("firmwareRevision", .integer(Int(result.state.firmwareRevision))),
                    ("targetID", .integer(Int(result.state.targetID))),
                ])
            ),
            (
                "chip",
                .object([
                    ("name", .string(result.chip.name)), ("chipID", .integer(Int(result.identity.chipID))),
                    ("revision", .integer(Int(result.identity.revision))),
                    ("flashSize", .integer(result.chip.flashSize)),
                    ("primaryAddress", result.primaryAddress.map { .string(HexText.colonSeparated($0)) } ?? .null),
                    ("secondaryAddress", result.secondaryAddress.map { .string(HexText.colonSeparated($0)) } ?? .null),
                ])
            ),
            ("passes", .array(passes)), ("leftErased", .bool(result.leftErased)),
            ("traceRecords", .integer(trace?.trace.records ?? 0)),
        ])
        let descriptors = [
            "USB device \(device.usbID) (idVendor \(HexText.address(Int(device.vendorID))), idProduct \(HexText.address(Int(device.productID))))",
            "bcdDevice \(HexText.address(Int(device.debuggerID)))",
            "product '\(device.product)'", "serial \(device.serial.map { "'\($0)'" } ?? "none")",
            "bus \(device.bus), address \(device.address), port \(device.portPath ?? "unknown")",
            "GET_STATE: target \(HexText.address(Int(result.state.targetID))), firmware \(HexText.address(Int(result.state.firmwareID))), revision \(HexText.address(Int(result.state.firmwareRevision)))",
            "(the string descriptor requests and their answers are in trace.pcap)",
        ]
        let files: [(String, String)] = [
            ("summary.txt", lines.joined(separator: "\n") + "\n"), ("summary.json", json.rendered() + "\n"),
            ("descriptors.txt", descriptors.joined(separator: "\n") + "\n"),
        ]
        for (name, text) in files {
            do { try Files.writeAtomically(Array(text.utf8), to: Files.join(folder, name)) } catch {
                throw CommandFailure(.failure, "cannot write the report: \(error.description)")
            }
        }
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

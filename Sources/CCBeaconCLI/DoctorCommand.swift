import CCDebugger
import CommandLineKit
import HexText
import PostgresLedger
import Provisioning
import StationLedger
import Storage
import StructuredText
import TargetData

#if canImport(Glibc)
    import Glibc
#endif

/// `ccbeacon doctor`: why this machine cannot burn, each finding with its fix — the data, the udev
/// rule, libusb, every CC Debugger (may this user open it? a target behind it?) and the ledger.
enum DoctorCommand {
    static let spec = CommandSpec(
        name: "doctor", summary: "check this machine for burning: data, udev rule, debuggers, chips, ledger",
        manual: manual,
        table: CommandTable(
            details: """
                Checks, in order: this ccbeacon and where it found its boards and templates; the udev
                rule that lets a user open the CC Debugger (installed? early enough for systemd's
                uaccess?); the USB library; every CC Debugger attached, with its port, whether this user
                may open it and the chip behind it; and with --ledger, whether the ledger can be used
                (a file: readable, its folder writable; a server: reachable, a ccbeacon ledger). Each
                problem is printed with its fix. Each chip is halted to be read and then reset to run.
                Exit status 0 when nothing fails (warnings allowed: no debugger, no rule, no chip), 1
                otherwise.

                --burn-test is the first burn on a new bench: after asking (or with --yes), on the chip
                behind the debugger (--device when several are attached) it erases, writes every flash
                page but the lock bits with address-dependent bytes, reads every byte back and runs
                the CRC verify (not on a CC2430/31, whose read-back is the check) — once with each
                USB framing (proven, then packed, which writes the complement, so every bit is
                written as 0 once) — reads the IEEE addresses and the
                debugger's firmware ID and revision, and leaves the chip erased. It says which framings
                work on this debugger, and fails (exit 1) naming the first address that read back
                differently. --report DIR writes summary.txt, summary.json, the USB trace (trace.pcap)
                and the debugger's descriptors into DIR, for a bug report: a new folder or an earlier
                report's (it holds the trace, so --trace is not given with it).

                Examples:
                  ccbeacon doctor --ledger provisioning.sqlite
                  ccbeacon doctor --burn-test --report first-burn
                """,
            options: [
                ledger.spec, Options.json.spec, Options.trace.spec, BurnTestCommand.burnTest.spec,
                BurnTestCommand.yes.spec,
                BurnTestCommand.report.spec, Options.device.spec, Options.flashSize.spec,
            ]))
    static let command = Command(spec, Arguments.self) { arguments, console, hardware throws(CommandFailure) in
        try run(arguments, console: console, debuggers: hardware.debuggers)
    }

    /// What `doctor` was asked.
    struct Arguments: CommandArguments {
        /// With `--burn-test`: its request.
        var burnTest: BurnTestCommand.Request?
        /// The burn test's options as given, for the message when `--burn-test` is not.
        var confirmed: Bool
        var reportGiven: Bool
        var device: DeviceChoice
        var json: Bool
        var traced: Bool
        var ledger: String?

        init(_ command: ParsedCommand) throws(CommandFailure) {
            device = try DeviceChoice(command)
            burnTest = try BurnTestCommand.request(command, device: device)
            confirmed = command.isSet(BurnTestCommand.yes)
            reportGiven = try command.value(BurnTestCommand.report) != nil
            json = command.isSet(Options.json)
            traced = command.isGiven(Options.trace)
            ledger = try command.value(DoctorCommand.ledger)
        }

        func validate() throws(CommandFailure) { try BurnTestCommand.validate(self) }
    }

    static let ledger = Option<String>(
        "--ledger", value: "FILE|URL", help: "also check this ledger (a file, or postgresql://…)", completion: .files
    ) { text throws(CommandFailure) in
        guard !text.isEmpty else { throw .usage("--ledger needs a file or a postgresql:// URL") }
        return text
    }

    /// One finding.
    struct Finding {
        enum Status: String {
            case ok, warning, failed
        }
        var status: Status
        var subject: String
        var detail: String
        var fix: String?
        /// Lines shown under the fix (a udev rule to install).
        var fixLines: [String] = []
    }

    static func run(_ arguments: Arguments, console: Console, debuggers: (any DebuggerProvider)?)
        throws(CommandFailure)
    {
        // The burn test's confirmation is checked before anything is looked at.
        let burnTest = arguments.burnTest
        if let burnTest { try BurnTestCommand.checkConfirmation(burnTest, console: console) }
        var findings: [Finding] = []
        findings.append(
            Finding(
                status: .ok, subject: "ccbeacon",
                detail: "\(CommandLineTool.version) at \(Files.executablePath() ?? "?")"
                    + (getuid() == 0 ? "; running as root (the udev rule matters for the users who burn)" : "")))
        var chips: [Chip] = []
        do {
            let locations = try DataLocations.find(templatesOption: nil)
            let catalog = try locations.loadBoards()
            chips = catalog.chips
            findings.append(
                Finding(
                    status: .ok, subject: "data",
                    detail:
                        "\(catalog.boards.count) boards and the bundled templates in \(locations.dataRoot)"))
        } catch {
            findings.append(Finding(status: .failed, subject: "data", detail: error.message, fix: error.hint))
        }
        findings.append(udevRule())
        findings += devices(debuggers, chips: chips)
        if let path = arguments.ledger {
            findings.append(ledgerFinding(path))
        }
        report(findings, json: arguments.json, console: console)
        if let burnTest { try BurnTestCommand.run(burnTest, debuggers: debuggers, chips: chips, console: console) }
        if findings.contains(where: { $0.status == .failed }) {
            throw CommandFailure(
                .failure, "\(findings.filter { $0.status == .failed }.count) check(s) failed; each fix is above")
        }
    }

    /// The folders udev reads rules from, the administrator's first.
    static let ruleFolders = ["/etc/udev/rules.d", "/run/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"]

    /// Whether a rule gives the CC Debugger (0451:16a2) to users, as udev reads the rules: every
    /// `*.rules` file of `folders` in the order of their names (a file in an earlier folder hides
    /// one of the same name in a later folder), each line that is not a comment and matches the
    /// debugger exactly (udev compares `ATTR{idProduct}=="16a2"` case-sensitively; sysfs writes it
    /// in lower case). A line grants access with a group or mode, or with a `uaccess` tag in a
    /// file that sorts before systemd's 73-seat-late.rules, which acts on the tag.
    static func udevRule(folders: [String] = ruleFolders) -> Finding {
        let install =
            "install the rule: sudo cp scripts/udev/\(udevRuleFile) /etc/udev/rules.d/ (or install the ccbeacon package), then sudo udevadm control --reload-rules && sudo udevadm trigger, and replug the debugger"
        var files: [String: String] = [:]
        for folder in folders {
            guard let names = try? Files.list(folder) else { continue }
            for name in names where name.hasSuffix(".rules") && files[name] == nil {
                files[name] = Files.join(folder, name)
            }
        }
        var matching: [(name: String, path: String, line: String)] = []
        for name in files.keys.sorted() {
            guard let path = files[name], let bytes = try? Files.read(path) else { continue }
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                let rule = line.drop { $0 == " " || $0 == "\t" }
                guard !rule.hasPrefix("#"), rule.contains(#"ATTR{idVendor}=="0451""#),
                    rule.contains(#"ATTR{idProduct}=="16a2""#)
                else { continue }
                matching.append((name, path, String(rule)))
            }
        }
        guard !matching.isEmpty else {
            return Finding(
                status: .warning, subject: "udev rule",
                detail:
                    "no rule in \(folders.joined(separator: ", ")) matches the CC Debugger (0451:16a2): only root may open it",
                fix: install)
        }
        let grants = matching.filter { rule in
            rule.line.contains("GROUP=") || rule.line.contains(#"MODE="0666""#)
                || (rule.line.contains("uaccess") && rule.name < "73")
        }
        if let rule = grants.first { return Finding(status: .ok, subject: "udev rule", detail: rule.path) }
        let late = Array(Set(matching.filter { $0.line.contains("uaccess") }.map(\.path))).sorted()
        return Finding(
            status: .warning, subject: "udev rule",
            detail: late.isEmpty
                ? "\(matching[0].path) matches the CC Debugger but grants no user access (no GROUP, MODE or uaccess)"
                : "\(late.joined(separator: ", ")) tag the debugger for uaccess, but sort after systemd's 73-seat-late.rules, which acts on the tag: they give nobody access",
            fix: install + (late.isEmpty ? "" : "; then remove the old rule: sudo rm " + late.joined(separator: " ")))
    }

    /// The USB library and every debugger: may this user open it, and what is behind it.
    static func devices(_ debuggers: (any DebuggerProvider)?, chips: [Chip]) -> [Finding] {
        guard let provider = debuggers else {
            return [
                Finding(
                    status: .failed, subject: "USB", detail: "this ccbeacon was built without USB support",
                    fix: "install libusb-1.0-0-dev and rebuild, or install the ccbeacon package")
            ]
        }
        var findings: [Finding] = []
        let devices: [DebuggerDevice]
        do { devices = try provider.devices() } catch {
            let failure = DeviceSupport.failure(error)
            return [
                Finding(
                    status: .failed, subject: "USB", detail: failure.message, fix: failure.hint,
                    fixLines: failure.hintLines)
            ]
        }
        findings.append(
            Finding(
                status: devices.isEmpty ? .warning : .ok, subject: "USB",
                detail: "\(provider.backend); \(devices.count) debugger(s) attached",
                fix: devices.isEmpty
                    ? "plug a CC Debugger in (lsusb lists it as 0451:16a2); a SmartRF05EB or SmartRF04EB works too"
                    : nil))
        for device in devices {
            let subject =
                "debugger \(device.selector)" + (device.portPath.map { " (port \($0))" } ?? "")
                + (device.serial.map { ", serial \($0)" } ?? "")
            do {
                let session = CC254xSession(transport: try provider.open(device), chips: chips)
                let state = try session.open()
                guard state.targetID != 0 else {
                    findings.append(
                        Finding(
                            status: .warning, subject: subject, detail: "opens, but sees no target chip",
                            fix: DeviceSupport.noTargetHint))
                    continue
                }
                if let note = DebuggerModel.firmwareNote(revision: state.firmwareRevision) {
                    findings.append(
                        Finding(
                            status: .warning, subject: subject,
                            detail:
                                "firmware \(HexText.address(Int(state.firmwareID))) rev \(HexText.address(Int(state.firmwareRevision)))",
                            fix: note))
                }
                guard !chips.isEmpty else {
                    findings.append(
                        Finding(
                            status: .warning, subject: subject,
                            detail:
                                "opens; target \(HexText.address(Int(state.targetID))) (its chip is not told without boards/chips.json)",
                            fix: "see the data finding above"))
                    continue
                }
                let identity = try session.connect(targetID: state.targetID, debuggerID: device.debuggerID)
                // Connecting halted the chip: let it run again, as it was.
                defer { try? session.resetAndRun() }
                if identity.locked {
                    findings.append(
                        Finding(
                            status: .warning, subject: subject,
                            detail: "opens; its target \(HexText.address(Int(state.targetID))) is debug-locked",
                            fix:
                                "'ccbeacon erase' unlocks it (and clears its flash); provision --reprovision does it too"
                        ))
                    continue
                }
                let chip = identity.chip(targetID: state.targetID, in: chips)
                let address = chip.map { (chip: Chip) -> String in
                    do {
                        return try session.primaryAddress(chip: chip).map(HexText.colonSeparated)
                            ?? "none (the \(chip.family) has none)"
                    } catch { return "?" }  // a failed read
                }
                // A chip that reports no size is known by its family until one is given.
                let family = ChipFamily(targetID: state.targetID, in: chips).flatMap { $0.reportsFlashSize ? nil : $0 }
                findings.append(
                    Finding(
                        status: chip == nil && family == nil ? .warning : .ok, subject: subject,
                        detail: "opens; target "
                            + (chip.map { "\($0.name) (\($0.flashSize / 1024) KiB), IEEE address \(address ?? "?")" }
                                ?? family.map { "\($0.name) (it does not report its flash size)" }
                                ?? "\(HexText.address(Int(state.targetID))), not a chip of boards/chips.json"),
                        fix: chip == nil && family == nil ? DeviceSupport.unknownChipHint : nil))
            } catch {
                let failure = DeviceSupport.failure(error)
                var fix = failure.hint
                if case .transport(.accessDenied, _) = error {
                    let user = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "uid \(getuid())"
                    fix = "this user (\(user)) may not open it: " + (fix ?? "")
                }
                findings.append(
                    Finding(
                        status: .failed, subject: subject, detail: failure.message, fix: fix,
                        fixLines: failure.hintLines))
            }
        }
        return findings
    }

    /// Whether the ledger at `path` can be used: a server reachable and a ccbeacon ledger; a file
    /// a ledger (or absent) in a folder this user may write.
    static func ledgerFinding(_ path: String) -> Finding {
        if PostgresURL.isURL(path) {
            let shown = PostgresURL.shown(path)
            do {
                let server = try PostgresLedger(url: path, bench: "", creating: false)
                return Finding(
                    status: .ok, subject: "ledger",
                    detail:
                        "\(shown): a ccbeacon ledger, schema version \(server.databaseVersion), \((try? server.states().count) ?? 0) stations"
                )
            } catch {
                // An empty database is what the setup in ccbeacon-provision(1) makes: the first provision sets it
                // up, as it creates a missing file.
                if case .refused(.notALedger(tables: [])) = error.kind {
                    return Finding(
                        status: .ok, subject: "ledger",
                        detail: "\(shown): reachable; holds no ccbeacon ledger yet; provision sets it up")
                }
                return Finding(
                    status: .failed, subject: "ledger", detail: "\(error.operation): \(error.message)",
                    fix:
                        "check the URL, that the server runs and that this user may connect (a new database is set up by the first provision)"
                )
            }
        }
        let folder = Files.directory(of: path).isEmpty ? "." : Files.directory(of: path)
        guard Files.isDirectory(folder) else {
            return Finding(
                status: .failed, subject: "ledger", detail: "\(path): the folder \(folder) does not exist",
                fix: "make the folder, or give --ledger a path in an existing one")
        }
        let writable = access(folder, W_OK) == 0
        guard Files.exists(path) else {
            return Finding(
                status: writable ? .ok : .failed, subject: "ledger",
                detail: writable
                    ? "\(path) does not exist yet; provision creates it" : "\(path): its folder cannot be written",
                fix: writable ? nil : "give a ledger in a folder this user may write")
        }
        do {
            let ledger = try SQLiteLedger(path: path, access: .readOnly)
            guard writable, access(path, W_OK) == 0 else {
                return Finding(
                    status: .failed, subject: "ledger",
                    detail: "\(path) is a ledger, but this user may not write it or its folder",
                    fix: "provision writes the ledger and a lock beside it: make both writable for this user")
            }
            return Finding(
                status: .ok, subject: "ledger",
                detail:
                    "\(path): a ccbeacon ledger, schema version \(ledger.fileSchemaVersion), \((try? ledger.states().count) ?? 0) stations"
            )
        } catch {
            return Finding(
                status: .failed, subject: "ledger", detail: "\(error.operation): \(error.message)",
                fix: "see 'ccbeacon ledger check --ledger \(path)'")
        }
    }

    static func report(_ findings: [Finding], json: Bool, console: Console) {
        if json {
            console.data(
                JSONValue.array(
                    findings.map { finding in
                        .object([
                            ("status", .string(finding.status.rawValue)), ("subject", .string(finding.subject)),
                            ("detail", .string(finding.detail)),
                            (
                                "fix",
                                finding.fix.map { .string(([$0] + finding.fixLines).joined(separator: "\n")) } ?? .null
                            ),
                        ])
                    }
                ).rendered() + "\n")
            return
        }
        var lines: [String] = []
        for finding in findings {
            let mark =
                switch finding.status {
                case .ok: "ok     "
                case .warning: "WARN   "
                case .failed: "FAILED "
                }
            lines.append(mark + finding.subject + ": " + finding.detail)
            if let fix = finding.fix { lines.append("       fix: " + fix) }
            lines += finding.fixLines.map { "            " + $0 }
        }
        console.output(lines: lines)
    }
}

import CCDebugger
import CCDebuggerEmulator
import Foundation
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// A debugger provider whose debuggers this user may not open (as without the udev rule).
final class DeniedProvider: DebuggerProvider, Sendable {
    let inner = EmulatorProvider(count: 2)
    let denied: Set<String>

    init(denying denied: Set<String>) { self.denied = denied }

    func devices() throws(DebuggerError) -> [DebuggerDevice] { try inner.devices() }

    func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport {
        if denied.contains(device.serial ?? "") {
            throw .transport(.accessDenied, during: .opening(selector: device.selector))
        }
        return try inner.open(device)
    }
}

/// `ccbeacon doctor`: every finding with its fix, and exit 1 only when something fails.
struct DoctorTests {
    @Test func aWorkingBenchIsReportedWithItsChips() {
        let provider = EmulatorProvider(count: 2)
        let run = ToolRun(["doctor"], debuggers: provider)
        #expect(run.status == 0, "\(run.output)\(run.diagnostics)")
        #expect(run.output.contains("ok     data: 4 boards and the bundled templates in "))
        #expect(run.output.contains("ok     USB: emulated (in process); 2 debugger(s) attached"))
        #expect(
            run.output.contains(
                "ok     debugger 1:10 (port 1-1), serial EMU001: opens; target CC2541F256 (256 KiB), IEEE address 00:12:4B:00:25:41"
            ),
            "\(run.output)")
    }

    /// A debugger this user may not open fails, with the exact fix: the rule, reload, replug.
    /// A chip without a factory address (the CC2543/44/45) is said to have none, not a blank.
    @Test func aChipWithoutAFactoryAddressIsSaidToHaveNone() {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named("CC2543F32")!)
        let run = ToolRun(["doctor"], debuggers: provider)
        #expect(run.status == 0, "\(run.output)\(run.diagnostics)")
        #expect(
            run.output.contains("target CC2543F32 (32 KiB), IEEE address none (the CC2543 has none)\n"), "\(run.output)"
        )
    }

    @Test func aDebuggerThisUserMayNotOpenFailsWithTheFix() {
        let run = ToolRun(["doctor"], debuggers: DeniedProvider(denying: ["EMU002"]))
        #expect(run.status == 1)
        #expect(run.output.contains("ok     debugger 1:10 (port 1-1), serial EMU001: opens"), "\(run.output)")
        #expect(run.output.contains("FAILED debugger 1:11 (port 1-2), serial EMU002: "), "\(run.output)")
        #expect(
            run.output.contains(
                "may not open it: you may not open the debugger; install the udev rule (scripts/udev/70-ccbeacon.rules")
        )
        #expect(run.output.contains("fix: this user ("))
        #expect(run.output.contains("and replug it"))
        for rule in udevRule.split(separator: "\n") {
            #expect(run.output.contains("\n            \(rule)\n"), "each rule on its own line: \(run.output)")
        }
        #expect(run.diagnostics.contains("1 check(s) failed; each fix is above"))
    }

    @Test func noTargetAndALockedTargetAreWarnedAbout() {
        let provider = EmulatorProvider(count: 2)
        provider.debuggers[0].chip = nil
        provider.debuggers[1].chip?.setDebugLockBit()
        let run = ToolRun(["doctor", "--json"], debuggers: provider)
        #expect(run.status == 0, "warnings only")
        let findings = (try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [[String: Any]]) ?? []
        let first = findings.first { ($0["subject"] as? String)?.contains("EMU001") == true }
        let second = findings.first { ($0["subject"] as? String)?.contains("EMU002") == true }
        #expect(first?["status"] as? String == "warning" && (first?["fix"] as? String)?.contains("wiring") == true)
        #expect(
            second?["status"] as? String == "warning" && (second?["fix"] as? String)?.contains("ccbeacon erase") == true
        )
    }

    /// The udev rule: none; one that tags for uaccess too late (after 73-seat-late.rules); ours.
    @Test func theUdevRuleIsFoundAndJudged() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let etc = scratch.path("etc")
        let lib = scratch.path("lib")
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: lib, withIntermediateDirectories: true)
        #expect(DoctorCommand.udevRule(folders: [etc, lib]).status == .warning)
        let late = #"SUBSYSTEM=="usb", ATTR{idVendor}=="0451", ATTR{idProduct}=="16a2", MODE="0660", TAG+="uaccess""#
        _ = try scratch.write("lib/99-ccbeacon.rules", late + "\n")
        let tooLate = DoctorCommand.udevRule(folders: [etc, lib])
        #expect(tooLate.status == .warning && tooLate.detail.contains("sort after systemd's 73-seat-late.rules"))
        #expect(tooLate.fix?.contains("sudo rm \(lib)/99-ccbeacon.rules") == true)
        _ = try scratch.write("etc/70-ccbeacon.rules", udevRule + "\n")
        let good = DoctorCommand.udevRule(folders: [etc, lib])
        #expect(good.status == .ok && good.detail == "\(etc)/70-ccbeacon.rules")
    }

    /// As udev reads them (a review found a text search): the packaged rule with an old 99- rule
    /// beside it is fine; a comment or an upper-case product id matches nothing.
    @Test func rulesAreReadAsUdevReadsThem() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let etc = scratch.path("etc")
        let lib = scratch.path("lib")
        for folder in [etc, lib] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        _ = try scratch.write(
            "etc/50-comment.rules",
            "# the CC Debugger is 0451:16a2, see ATTR{idVendor}==\"0451\", ATTR{idProduct}==\"16a2\"\n")
        #expect(DoctorCommand.udevRule(folders: [etc, lib]).status == .warning)
        _ = try scratch.write(
            "etc/60-upper.rules",
            #"SUBSYSTEM=="usb", ATTR{idVendor}=="0451", ATTR{idProduct}=="16A2", GROUP="plugdev""# + "\n")
        #expect(DoctorCommand.udevRule(folders: [etc, lib]).status == .warning, "16A2 never matches sysfs's 16a2")
        _ = try scratch.write(
            "etc/99-ccbeacon.rules",
            #"SUBSYSTEM=="usb", ATTR{idVendor}=="0451", ATTR{idProduct}=="16a2", MODE="0660", TAG+="uaccess""# + "\n")
        _ = try scratch.write("lib/70-ccbeacon.rules", udevRule + "\n")
        let both = DoctorCommand.udevRule(folders: [etc, lib])
        #expect(both.status == .ok && both.detail == "\(lib)/70-ccbeacon.rules", "\(both)")
    }

    @Test func theLedgerIsChecked() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let provider = EmulatorProvider()
        let missingFolder = ToolRun(["doctor", "--ledger", scratch.path("nowhere/l.sqlite")], debuggers: provider)
        #expect(missingFolder.status == 1 && missingFolder.output.contains("does not exist"))
        let fresh = ToolRun(["doctor", "--ledger", scratch.path("l.sqlite")], debuggers: provider)
        #expect(fresh.status == 0 && fresh.output.contains("does not exist yet; provision creates it"))
        let notALedger = try scratch.write("list.csv", "name,uuid,major,minor\n")
        let refused = ToolRun(["doctor", "--ledger", notALedger], debuggers: provider)
        #expect(refused.status == 1 && refused.output.contains("FAILED ledger: "), "\(refused.output)")
        #expect(!refused.output.contains("ledger: ledger:"), "\(refused.output)")
        // An empty database is what the README's setup makes: ready, as a missing file is.
        if PostgresTestServer.available {
            let url = try PostgresTestServer.freshDatabase()
            let empty = ToolRun(["doctor", "--ledger", url], debuggers: provider)
            #expect(
                empty.status == 0 && empty.output.contains("holds no ccbeacon ledger yet; provision sets it up"),
                "\(empty.output)")
            #expect(!empty.output.contains("FAILED"), "\(empty.output)")
        }
    }
}

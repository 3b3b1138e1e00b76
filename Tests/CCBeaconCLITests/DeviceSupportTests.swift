import CCDebugger
import CCDebuggerEmulator
import Foundation
import IntelHex
import Provisioning
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

struct UdevRuleTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/udev")

    /// The rule the access-denied hint prints is the one shipped in scripts/udev/.
    @Test func hintAndShippedRuleAgree() throws {
        let file = Self.folder.appendingPathComponent(udevRuleFile)
        let shipped = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(shipped.map(String.init) == udevRule.split(separator: "\n").map(String.init))
        let failure = DeviceSupport.failure(.transport(.accessDenied, during: .opening(selector: nil)))
        #expect(failure.hint?.contains("/etc/udev/rules.d/\(udevRuleFile)") == true)
        #expect(failure.hintLines == udevRule.split(separator: "\n").map(String.init), "the rule, a line each")
    }

    /// systemd-logind turns the `uaccess` tag into the logged-in user's access in
    /// 73-seat-late.rules: a rule that sets it must come before (a 99- rule set it too late and
    /// gave nobody access). And a bench reached over SSH has no seat: the plugdev group is there
    /// for it.
    @Test func theRuleTagsBeforeLogindReadsTheTag() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter {
            $0.hasSuffix(".rules")
        }
        #expect(files == [udevRuleFile])
        #expect(udevRuleFile < "73-seat-late.rules")
        #expect(udevRule.split(separator: "\n").allSatisfy { $0.contains("GROUP=\"plugdev\"") })
    }
}

/// A transfer that fails while the flash may be half changed tells the user the chip is partly
/// written, whatever step it was — the words of the step no longer decide (waiting for the flash
/// controller and setting up the DMA were missed when they did).
struct TransportFailureHintTests {
    static let partlyWritten = "the chip is left partly written"

    @Test(arguments: [
        (DebuggerOperation.startingErase, true), (.waitingForErase, true), (.settingUpDMA, true),
        (.programming(address: 0x400), true),
        (.programming(address: nil), true), (.waitingForFlash, true), (.verifying(address: 0), true),
        (.waitingForCRC, true), (.askingState, false), (.identifying, false), (.readingFlash(address: 0), false),
        (.resettingToRun, false), (.opening(selector: "1:7"), false),
    ])
    func theHintFollowsWhatTheStepMayHaveChanged(operation: DebuggerOperation, changesFlash: Bool) {
        for error in [
            TransportError.timeout, .noDevice, .pipe, .libusb(LibUSBErrorCode(rawValue: -1, name: "LIBUSB_ERROR_IO")),
        ] {
            let failure = DeviceSupport.failure(.transport(error, during: operation))
            // The erase's start leaves the chip partly erased (the fifth review: it said written).
            let left =
                [.startingErase, .waitingForErase].contains(operation)
                ? "the chip may be left partly erased" : Self.partlyWritten
            #expect(failure.hint?.contains(left) == changesFlash, "\(operation) \(error)")
            #expect(failure.message.hasSuffix("while \(operation)"), "\(failure.message)")
        }
    }

    /// Once the chip erase has begun (`flashChanged`), a lost transfer gets one hint whichever
    /// step it was: the flash may be changed (said once, not twice, as burn-test's once did), then
    /// the command's own advice (`flash`: flash again, or the framing hint), else to try again —
    /// a burn test has no image to flash.
    @Test(arguments: [
        DebuggerOperation.programming(address: 0x400), .startingErase, .waitingForCRC, .readingFlash(address: 0),
    ])
    func afterTheEraseATransportFailureSaysTheFlashChangedOnce(operation: DebuggerOperation) {
        let changed = "the chip's flash may be erased or partly written"
        for error in [TransportError.timeout, .noDevice, .pipe] {
            let failure = DeviceSupport.failure(.transport(error, during: operation), flashChanged: true)
            #expect(failure.hint == "\(changed); replug the debugger, press its reset button and try again")
            let flash = DeviceSupport.failure(
                .transport(error, during: operation), flashChanged: true, transportAdvice: DeviceSupport.reflashAdvice)
            #expect(flash.hint == "\(changed); \(DeviceSupport.reflashAdvice)", "\(operation) \(error)")
            // Before the erase, a step that may change the flash says so, whatever the advice.
            let unchanged = DeviceSupport.failure(.transport(error, during: operation), transportAdvice: "advice")
            #expect(
                unchanged.hint
                    == (operation.mayLeaveFlashChanged
                        ? "\(DeviceSupport.leftPartly(operation)); advice"
                        : "replug the debugger, press its reset button and try again"))
        }
    }

    @Test func aLibUSBErrorKeepsItsCode() {
        let error = DebuggerError.transport(
            .libusb(LibUSBErrorCode(rawValue: -1, name: "LIBUSB_ERROR_IO")), during: .readingFlash(address: 0x7F00))
        #expect(error.description == "USB error LIBUSB_ERROR_IO (-1) while reading flash at 0x7F00")
    }
}

/// Why `provision` stopped, in its summary and exit status (3: stations left).
struct ProvisionStopReasonTests {
    /// An emulated debugger on a bench: after each reset to run, a fresh chip (new address).
    static func bench() -> EmulatorProvider {
        let provider = EmulatorProvider()
        let next = Atomic<UInt8>(0x50)
        provider.debuggers[0].onResetToRun = { debugger in
            let number = next.add(1, ordering: .relaxed).newValue
            debugger.chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x77, number])
        }
        return provider
    }

    /// One debugger named twice (by two names) would burn two stations into one chip at once;
    /// a selection that names none would start a run with no debugger; `all` among names means
    /// nothing clear. All are usage errors.
    @Test(arguments: ["EMU001,EMU001", "1:10,EMU001", ",", "", "all,1:10", "port:1-1,,port:1-2", "EMU001,"])
    func aDebuggerNamedTwiceOrNoneIsRefused(selection: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write(
            "list.csv", "name,uuid,major,minor\nA,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\n")
        let provider = EmulatorProvider(count: 2)
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.2", "--devices", selection],
            debuggers: provider)
        #expect(run.status == 64, "\(selection): \(run.diagnostics)")
        #expect(provider.debuggers.allSatisfy { $0.chip!.flash.allSatisfy { $0 == 0xFF } }, "nothing was burned")
    }

    /// A ledger that failed is what stopped the run, whatever else the debuggers said; it is not
    /// "every debugger failed".
    @Test func aLedgerFailureIsTheStopReason() {
        var summary = ProvisionSummary()
        summary.stopped = [
            "EMU001": "no new chip within 1 s", "EMU002": "ledger: recording an outcome: database is locked",
        ]
        #expect(
            ProvisionCommand.stopReason(summary, signal: 0)
                == "the ledger failed (EMU002): recording an outcome: database is locked")
        summary.stopped = ["EMU001": "USB transfer timed out while programming", "EMU002": "no target chip within 1 s"]
        #expect(!ProvisionCommand.stopReason(summary, signal: 0).contains("ledger"))
        #expect(ProvisionCommand.unrecorded(1).contains("1 left in progress (the outcome could not be recorded"))
    }

    /// Two lists share one ledger (the default, beside both): each run burns its own list's
    /// stations only, with its own settings, and its exit status is about its own list. (A run
    /// of one list once burned the other's pending stations, with the wrong settings.)
    @Test func aRunBurnsOnlyTheStationsOfItsOwnList() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hall = try scratch.write(
            "hall.csv",
            "name,uuid,major,minor\nHall 1,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\nHall 2,7634A485-1732-4B7D-AB44-D505D8A24C60,1,2\n"
        )
        let lab = try scratch.write(
            "lab.csv", "name,uuid,major,minor\nLab X,7634A485-1732-4B7D-AB44-D505D8A24C60,8,1\n")
        let one = EmulatorProvider()  // one chip, never swapped: Hall 1 only
        let first = ToolRun(
            ["provision", hall, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.2"], debuggers: one)
        #expect(first.status == 3, "\(first.diagnostics)")
        let second = ToolRun(
            [
                "provision", lab, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.2", "--tx-power", "-20",
                "--json",
            ],
            debuggers: Self.bench())
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(!second.diagnostics.contains("Hall 2"), "\(second.diagnostics)")
        let summary = try JSONSerialization.jsonObject(with: Data(second.output.utf8)) as? [String: Any]
        #expect(summary?["verified"] as? [String] == ["Lab X"])
        #expect(summary?["listDone"] as? Int == 1 && summary?["listPending"] as? Int == 0)
        // Hall's run still sees Hall 2 pending, and it is burned with hall's settings.
        let third = ToolRun(
            ["provision", hall, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.2"], debuggers: Self.bench())
        #expect(third.status == 0, "\(third.diagnostics)")
        #expect(third.output.contains("provisioned 1 station(s) in this run; 2 of 2 done"), "\(third.output)")
    }

    static func list(_ scratch: Scratch) throws -> String {
        try scratch.write(
            "list.csv",
            "name,uuid,major,minor\na,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\nb,7634A485-1732-4B7D-AB44-D505D8A24C60,1,2\n"
        )
    }

    @Test func noTargetAndEveryDebuggerFailedAreTold() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch)
        let empty = EmulatorProvider()
        empty.debuggers[0].chip = nil
        let none = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.2"], debuggers: empty)
        #expect(none.status == 3)
        #expect(
            none.output.contains(
                "stopped: EMU001: no target chip within 0.2 s (none attached, or check the wiring and power)"),
            "\(none.output)")
        let unplugged = EmulatorProvider(count: 2)
        for debugger in unplugged.debuggers { debugger.faults.unplugAfterTransfers = 3 }
        let failed = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--devices", "all", "--wait", "5"],
            debuggers: unplugged)
        #expect(failed.status == 3)
        #expect(
            failed.output.contains("stopped: every debugger failed: EMU001: the debugger is gone"), "\(failed.output)")
        #expect(failed.diagnostics.contains("stopped with 2 stations of the list left (2 pending, 0 held)"))
    }
}

/// Emulated debuggers that all carry one serial number, as CC Debuggers often do.
final class SharedSerialProvider: DebuggerProvider, Sendable {
    let base: EmulatorProvider

    init(_ base: EmulatorProvider) { self.base = base }

    func devices() throws(DebuggerError) -> [DebuggerDevice] {
        try base.devices().map { device in
            var shared = device
            shared.serial = "CCDBG"
            return shared
        }
    }

    func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport { try base.open(device) }
}

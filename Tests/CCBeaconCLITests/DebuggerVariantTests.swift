import CCDebugger
import CCDebuggerEmulator
import Foundation
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// The debuggers people own, as far as they are known (first-contact.md): firmware revisions
/// seen in the wild, the first-contact trap of a debugger that sees no target until its reset
/// button is pressed, and the slow debug clock users' timings imply. Each says what to do.
struct DebuggerVariantTests {
    /// No target until the reset button is pressed: every command that looks for the target
    /// leads with the button; once pressed, the chip is there.
    @Test func theResetButtonTrapIsNamedFirst() throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].seesTargetOnlyAfterResetButton = true
        let info = ToolRun(["info"], debuggers: provider)
        #expect(info.status == 1)
        #expect(info.diagnostics.contains("error: the debugger sees no target chip"))
        #expect(info.diagnostics.contains("hint: press the debugger's reset button"), "\(info.diagnostics)")
        let devices = ToolRun(["devices"], debuggers: provider)
        #expect(devices.status == 0)
        #expect(devices.output.contains("none"))
        #expect(
            devices.diagnostics.contains("a debugger shows no target: press the debugger's reset button"),
            "\(devices.diagnostics)")
        let doctor = ToolRun(["doctor"], debuggers: provider)
        #expect(doctor.output.contains("opens, but sees no target chip"))
        #expect(doctor.output.contains("press the debugger's reset button"))
        provider.debuggers[0].pressResetButton()
        let pressed = ToolRun(["info"], debuggers: provider)
        #expect(pressed.status == 0, "\(pressed.diagnostics)")
        #expect(ToolRun(["devices"], debuggers: provider).diagnostics.isEmpty)
    }

    /// The revisions seen in the wild pass without a word; another is a warning that says what
    /// to do, and works all the same.
    @Test(arguments: [(UInt16(0x0027), false), (0x0032, false), (0x0044, false), (0x0099, true)])
    func firmwareRevisions(revision: UInt16, noted: Bool) throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].firmware = (0x05CC, revision)
        let doctor = ToolRun(["doctor"], debuggers: provider)
        #expect(doctor.output.contains("has not been seen with open clients") == noted, "\(doctor.output)")
        #expect(doctor.output.contains("SmartRF Flash Programmer") == noted)
        let devices = ToolRun(["devices"], debuggers: provider)
        #expect(devices.output.contains("0x5CC rev \(HexTextShown.address(revision))"))
        #expect(devices.diagnostics.contains("has not been seen") == noted)
        let info = ToolRun(["info"], debuggers: provider)
        #expect(info.status == 0)
    }

    /// A debug clock of 150 kHz (about what a user's 241 KB in 17.95 s implies): every transfer
    /// stays inside ccbeacon's timeouts and the burn test passes, on modelled device time.
    @Test func aSlowDebugClockStillBurns() throws {
        let clock = VirtualDeviceClock()
        let provider = EmulatorProvider(timing: DeviceTiming(debugClockHertz: 150_000), clock: clock)
        let run = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("framings that work on this debugger: proven, packed"))
        // The longest single transfer: a 1 KiB read (9,221 bytes of debug commands) at 150 kHz.
        let read = DeviceTiming(debugClockHertz: 150_000).debugTime(bytes: 9221)
        #expect(read < .milliseconds(3000), "inside the 3 s transfer timeout: \(read)")
    }
}

/// Hex as ccbeacon prints it.
enum HexTextShown {
    static func address(_ value: UInt16) -> String { "0x" + String(value, radix: 16, uppercase: true) }
}

/// A selector that can name no debugger is a usage error before anything is opened: an empty
/// port (`port:`), a port path that is not one (`port:1-x`), an empty selector.
struct SelectorTests {
    @Test(arguments: [
        (["info", "--device", "port:"], "--device 'port:' names no port"),
        (["info", "--device", "port:1-x"], "--device 'port:1-x' is not a port path"),
        (["info", "--device", ""], "--device '' needs a debugger"),
        (
            ["provision", "LIST", "--template", "cc2541-ibeacon", "--yes", "--devices", "port:"],
            "--devices 'port:' names no port"
        ),
        (
            ["provision", "LIST", "--template", "cc2541-ibeacon", "--yes", "--devices", "1:10,port:2-"],
            "--devices 'port:2-' is not a port path"
        ),
    ])
    func aSelectorThatNamesNothingIsRefused(arguments: [String], message: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nA,\(DeviceCommandTests.uuid),1,1\n")
        let provider = EmulatorProvider()
        provider.debuggers[0].logging = true
        let run = ToolRun(arguments.map { $0 == "LIST" ? list : $0 }, debuggers: provider)
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
        #expect(provider.debuggers[0].log.isEmpty)
    }
}

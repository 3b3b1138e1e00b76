import Foundation
import TestSupport
import Testing

/// The debuggers people own, through real libusb: the SmartRF04EB and SmartRF05EB identities,
/// clones with other (or hostile, or missing) descriptor strings, firmware revisions seen in the
/// wild, the no-target-until-reset trap and a slow debug clock. cc-tool, unmodified, sees the
/// same emulated debugger as ccbeacon does.
@Suite(.serialized, .enabled(if: Tools.available, "needs umockdev and the built executables"))
struct DebuggerVariantThroughLibUSBTests {
    @Test(arguments: [
        ("smartrf05eb", "0451:16A0", "SmartRF05 Evaluation Board", "0x0032"),
        ("smartrf04eb", "11A0:DB20", "SmartRF04 Evaluation Board", "0x0027"),
        ("cc-debugger", "0451:16A2", "CC Debugger", "0x0044"),
    ])
    func everyModelIsListedIdentifiedAndFlashed(model: String, usb: String, name: String, revision: String) throws {
        let work = try Workspace()
        defer { work.remove() }
        let (station, flash) = try work.station()
        let options = ["--model", model, "--firmware-revision", revision]
        let devices = try Tools.ccbeacon(["devices"], options: options, in: work.url)
        #expect(devices.status == 0, "\(devices.errors)")
        let shownRevision = "0x" + String(Int(revision.dropFirst(2), radix: 16)!, radix: 16, uppercase: true)
        #expect(
            devices.output.contains("\(usb)  \(name)  EMU001  0x5CC rev \(shownRevision)  CC2541"), "\(devices.output)")
        #expect(devices.errors.isEmpty, "a revision seen in the wild is not remarked on: \(devices.errors)")
        let burn = try Tools.ccbeacon(
            ["flash", station], options: options + ["--save-flash", work.path("f.bin")], in: work.url)
        #expect(burn.status == 0, "\(burn.errors)")
        #expect(try work.bytes("f.bin") == flash)
        if let ccTool = Tools.ccTool {
            let reference = try Tools.run(options, [ccTool, "--test"], in: work.url)
            #expect(reference.output.contains("Programmer: \(name)"))
            #expect(
                reference.output.contains(
                    "Revision: \(revision.uppercased().replacingOccurrences(of: "0X", with: "0x"))"))
        }
    }

    /// A clone's strings are shown as it sends them (UTF-16 kept), a hostile one made visible, a
    /// missing serial number leaves the port to select it by.
    @Test func clonesWithOtherStrings() throws {
        let work = try Workspace()
        defer { work.remove() }
        let clone = try Tools.ccbeacon(
            ["devices"], options: ["--manufacturer", "Shenzhen", "--product", "CC Debugger клон", "--serial", "none"],
            in: work.url)
        #expect(clone.output.contains("0451:16A2  CC Debugger клон  -  "), "\(clone.output)")
        let chosen = try Tools.ccbeacon(
            ["info", "--device", "port:1-1"], options: ["--product", "CC Debugger клон", "--serial", "none"],
            in: work.url)
        #expect(chosen.status == 0, "\(chosen.errors)")
        let hostile = try Tools.ccbeacon(
            ["devices"], options: ["--product", "Evil\u{1B}[31mRED\u{202E}"], in: work.url)
        #expect(!hostile.output.contains("\u{1B}") && !hostile.output.contains("\u{202E}"), "\(hostile.output)")
        #expect(hostile.output.contains("Evil"))
    }

    /// The first-contact trap through libusb: the message leads with the reset button; cc-tool
    /// sees no target either.
    @Test func noTargetUntilTheResetButton() throws {
        let work = try Workspace()
        defer { work.remove() }
        let info = try Tools.ccbeacon(["info"], options: ["--no-target-until-reset"], in: work.url)
        #expect(info.status == 1)
        #expect(info.errors.contains("hint: press the debugger's reset button"), "\(info.errors)")
        let burn = try Tools.ccbeacon(
            ["doctor", "--burn-test", "--yes"], options: ["--no-target-until-reset"], in: work.url)
        #expect(burn.status == 1)
        #expect(burn.errors.contains("press the debugger's reset button"))
        if let ccTool = Tools.ccTool {
            let reference = try Tools.run(["--no-target-until-reset"], [ccTool, "--test"], in: work.url)
            #expect(reference.output.contains("No target detected"))
        }
    }

    /// A firmware revision nobody has reported: said, with what to do; the burn works.
    @Test func anUnknownRevisionIsSaid() throws {
        let work = try Workspace()
        defer { work.remove() }
        let devices = try Tools.ccbeacon(["devices"], options: ["--firmware-revision", "0x0099"], in: work.url)
        #expect(
            devices.errors.contains("firmware revision 0x99 has not been seen with open clients"), "\(devices.errors)")
    }

    /// At a 150 kHz debug clock on modelled device time, a station burns and verifies inside
    /// every timeout.
    @Test func aSlowDebugClock() throws {
        let work = try Workspace()
        defer { work.remove() }
        let (station, flash) = try work.station()
        let burn = try Tools.ccbeacon(
            ["flash", station],
            options: ["--timing", "hardware", "--debug-clock-khz", "150", "--save-flash", work.path("f.bin")],
            in: work.url)
        #expect(burn.status == 0, "\(burn.errors)")
        #expect(try work.bytes("f.bin") == flash)
    }
}

import FirmwareTemplate
import Foundation
import IntelHex
import TestSupport
import Testing

@testable import CCBeaconCLI

/// `--battery` through the command line: the estimate inspect, generate and plan print is the
/// model's for the image's own settings, and every image the model does not describe gets the
/// reason instead of a number.
struct BatteryCommandTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
    static let identity = ["--uuid", uuid, "--major", "1", "--minor", "2"]

    /// The model's line for a reference station of `milliseconds` and `dBm` on a CR2032.
    static func modelLine(milliseconds: String, dBm: Int, battery: String = "cr2032") throws -> String {
        let template = try BundledData.template()
        let checked = try template.check(
            StationSettings(interval: try .init(parsingMilliseconds: milliseconds), txPower: dBm))
        let settings = template.stationImage(for: try .init(uuid: uuid, major: "1", minor: "2"), settings: checked)
            .settings
        return try template.batteryEstimate(settings: settings, battery: try Battery(parsing: battery)).get()
            .summary
    }

    @Test func generateAndInspectPrintTheModelsEstimateForTheImagesSettings() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = scratch.path("s.hex")
        let generate = ToolRun(
            ["generate", "--template", "cc2541-ibeacon"] + Self.identity + [
                "--interval", "250", "--tx-power", "-6", "-o", image, "--battery", "cr2032",
            ])
        #expect(generate.status == 0, "\(generate.diagnostics)")
        let line = try Self.modelLine(milliseconds: "250", dBm: -6)
        #expect(generate.output.hasSuffix(line + "\n"), "\(generate.output)")
        let inspect = ToolRun(["inspect", image, "--template", "cc2541-ibeacon", "--battery", "cr2032"])
        #expect(inspect.status == 0)
        #expect(inspect.output.hasSuffix("  " + line + "\n"), "\(inspect.output)")
        let json = ToolRun(["inspect", image, "--template", "cc2541-ibeacon", "--battery", "cr2032", "--json"])
        let battery = try #require(Self.batteryObject(json.output))
        #expect(battery["battery"] as? String == "CR2032")
        #expect(battery["measured"] as? Bool == false)
        #expect(battery["txPowerDbm"] as? Int == -6)
        let days = try #require(battery["batteryLifeDays"] as? Double, "\(json.output)")
        #expect(line.contains("about \(Int(days.rounded())) days"), "\(days) vs \(line)")
    }

    /// Without --template, inspect finds the template the image is a station of by its code; an
    /// image that is a station of none gets the reason.
    @Test func inspectFindsTheTemplateByTheImagesCode() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = scratch.path("s.hex")
        let generate = ToolRun(
            ["generate", "--template", "cc2541-ibeacon-prewhitened"] + Self.identity + [
                "--interval", "500", "-o", image,
            ])
        #expect(generate.status == 0, "\(generate.diagnostics)")
        let template = try BundledData.template("cc2541-ibeacon-prewhitened")
        let file = try IntelHexFile(text: Array(try Data(contentsOf: URL(fileURLWithPath: image))))
        let line = try template.batteryEstimate(
            settings: template.foundSettings(in: file.memory), battery: try Battery(parsing: "cr2450")
        ).get().summary
        let run = ToolRun(["inspect", image, "--battery", "cr2450"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("\nfound by the image's code: template 'cc2541-ibeacon-prewhitened'\n"))
        #expect(run.output.hasSuffix("  the rest of the image equals the template\n  \(line)\n"), "\(run.output)")
        let json = try #require(
            Self.batteryObject(ToolRun(["inspect", image, "--battery", "cr2450", "--json"]).output))
        #expect(json["template"] as? String == "cc2541-ibeacon-prewhitened")
        let changed = try file.patchingRecords([MemoryPatch(address: 0x0100, bytes: [0xA5])]).file
        try Data(changed.text).write(to: URL(fileURLWithPath: image))
        let none = ToolRun(["inspect", image, "--battery", "cr2450", "--json"])
        let reason = try #require(Self.batteryObject(none.output))
        #expect(reason["template"] is NSNull)
        #expect(reason["batteryLifeDays"] is NSNull)
        #expect(
            reason["reason"] as? String
                == "no battery estimate: the image holds the code of no template here (see 'ccbeacon templates'), so its advertising is unknown"
        )
    }

    /// Found by a review of the template search: a user's template of a bundled one's name is
    /// shown with its folder; of the templates whose code an image holds, one that says what its
    /// advertising costs is taken before an imported one that does not; a folder that does not
    /// load is noted; the payload's damage still shows; a station whose payload is erased but whose
    /// code is the template's is no 'code differs'.
    @Test func theTemplateSearchIsPlainAboutWhatItFound() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = scratch.path("s.hex")
        #expect(
            ToolRun(["generate", "--template", "cc2541-ibeacon"] + Self.identity + ["-o", image, "--interval", "500"])
                .status == 0)
        let users = scratch.path("users")
        try FileManager.default.createDirectory(atPath: users, withIntermediateDirectories: true)
        #expect(ToolRun(["template", "import", image, "--name", "x", "-o", users + "/x"]).status == 0)
        try FileManager.default.createDirectory(atPath: users + "/broken", withIntermediateDirectories: true)
        try Data("{".utf8).write(to: URL(fileURLWithPath: users + "/broken/template.json"))
        let run = ToolRun(["inspect", image, "--battery", "cr2032", "--templates", users])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("\nfound by the image's code: template 'cc2541-ibeacon'\n"), "\(run.output)")
        #expect(run.output.contains("  battery: about 125 days on CR2032"), "\(run.output)")
        #expect(
            run.diagnostics.contains(
                "note: 1 template folder could not be loaded and was not considered (see 'ccbeacon templates')"),
            "\(run.diagnostics)")

        // A user's copy of the bundled template, name kept, shown with its folder.
        let copy = users + "/copy"
        try FileManager.default.copyItem(
            atPath: SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon").path,
            toPath: copy)
        let shadowed = ToolRun(["inspect", image, "--battery", "cr2032", "--templates", users])
        #expect(
            shadowed.output.contains("\nfound by the image's code: template 'cc2541-ibeacon' in \(copy)\n"),
            "\(shadowed.output)")

        // The payload erased: the template's lines say so, and the code is still the template's.
        let file = try IntelHexFile(text: Array(try Data(contentsOf: URL(fileURLWithPath: image))))
        let erased = try file.patchingRecords([
            MemoryPatch(address: 0x7F11, bytes: [UInt8](repeating: 0xFF, count: 21))
        ]).file
        try Data(erased.text).write(to: URL(fileURLWithPath: image))
        let damaged = ToolRun(["inspect", image, "--battery", "cr2032"])
        #expect(damaged.output.contains("\nfound by the image's code: template 'cc2541-ibeacon'\n"))
        #expect(
            damaged.output.contains("payload at 0x7F08 is iBeacon FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"),
            "\(damaged.output)")
        #expect(damaged.output.contains("  battery: about 125 days on CR2032"), "\(damaged.output)")
        let named = ToolRun(["inspect", image, "--battery", "cr2032", "--template", "cc2541-ibeacon"])
        #expect(named.output.contains("  battery: about 125 days on CR2032"), "\(named.output)")
    }

    /// An image the reference template's profile does not describe gets the reason, with exit 0
    /// (the inspection itself succeeded): a hand-changed code byte, a TX power register that is no
    /// step, an imported template's station.
    @Test func imagesTheModelDoesNotDescribeGetTheReason() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = scratch.path("s.hex")
        #expect(ToolRun(["generate", "--template", "cc2541-ibeacon"] + Self.identity + ["-o", image]).status == 0)
        let file = try IntelHexFile(text: Array(try Data(contentsOf: URL(fileURLWithPath: image))))
        for (address, byte, reason) in [
            (
                0x0100, UInt8(0xA5),
                "no battery estimate: the image's code differs from template 'cc2541-ibeacon', so its advertising is unknown"
            ),
            (0x7F2C, UInt8(0x12), "no battery estimate: TX power register 0x12 is not a power step of the CC2541"),
        ] {
            let patched = try file.patchingRecords([MemoryPatch(address: address, bytes: [byte])]).file
            let path = scratch.path("patched-\(address).hex")
            try Data(patched.text).write(to: URL(fileURLWithPath: path))
            let run = ToolRun(["inspect", path, "--template", "cc2541-ibeacon", "--battery", "2xaa"])
            #expect(run.output.hasSuffix("  \(reason)\n"), "\(run.output)")
            let json = ToolRun(["inspect", path, "--template", "cc2541-ibeacon", "--battery", "2xaa", "--json"])
            let battery = try #require(Self.batteryObject(json.output))
            #expect(battery["batteryLifeDays"] is NSNull)
            #expect(battery["reason"] as? String == reason)
        }
        let firmware = try scratch.write("fw.hex", TemplateCommandTests.firmware())
        #expect(ToolRun(["template", "import", firmware, "--name", "ti", "-o", scratch.path("ti")]).status == 0)
        let station = scratch.path("ti.hex")
        let generate = ToolRun(
            ["generate", "--template", scratch.path("ti")] + Self.identity + ["-o", station, "--battery", "cr2450"])
        #expect(generate.status == 0, "\(generate.diagnostics)")
        let unknown =
            "no battery estimate: template 'ti' does not say what its advertising costs (only ccbeacon's reference firmware does)"
        #expect(generate.output.hasSuffix(unknown + "\n"), "\(generate.output)")
        let inspect = ToolRun(["inspect", station, "--template", scratch.path("ti"), "--battery", "1000"])
        #expect(inspect.output.hasSuffix("  " + unknown + "\n"), "\(inspect.output)")
    }

    /// plan estimates for the template and settings batch would burn (the template's own interval
    /// and power unless given); the estimate-only options without --battery, --battery without a
    /// template, and
    /// --battery on inspect without a template, are refused before anything is written.
    @Test func planEstimatesForTheSettingsBatchWouldBurn() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let places = try scratch.write("places.csv", "name\nLobby\nLift\n")
        let list = scratch.path("site.csv")
        let plain = ToolRun(
            ["plan", places, "--uuid", Self.uuid, "--major", "2", "-o", list, "--battery", "cr2032", "--board", "hm10"])
        #expect(plain.status == 0, "\(plain.diagnostics)")
        #expect(plain.output.hasSuffix(try Self.modelLine(milliseconds: "100", dBm: 0) + "\n"), "\(plain.output)")
        let slow = ToolRun(
            [
                "plan", places, "--uuid", Self.uuid, "--major", "2", "-o", list, "--battery", "cr2032", "--interval",
                "2000", "--tx-power", "-20", "--board", "hm10",
            ])
        #expect(slow.output.hasSuffix(try Self.modelLine(milliseconds: "2000", dBm: -20) + "\n"), "\(slow.output)")
        try FileManager.default.removeItem(atPath: list)
        for (extra, message) in [
            (["--interval", "500"], "--interval is only for the --battery estimate"),
            (["--board", "hm10"], "--board is only for the --battery estimate"),
            (["--battery", "cr2032", "--board", "hm10", "--tx-power", "-5"], "-5 dBm is not a TX power step"),
            (["--battery", "cr2032", "--template", "cc2541-ibeacon", "--board", "hm10"], "not both"),
            (["--battery", "cr2032"], "--battery needs --template or --board (the one batch will burn)"),
        ] {
            let run = ToolRun(["plan", places, "--uuid", Self.uuid, "--major", "2", "-o", list] + extra)
            #expect(run.status == 64, "\(extra): \(run.diagnostics)")
            #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
            #expect(!FileManager.default.fileExists(atPath: list), "\(extra) wrote the list")
        }
        let bad = ToolRun(["inspect", places, "--template", "cc2541-ibeacon", "--battery", "cr2025"])
        #expect(bad.status == 64)
        #expect(
            bad.diagnostics.hasPrefix(
                "ccbeacon inspect: --battery 'cr2025' is no battery: give cr2032, cr2450, 2xaa or a capacity of 1 to 1000000 mAh (1000 or 1000mah)\n"
            ))
    }

    /// A template folder whose profile cannot be (an event longer than its period, no random
    /// delay) and an interval field of 0 ticks: every command says why there is no estimate, exits
    /// 0 and writes what it was asked to (found by a review: this crashed before).
    @Test func anImpossibleProfileIsAReasonNeverACrash() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let shipped = SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon")
        let folder = scratch.path("heavy")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: shipped.appendingPathComponent("image.hex"), to: URL(fileURLWithPath: folder + "/image.hex"))
        let manifest = try String(contentsOf: shipped.appendingPathComponent("template.json"), encoding: .utf8)
            .replacingOccurrences(of: "\"cpuCycles\": 3700", with: "\"cpuCycles\": 100000000")
            .replacingOccurrences(of: "\"meanDelayMicroseconds\": 4992", with: "\"meanDelayMicroseconds\": 0")
            .replacingOccurrences(of: "\"name\": \"cc2541-ibeacon\"", with: "\"name\": \"heavy\"")
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: folder + "/template.json"))
        let reason = "no battery estimate: template 'heavy' says an event takes"
        let image = scratch.path("s.hex")
        let generate = ToolRun(
            ["generate", "--template", folder] + Self.identity + [
                "--interval", "20", "-o", image, "--battery", "cr2032",
            ])
        #expect(generate.status == 0, "\(generate.diagnostics)")
        #expect(generate.output.contains(reason), "\(generate.output)")
        let file = try IntelHexFile(text: Array(try Data(contentsOf: URL(fileURLWithPath: image))))
        let zero = try file.patchingRecords([MemoryPatch(address: 0x7F28, bytes: [0, 0, 0, 0])]).file
        try Data(zero.text).write(to: URL(fileURLWithPath: image))
        for json in [false, true] {
            let run = ToolRun(
                ["inspect", image, "--template", folder, "--battery", "cr2032"] + (json ? ["--json"] : []))
            #expect(run.status == 0, "\(run.diagnostics)")
            #expect(run.output.contains(reason), "\(run.output)")
        }
        let places = try scratch.write("places.csv", "name\nLobby\n")
        let plan = ToolRun(
            ["plan", places, "--uuid", Self.uuid, "--major", "2", "-o", scratch.path("p.csv"), "--battery", "cr2032"]
                + ["--template", folder])
        #expect(plan.status == 0, "\(plan.diagnostics)")
        #expect(plan.output.contains(reason), "\(plan.output)")
        #expect(FileManager.default.fileExists(atPath: scratch.path("p.csv")))
    }

    /// The `battery` member of an inspect --json document.
    static func batteryObject(_ text: String) -> [String: Any]? {
        let document = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        return document?["battery"] as? [String: Any]
    }
}

import BeaconPayload
import CCDebuggerEmulator
import Foundation
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit
@testable import Provisioning
@testable import StationLedger

/// The measured power the commands burn, and how they report it: the README's own `generate …
/// --tx-power -6` advertised −59 dBm, so phones overestimated the distance to that station about 2×.
struct MeasuredPowerCommandTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
    static let identity = ["--uuid", uuid, "--major", "1", "--minor", "2"]

    /// The power in the image's payload (its last byte), read with `inspect --json`.
    static func power(_ image: String) throws -> Int? {
        let run = ToolRun(["inspect", image, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        return (report?["beacons"] as? [[String: Any]])?.first?["power"] as? Int
    }

    @Test(arguments: [
        // (options, power burned, where it came from, in the output)
        (
            ["--board", "hm10", "--tx-power", "-6"], -65,
            "(board hm10: -59 dBm at 0 dBm, shifted by the -6 dBm TX power)"
        ),
        (["--board", "hm10"], -59, "(board hm10: -59 dBm at 0 dBm, shifted by the 0 dBm TX power)"),
        (
            ["--template", "cc2541-ibeacon", "--tx-power", "-23"], -82,
            "(generic default: -59 dBm at 0 dBm, shifted by the -23 dBm TX power)"
        ),
        (["--board", "hm10", "--tx-power", "-6", "--power", "-70"], -70, "-70 dBm (given)"),
    ])
    func generateBurnsTheExpectedPowerAndSaysWhy(options: [String], power: Int, why: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = scratch.path("s.hex")
        let run = ToolRun(["generate"] + options + Self.identity + ["-o", image])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("measured power \(power) dBm") && run.output.contains(why), "\(run.output)")
        #expect(try Self.power(image) == power)
        #expect(run.diagnostics.isEmpty, "no warning within 10 dB: \(run.diagnostics)")
        // verify and inspect say where the image's value stands.
        let board = options.contains("--board") ? ["--board", "hm10"] : ["--template", "cc2541-ibeacon"]
        let verify = ToolRun(["verify", image] + board + Self.identity)
        #expect(verify.status == 0)
        let isDefault = !options.contains("--power")
        #expect(
            verify.output.contains(
                isDefault ? "the default for this TX power" : "not the default -65 dBm for this TX power"),
            "\(verify.output)")
    }

    /// An explicit power more than 10 dB from the expectation is kept, with a warning naming both.
    @Test func aFarPowerIsKeptWithAWarning() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = ToolRun(
            ["generate", "--board", "hm10", "--tx-power", "-6", "--power", "-40"] + Self.identity + [
                "-o", scratch.path("s.hex"),
            ])
        #expect(run.status == 0)
        #expect(
            run.diagnostics.hasPrefix("warning: --power -40 dBm is 25 dB from the -65 dBm expected at this TX power"))
        #expect(try Self.power(scratch.path("s.hex")) == -40)
    }

    /// A list's power is kept; an empty power cell gets the board's value at the TX power; the
    /// record says which.
    @Test func batchRecordsWhereEachPowerCameFrom() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write(
            "s.csv",
            "name,uuid,major,minor,power\na,\(Self.uuid),1,1,\nb,\(Self.uuid),1,2,-62\nc,\(Self.uuid),1,3,-20\n")
        let run = ToolRun(["batch", list, "--board", "hm10", "--tx-power", "-6", "-o", scratch.path("out")])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "warning: 1 station of the list carries a measured power more than 10 dB from the -65 dBm"))
        #expect(run.diagnostics.contains("c (-20 dBm)"))
        let record = try #require(
            try JSONSerialization.jsonObject(with: Data(try scratch.bytes("out/stations.json"))) as? [String: Any])
        let stations = try #require(record["stations"] as? [[String: Any]])
        #expect(stations.map { $0["power"] as? Int } == [-65, -62, -20])
        #expect(stations.map { $0["powerSource"] as? String } == ["board default + TX shift", "list", "list"])
        #expect(try Self.power(scratch.path("out/a.hex")) == -65)
    }

    /// provision records each station in the ledger with the power it burns.
    @Test func provisionBurnsAndRecordsTheBoardsPower() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\n")
        let provider = EmulatorProvider()
        let run = ToolRun(
            ["provision", list, "--board", "hm10", "--tx-power", "-10", "--yes", "--wait", "0.2"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        let ledger = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), access: .readOnly)
        #expect(try ledger.states().map(\.station.identity.measuredPower) == [-69])
        let chip = try #require(provider.debuggers[0].chip)
        #expect(chip.flash[0x7F08 + 29] == UInt8(bitPattern: -69), "the payload's last byte on the chip")
    }

    /// A ledger registered with one power (a list without power values, before measured power
    /// followed the TX power, or with another --tx-power) refuses the other, names both values and
    /// says how to go on; nothing is burned.
    @Test func aLedgerRegisteredWithAnotherPowerSaysWhichAndHowToGoOn() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\nb,\(Self.uuid),1,2\n")
        let first = ToolRun(
            ["provision", list, "--board", "hm10", "--yes", "--wait", "0.1"], debuggers: EmulatorProvider(count: 0))
        #expect(first.status != 65, "\(first.diagnostics)")  // registered at -59 dBm; no debugger attached
        let provider = EmulatorProvider()
        let again = ToolRun(
            ["provision", list, "--board", "hm10", "--tx-power", "-6", "--yes", "--wait", "0.1"], debuggers: provider)
        // The list does not fit the ledger: bad input, as another name or identity is.
        #expect(again.status == 65, "\(again.diagnostics)")
        #expect(
            again.diagnostics.contains(
                "2 stations are in the ledger with another measured power: a (ledger -59 dBm, list -65 dBm), b (ledger -59 dBm, list -65 dBm)"
            ), "\(again.diagnostics)")
        #expect(again.diagnostics.contains("give the list's power column the ledger's values"))
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF }, "nothing was burned")
        // Another identity for a known name: the same exit.
        let renamed = try scratch.write("r.csv", "name,uuid,major,minor\na,\(Self.uuid),1,9\nb,\(Self.uuid),1,2\n")
        let other = ToolRun(["provision", renamed, "--board", "hm10", "--yes", "--wait", "0.1"], debuggers: provider)
        #expect(other.status == 65 && other.diagnostics.contains("another identity"), "\(other.diagnostics)")
    }
}

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

/// The device commands against emulated debuggers (in process; the same commands run against the
/// real USB stack in the umockdev tests).
struct DeviceCommandTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// A station image from the bundled template.
    static func station(_ scratch: Scratch, minor: Int = 2) throws -> String {
        let path = scratch.path("station-\(minor).hex")
        let run = ToolRun([
            "generate", "--template", "cc2541-ibeacon", "--uuid", uuid, "--major", "1", "--minor", "\(minor)", "-o",
            path,
        ])
        try #require(run.status == 0, "\(run.diagnostics)")
        return path
    }

    @Test func devicesListsEveryDebuggerAndItsTarget() throws {
        let provider = EmulatorProvider(count: 2)
        provider.debuggers[1].chip = nil
        let run = ToolRun(["devices"], debuggers: provider)
        #expect(run.status == 0)
        #expect(run.output.contains("1:10    1-1   0451:16A2  CC Debugger  EMU001  0x5CC rev 0x44  CC2541"))
        #expect(run.output.contains("1:11    1-2   0451:16A2  CC Debugger  EMU002  0x5CC rev 0x44  none"))
        #expect(ToolRun(["devices"], debuggers: EmulatorProvider(count: 0)).output == "no debuggers attached\n")
    }

    @Test func infoReportsTheChipAndItsAddresses() throws {
        let provider = EmulatorProvider()
        let run = ToolRun(["info"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("target: CC2541F256 (chip ID 0x41, revision 0x13)"))
        #expect(run.output.contains("flash: 256 KiB, RAM: 8 KiB, debug lock: off"))
        #expect(run.output.contains("primary IEEE address: 00:12:4B:00:25:41"))
        #expect(run.output.contains("secondary address: none (erased)"))
    }

    @Test func flashWritesVerifiesAndRunsTheStation() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        for mode in ["crc", "read", "none"] {
            let provider = EmulatorProvider()
            let run = ToolRun(["flash", image, "--verify", mode], debuggers: provider)
            #expect(run.status == 0, "\(run.diagnostics)")
            #expect(run.output.contains("flashed \(image) to the CC2541F256 on 1:10: 3 KiB written"))
            let chip = provider.debuggers[0].chip!
            #expect(!chip.halted, "the target runs at the end")
            let memory = try IntelHexFile(text: try Data(contentsOf: URL(fileURLWithPath: image)).map { $0 }).memory
            for segment in memory.segments { #expect(Array(chip.flash[segment.range]) == segment.bytes) }
        }
        // The chip then carries the station: read it back and verify it like a CI would.
        let provider = EmulatorProvider()
        #expect(ToolRun(["flash", image], debuggers: provider).status == 0)
        let dump = scratch.path("dump.hex")
        let read = ToolRun(["read", "-o", dump, "--range", "0:0x8000"], debuggers: provider)
        #expect(read.status == 0, "\(read.diagnostics)")
        let verify = ToolRun(["verify", dump, "--uuid", Self.uuid, "--major", "1", "--minor", "2"])
        #expect(verify.status == 0, "\(verify.output)")
    }

    @Test func refusesToGuessAmongSeveralDebuggers() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        let provider = EmulatorProvider(count: 2)
        let run = ToolRun(["flash", image], debuggers: provider)
        #expect(run.status == 1)
        #expect(
            run.diagnostics.contains(
                "2 debuggers are attached; choose one with --device:\n  1:10  port:1-1  CC Debugger  serial EMU001\n  1:11"
            ))
        #expect(provider.debuggers.allSatisfy { $0.chip!.flash.allSatisfy { $0 == 0xFF } }, "nothing was written")
        #expect(ToolRun(["flash", image, "--device", "EMU002"], debuggers: provider).status == 0)
        #expect(provider.debuggers[1].chip!.flash[0x7F00] == 0x42)
        #expect(provider.debuggers[0].chip!.flash[0x7F00] == 0xFF)
        let wrong = ToolRun(["info", "--device", "9:9"], debuggers: provider)
        #expect(wrong.status == 1)
        #expect(
            wrong.diagnostics.contains(
                "no debugger '9:9'; attached: 1:10 port:1-1 (CC Debugger), 1:11 port:1-2 (CC Debugger)"))
    }

    /// A debugger is named by its port too, which stays when it is replugged; CC Debuggers that
    /// share a serial number are told apart by it, and the serial alone names neither.
    @Test func debuggersAreNamedByTheirPort() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        let provider = SharedSerialProvider(EmulatorProvider(count: 2))
        #expect(ToolRun(["flash", image, "--device", "port:1-2"], debuggers: provider).status == 0)
        #expect(
            provider.base.debuggers[1].chip!.flash[0x7F00] == 0x42
                && provider.base.debuggers[0].chip!.flash[0x7F00] == 0xFF)
        let shared = ToolRun(["info", "--device", "CCDBG"], debuggers: provider)
        #expect(shared.status == 1)
        #expect(
            shared.diagnostics.contains(
                "2 debuggers share the serial number 'CCDBG': port:1-1, port:1-2; name each by its port"),
            "\(shared.diagnostics)")
        #expect(ToolRun(["info", "--device", "port:9-9"], debuggers: provider).status == 1)
        let list = try scratch.write("stations.csv", "name,uuid,major,minor\nHall A,\(Self.uuid),1,1\n")
        let run = ToolRun(
            [
                "provision", list, "--template", "cc2541-ibeacon", "--ledger", scratch.path("l.sqlite"), "--yes",
                "--wait", "0.2", "--devices", "port:1-1,port:1-2",
            ], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        // Debuggers sharing a serial number are named by their ports in the log and the ledger.
        #expect(run.diagnostics.contains("port:1-1: "), "\(run.diagnostics)")
        #expect(run.diagnostics.contains("port:1-2: "), "\(run.diagnostics)")
        // A serial that reads like another debugger's port does not give two debuggers one name.
        let names = ProvisionCommand.names(of: [
            DebuggerDevice(
                bus: 1, address: 10, vendorID: 0x0451, productID: 0x16A2, product: "CC Debugger", serial: "port:1-2",
                debuggerID: 0x8662, portPath: "1-1"),
            DebuggerDevice(
                bus: 1, address: 11, vendorID: 0x0451, productID: 0x16A2, product: "CC Debugger", serial: "X",
                debuggerID: 0x8662, portPath: "1-2"),
            DebuggerDevice(
                bus: 1, address: 12, vendorID: 0x0451, productID: 0x16A2, product: "CC Debugger", serial: "X",
                debuggerID: 0x8662, portPath: "1-3"),
        ])
        #expect(Set(names).count == 3, "\(names)")
    }

    /// A debugger whose serial is `serial`, at `1:address` on port `1-port`.
    static func debugger(_ address: Int, port: Int, serial: String?) -> DebuggerDevice {
        DebuggerDevice(
            bus: 1, address: address, vendorID: 0x0451, productID: 0x16A2, product: "CC Debugger", serial: serial,
            debuggerID: 0x8662, portPath: "1-\(port)")
    }

    /// A name in the log, the events and the ledger says which debugger it was and shows as it is:
    /// a serial that holds what would not show, shows like another's, or reads like a selector
    /// names nobody; the port does.
    @Test(
        arguments: [
            (["A\u{1B}", #"A\x1b"#], ["port:1-1", "port:1-2"]),
            (["X\u{1B}[31mFAKE\nccbeacon: forged", "B"], ["port:1-1", "B"]),
            (["1:11", nil], ["port:1-1", "port:1-2"]),
            (["port:1-2", "X"], ["port:1-1", "X"]),
            (["EMU001", "EMU002"], ["EMU001", "EMU002"]),
        ] as [([String?], [String])])
    func aDebuggersNameIsPlainAndItsOwn(serials: [String?], names: [String]) {
        let chosen = serials.enumerated().map { Self.debugger(10 + $0.offset, port: 1 + $0.offset, serial: $0.element) }
        #expect(ProvisionCommand.names(of: chosen) == names)
    }

    /// A serial selects the debugger that gives it; only when none does, the one that shows it
    /// (`devices` as a person copies it), so a serial written like another's escape still
    /// selects its own debugger.
    @Test func aSerialSelectsAsGivenBeforeAsShown() throws {
        let escape = Self.debugger(10, port: 1, serial: "A\u{1B}")
        let literal = Self.debugger(11, port: 2, serial: #"A\x1b"#)
        let option = DeviceSelector(option: "--device", takesSeveral: false)
        #expect(try DeviceSelection.choose([escape, literal], selector: #"A\x1b"#, option: option) == literal)
        #expect(try DeviceSelection.choose([escape, literal], selector: "A\u{1B}", option: option) == escape)
        #expect(try DeviceSelection.choose([escape], selector: #"A\x1b"#, option: option) == escape)
        #expect(throws: DeviceSelectionError.self) {
            try DeviceSelection.choose(
                [escape, Self.debugger(12, port: 3, serial: "A\u{1B}")], selector: #"A\x1b"#, option: option)
        }
    }

    /// `read` reports the bytes it read: a whole number of KiB as KiB, anything else in bytes.
    @Test(arguments: [
        ("0x7F00:0x7F30", "48 bytes"), ("0x7C00:0x8000", "1 KiB"), ("0:0x8000", "32 KiB"), ("0:0x500", "1280 bytes"),
        ("0x7FFF:0x8000", "1 byte"),
    ])
    func readReportsTheByteCountTruthfully(range: String, shown: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let dump = scratch.path("dump.bin")
        let run = ToolRun(["read", "-o", dump, "--range", range], debuggers: EmulatorProvider())
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output == "read \(shown) from the CC2541F256 on 1:10 to \(dump)\n")
    }

    /// With several debuggers and no selection, provision names its own option (--devices), not
    /// the --device of the single-debugger commands.
    @Test func provisionNamesItsOwnSelectionOption() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("stations.csv", "name,uuid,major,minor\nHall A,\(Self.uuid),1,1\n")
        let provider = EmulatorProvider(count: 2)
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", scratch.path("l.sqlite"), "--yes"],
            debuggers: provider)
        #expect(run.status == 1)
        #expect(
            run.diagnostics.contains("2 debuggers are attached; choose with --devices:\n  1:10  port:1-1  CC Debugger"),
            "\(run.diagnostics)")
        #expect(run.diagnostics.contains("hint: give --devices all, or --devices SEL,SEL"))
        #expect(!run.diagnostics.contains("--device:") && !run.diagnostics.contains("--device "))
        #expect(provider.debuggers.allSatisfy { $0.chip!.flash.allSatisfy { $0 == 0xFF } }, "nothing was burned")
    }

    @Test func macPreservationAndDebugLock() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        let provider = EmulatorProvider()
        var run = ToolRun(["flash", image, "--mac", "C0:FF:EE:12:34:56"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(ToolRun(["info"], debuggers: provider).output.contains("secondary address: C0:FF:EE:12:34:56"))
        run = ToolRun(["flash", image, "--preserve-mac", "--lock-debug"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("secondary address: C0:FF:EE:12:34:56"))
        let info = ToolRun(["info"], debuggers: provider)
        #expect(info.output.contains("debug interface LOCKED"))
        let read = ToolRun(["read", "-o", scratch.path("x.bin")], debuggers: provider)
        #expect(read.status == 1)
        #expect(read.diagnostics.contains("hint: the chip is debug-locked; 'ccbeacon erase' unlocks it"))
        #expect(ToolRun(["erase"], debuggers: provider).status == 0)
        #expect(ToolRun(["info"], debuggers: provider).output.contains("debug lock: off"))
        #expect(ToolRun(["flash", image, "--mac", "C0:FF"], debuggers: provider).status == 64)
        #expect(
            ToolRun(["flash", image, "--mac", "C0:FF:EE:12:34:56", "--preserve-mac"], debuggers: provider).status == 64)
    }

    /// A debugger lost while `erase` runs never sends the user to `flash` (whose advice the
    /// shared hint once gave): a step that may leave the chip partly erased says to erase again.
    @Test func aTransferLostDuringEraseAdvisesErasingAgain() {
        var partlyErased = 0
        var whilePolling = 0
        for unplugAfter in 1...24 {
            let provider = EmulatorProvider()
            provider.debuggers[0].faults.unplugAfterTransfers = unplugAfter
            let run = ToolRun(["erase"], debuggers: provider)
            if run.status == 0 { continue }
            #expect(run.status == 1, "\(unplugAfter): \(run.diagnostics)")
            #expect(!run.diagnostics.contains("'ccbeacon flash'"), "\(unplugAfter): \(run.diagnostics)")
            if run.diagnostics.contains("the chip may be left partly erased") {
                partlyErased += 1
                #expect(
                    run.diagnostics.contains("hint: the chip may be left partly erased; \(EraseCommand.reeraseAdvice)"))
            }
            #expect(!run.diagnostics.contains("partly written"), "an erase writes nothing: \(run.diagnostics)")
            // Lost while the erase runs (its start, or polling for its end): the chip may be
            // partly erased (the polling used to get the generic "try again").
            if run.diagnostics.contains("while waiting for the chip erase") { whilePolling += 1 }
            if run.diagnostics.contains("while waiting for the chip erase")
                || run.diagnostics.contains("while starting the chip erase")
            {
                #expect(run.diagnostics.contains("the chip may be left partly erased"), "\(run.diagnostics)")
            }
        }
        #expect(partlyErased > 0)
        #expect(whilePolling > 0)
    }

    /// flash --lock-debug reads the lock back after a reset, as provisioning does: a chip whose
    /// lock does not take is a failure (exit 1), never "debug interface locked".
    @Test func aDebugLockThatDoesNotTakeFails() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        let provider = EmulatorProvider()
        provider.debuggers[0].chip?.ignoresDebugLock = true
        let run = ToolRun(["flash", image, "--lock-debug"], debuggers: provider)
        #expect(run.status == 1, "\(run.output)\(run.diagnostics)")
        #expect(!run.output.contains("debug interface locked"), "\(run.output)")
        #expect(run.diagnostics.contains("after a reset the debug interface was not locked"), "\(run.diagnostics)")
    }

    @Test func refusesLastPageDataUnlessAskedFor() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write(
            "lock.hex", ":02000004000 3F7\n".replacingOccurrences(of: " ", with: "") + ":01FFFF007F82\n:00000001FF\n")
        let provider = EmulatorProvider()
        let run = ToolRun(["flash", image], debuggers: provider)
        #expect(run.status == 65, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("in the last flash page"))
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF })
        #expect(ToolRun(["flash", image, "--allow-last-page"], debuggers: provider).status == 0)
    }

    @Test func faultsGiveActionableErrors() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        var run = ToolRun(["flash", image], debuggers: EmulatorProvider(count: 0))
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("hint: is it plugged in?"))
        let noTarget = EmulatorProvider()
        noTarget.debuggers[0].chip = nil
        run = ToolRun(["flash", image], debuggers: noTarget)
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("the debugger sees no target chip"))
        #expect(run.diagnostics.contains("check the wiring"))
        let unplugged = EmulatorProvider()
        unplugged.debuggers[0].faults.unplugAfterTransfers = 12
        run = ToolRun(["flash", image], debuggers: unplugged)
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("the debugger is gone (unplugged?)"))
        let stuck = EmulatorProvider()
        stuck.debuggers[0].chip!.stuckAtZero[0x7F10] = 0x01  // the byte there is 0x15: bit 0 is set
        run = ToolRun(["flash", image], debuggers: stuck)
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("verification failed"))
        #expect(ToolRun(["devices"]).diagnostics.contains("built without USB support"))
        let foreign = EmulatorProvider()
        foreign.debuggers[0].targetID = 0x2650
        run = ToolRun(["info"], debuggers: foreign)
        #expect(run.status == 1)
        #expect(
            run.diagnostics.contains(
                "the target is a CC2650, not a CC1110/CC1111/CC2430/CC2431/CC2510/CC2511/CC2530/CC2531/CC2533/CC2540/CC2541/CC2543/CC2544/CC2545"
            ), "\(run.diagnostics)")
    }

    @Test func imagesLargerThanTheFlashAreRefusedBeforeTouchingTheChip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("big.hex", ":020000040004F6\n:0100000011EE\n:00000001FF\n")
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.flash[0] = 0x12
        let run = ToolRun(["flash", image], debuggers: provider)
        #expect(run.status == 65, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("beyond the chip's 256 KiB of flash"))
        #expect(run.diagnostics.contains("hint: the image is for a larger chip"), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("--allow-last-page"), "a hint that does not apply")
        #expect(provider.debuggers[0].chip!.flash[0] == 0x12, "the chip was not erased")
    }

    /// The chip's size comes from CHIPINFO0.FLASHSIZE through boards/chips.json: a chip whose code
    /// no chip there has (here 2, a 64 KiB part) is named by its code and refused before it is
    /// touched; a 128 KiB part (code 3) is the CC2541F128 and gets its own size.
    @Test func theFlashSizeCodeIsLookedUpInTheChipData() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.flashSizeCode = 2
        provider.debuggers[0].chip!.flash[0] = 0x12
        let run = ToolRun(["flash", image], debuggers: provider)
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "the target (ID 0x2541, CHIPINFO0.FLASHSIZE 2) is none of the chips of boards/chips.json"),
            "\(run.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash[0] == 0x12, "the chip was not erased")
        let info = ToolRun(["info"], debuggers: provider)
        #expect(info.status == 0)
        #expect(
            info.output.contains("flash: unknown (CHIPINFO0.FLASHSIZE 2 is none of the chips of boards/chips.json)"),
            "\(info.output)")
        #expect(!info.output.contains("0 KiB"))
        // Locked, the size is hidden until an erase: the refusal then says the flash is gone.
        provider.debuggers[0].chip!.setDebugLockBit()
        let locked = ToolRun(["flash", image], debuggers: provider)
        #expect(locked.status == 1)
        #expect(locked.diagnostics.contains("so it was erased (its flash is blank now)"), "\(locked.diagnostics)")
        let small = EmulatorProvider()
        small.debuggers[0].chip = EmulatedChip(part: .named("CC2541F128")!)
        let smallInfo = ToolRun(["info"], debuggers: small)
        #expect(
            smallInfo.output.contains("target: CC2541F128") && smallInfo.output.contains("flash: 128 KiB"),
            "\(smallInfo.output)")
    }

    /// A station made from a template runs only on the template's chip: on another part (another
    /// family, or another size of the same one) it is refused, whatever its layout (the HEX
    /// `generate` writes, or its flat `.bin`), before the chip is touched. A debug-locked chip of
    /// another family is refused by its target ID alone; one of the same family tells its size only
    /// once erased, and the refusal says the chip is blank now.
    @Test(
        arguments: ["CC2530F256", "CC2531F256", "CC2533F96", "CC2540F256", "CC2541F128", "CC2510F32"], [false, true])
    func aStationIsRefusedOnAnotherChip(part: String, flat: Bool) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var image = try Self.station(scratch)
        if flat {
            let bin = scratch.path("station.bin")
            #expect(ToolRun(["convert", image, "-o", bin]).status == 0)
            image = bin
        }
        for locked in [false, true] {
            let provider = EmulatorProvider()
            provider.debuggers[0].chip = EmulatedChip(part: .named(part)!)
            provider.debuggers[0].chip!.flash[0x100] = 0x5A  // what the chip holds stays
            if locked { provider.debuggers[0].chip!.setDebugLockBit() }
            let run = ToolRun(["flash", image], debuggers: provider)
            #expect(run.status == 65, "\(run.diagnostics)")
            let sameFamily = part.hasPrefix("CC2541")
            // A chip that reports no size (the CC2510) is named by its family, as a locked one is.
            let target = (locked || part.hasPrefix("CC251")) && !sameFamily ? String(part.prefix(6)) : part
            #expect(
                run.diagnostics.contains(
                    "\(image): a station of template 'cc2541-ibeacon', made for the CC2541F256; the target is a \(target)"
                ),
                "\(run.diagnostics)")
            #expect(run.diagnostics.contains("hint: flash it to a CC2541F256"), "\(run.diagnostics)")
            if locked && sameFamily {
                #expect(run.diagnostics.contains("it was debug-locked, so it was erased to tell its part"))
                #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF })
            } else {
                #expect(provider.debuggers[0].chip!.flash[0x100] == 0x5A, "locked: \(locked)")
            }
        }
    }
}

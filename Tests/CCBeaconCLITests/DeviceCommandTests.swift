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

    /// A chip that reports no flash size (the CC251x/111x) is told it with --flash-size, as its
    /// marking says: without it `info` says what to give, and `flash` and `read` refuse before the
    /// chip is touched; a size the family does not come in is a usage error, as is one that
    /// disagrees with a chip that reports its own. Flashed with --lock-debug, the lock byte in the
    /// information page takes, and `info` shows the chip locked.
    @Test func aChipThatReportsNoSizeIsToldIt() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("image.hex", ":0400000001020304F2\n:00000001FF\n")
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named("CC2510F16")!)
        provider.debuggers[0].chip!.flash[0x100] = 0x5A

        let info = ToolRun(["info"], debuggers: provider)
        #expect(info.status == 0, "\(info.diagnostics)")
        #expect(info.output.contains("target: CC2510 (chip ID 0x81, revision 0x13)"), "\(info.output)")
        #expect(
            info.output.contains(
                "flash: not reported (the CC2510 does not report its flash size: give it with --flash-size 8, 16 or 32"),
            "\(info.output)")
        #expect(info.output.contains("IEEE address: none (the CC2510 has none)"))
        let sized = ToolRun(["info", "--flash-size", "16"], debuggers: provider)
        #expect(sized.status == 0)
        #expect(sized.output.contains("target: CC2510F16 (chip ID 0x81, revision 0x13)"))
        #expect(sized.output.contains("flash: 16 KiB (as --flash-size says; the chip does not report it), RAM: 2 KiB"))

        for (arguments, message) in [
            (["info", "--flash-size", "64"], "--flash-size 64 KiB: the CC2510 comes in 8, 16 or 32 KiB"),
            (["info", "--flash-size", "16k"], "--flash-size '16k' is not a size in KiB"),
            (["read", "-o", scratch.path("r.bin"), "--flash-size", "0"], "--flash-size '0' is not a size in KiB"),
        ] {
            let run = ToolRun(arguments, debuggers: provider)
            #expect(run.status == 64, "\(arguments)")
            #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
        }
        for arguments in [["flash", image], ["read", "-o", scratch.path("r.bin")]] {
            let run = ToolRun(arguments, debuggers: provider)
            #expect(run.status == 1, "\(arguments)")
            #expect(
                run.diagnostics.contains("the target (ID 0x2510) does not report its flash size, and none was given"),
                "\(run.diagnostics)")
            #expect(
                run.diagnostics.contains("hint: the CC2510 does not report its flash size: give it with --flash-size"))
            #expect(provider.debuggers[0].chip!.flash[0x100] == 0x5A)
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.path("r.bin")))

        let flashed = ToolRun(["flash", image, "--flash-size", "16", "--lock-debug"], debuggers: provider)
        #expect(flashed.status == 0, "\(flashed.diagnostics)")
        #expect(flashed.output.contains("flashed \(image) to the CC2510F16 on"), "\(flashed.output)")
        #expect(provider.debuggers[0].chip!.flash.prefix(4) == [1, 2, 3, 4])
        #expect(provider.debuggers[0].chip!.infoPage[1] == 0xFE)
        let locked = ToolRun(["info"], debuggers: provider)
        #expect(locked.output.contains("target: CC2510, debug interface LOCKED"), "\(locked.output)")

        // A chip that reports its size needs no --flash-size, and one that disagrees is refused.
        let reporting = EmulatorProvider()
        let disagreeing = ToolRun(["info", "--flash-size", "128"], debuggers: reporting)
        #expect(disagreeing.status == 64)
        #expect(disagreeing.diagnostics.contains("--flash-size 128 KiB: the CC2541F256 reports 256 KiB"))
        #expect(ToolRun(["info", "--flash-size", "256"], debuggers: reporting).status == 0)
    }

    /// The CC2430/31 has no factory address: the one it is given (`--mac`, 8 bytes) is kept in the
    /// last 8 bytes of flash, where `info` reads it once it knows the size, and `--preserve-mac`
    /// keeps it. Its flash is verified by reading back, whatever `--verify crc` asks.
    @Test func aCC2430KeepsItsAddressInTheLastBytesOfFlash() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("image.hex", ":0400000001020304F2\n:00000001FF\n")
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named("CC2430F64")!)

        let info = ToolRun(["info"], debuggers: provider)
        #expect(info.status == 0, "\(info.diagnostics)")
        #expect(
            info.output.hasSuffix(
                """
                target: CC2430 (chip ID 0x85, revision 0x13)
                flash: not reported (the CC2430 does not report its flash size: give it with --flash-size 32, 64 or 128 (the part's marking says: CC2430F32 has 32)), debug lock: off
                IEEE address: none in the chip (the CC2430 keeps it in the last 8 bytes of flash)
                secondary address: not read (where it is depends on the flash size: give --flash-size)

                """), "\(info.output)")
        let address = "00:12:4B:00:01:02:03:04"
        let short = ToolRun(["flash", image, "--flash-size", "64", "--mac", "00:12:4B:01:02:03"], debuggers: provider)
        #expect(short.status == 64, "\(short.diagnostics)")
        #expect(short.diagnostics.contains("give this chip's secondary address as 8 bytes"), "\(short.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF }, "refused before the chip changed")

        let flashed = ToolRun(["flash", image, "--flash-size", "64", "--mac", address], debuggers: provider)
        #expect(flashed.status == 0, "\(flashed.diagnostics)")
        #expect(flashed.output.contains("the whole image verified (read)"), "\(flashed.output)")
        #expect(flashed.output.contains("secondary address: \(address)"), "\(flashed.output)")
        #expect(provider.debuggers[0].chip!.flash.suffix(8) == [0x04, 0x03, 0x02, 0x01, 0x00, 0x4B, 0x12, 0x00])
        let sized = ToolRun(["info", "--flash-size", "64"], debuggers: provider)
        #expect(sized.output.hasSuffix("secondary address: \(address)\n"), "\(sized.output)")
        let json = ToolRun(["info", "--flash-size", "64", "--json"], debuggers: provider)
        #expect(json.output.contains("\"secondaryAddress\": \"\(address)\""), "\(json.output)")
        #expect(json.output.contains("\"primaryAddress\": null"), "\(json.output)")

        let again = ToolRun(
            ["flash", image, "--flash-size", "64", "--preserve-mac", "--verify", "none", "--lock-debug"],
            debuggers: provider)
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.output.contains("secondary address: \(address)"), "\(again.output)")
        #expect(provider.debuggers[0].chip!.flash.suffix(8) == [0x04, 0x03, 0x02, 0x01, 0x00, 0x4B, 0x12, 0x00])
        #expect(provider.debuggers[0].chip!.infoPage[1] == 0xFE)
        #expect(ToolRun(["info"], debuggers: provider).output.contains("target: CC2430, debug interface LOCKED"))
    }

    /// All CC2430/31 sizes have the same SRAM, so a --flash-size too small cannot be refuted; the
    /// "last page" it names is then inside the firmware. Its bytes are no address: `info` says the
    /// address is unknown, and `--preserve-mac` refuses before the erase, leaving the real address
    /// (at the true end of flash) where it is. It reported firmware bytes as the address it kept.
    @Test func aCC2430ToldTooSmallASizeKeepsNoFirmwareAsItsAddress() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("image.hex", ":0400000001020304F2\n:00000001FF\n")
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named("CC2430F128")!)
        // Firmware up to its last page, as `flash` writes it (the last page is refused without
        // --allow-last-page), and the address at the end.
        for address in 0..<0x1F800 { provider.debuggers[0].chip!.flash[address] = UInt8(truncatingIfNeeded: address) }
        let real: [UInt8] = [0xDD, 0xCC, 0xBB, 0xAA, 0x00, 0x4B, 0x12, 0x00]
        provider.debuggers[0].chip!.flash.replaceSubrange(0x1FFF8..<0x20000, with: real)
        let before = provider.debuggers[0].chip!.flash

        let info = ToolRun(["info", "--flash-size", "32"], debuggers: provider)
        #expect(info.status == 0, "\(info.diagnostics)")
        #expect(
            info.output.hasSuffix(
                "secondary address: unknown (the last page of a CC2430F32 holds data beside it: is --flash-size right?)\n"
            ),
            "\(info.output)")
        let preserved = ToolRun(["flash", image, "--flash-size", "32", "--preserve-mac"], debuggers: provider)
        #expect(preserved.status == 1, "\(preserved.output)")
        #expect(
            preserved.diagnostics.contains(
                "the last page of a CC2430F32 holds data beside its secondary address: the chip may be larger than the flash size given, and those bytes no address"
            ), "\(preserved.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash == before, "refused before the erase")
        #expect(
            ToolRun(["info", "--flash-size", "128"], debuggers: provider).output.hasSuffix(
                "secondary address: 00:12:4B:00:AA:BB:CC:DD\n"))
        let json = ToolRun(["info", "--flash-size", "32", "--json"], debuggers: provider)
        #expect(
            json.output.contains("\"secondaryAddressDoubt\": \"the last page of a CC2430F32 holds data"),
            "\(json.output)")

        // With the largest size there is no larger part to be: data in its last page (flashed
        // with --allow-last-page) leaves the address as it is.
        provider.debuggers[0].chip!.flash[0x1F900] = 0x42
        #expect(
            ToolRun(["info", "--flash-size", "128"], debuggers: provider).output.hasSuffix(
                "secondary address: 00:12:4B:00:AA:BB:CC:DD\n"))
    }

    /// `info --json` tells an address it could not read from one that is erased or absent: the
    /// first has a reason in `secondaryAddressDoubt` or `primaryAddressDoubt` (a CC2430 whose size
    /// was not given, a locked chip), the second none.
    @Test func infoJSONSaysWhyAnAddressWasNotRead() throws {
        /// The doubt about `address` ("secondary", "primary"), "null" for JSON's null.
        func doubt(
            _ part: String, locked: Bool = false, _ arguments: [String] = [], address: String = "secondary"
        ) throws -> String? {
            let provider = EmulatorProvider()
            provider.debuggers[0].chip = EmulatedChip(part: .named(part)!)
            if locked { provider.debuggers[0].chip!.setDebugLockBit() }
            let run = ToolRun(["info", "--json"] + arguments, debuggers: provider)
            #expect(run.status == 0, "\(run.diagnostics)")
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
            if address == "secondary" { #expect(json["secondaryAddress"] is NSNull) }
            return json[address + "AddressDoubt"].map { $0 is NSNull ? "null" : "\($0)" }
        }
        #expect(try doubt("CC2430F64") == "not read: where it is depends on the flash size: give --flash-size")
        #expect(try doubt("CC2541F256", locked: true) == "not read: the debug interface is locked")
        #expect(try doubt("CC2430F64", ["--flash-size", "64"]) == "null", "erased: none, for certain")
        #expect(try doubt("CC2541F256") == "null")
        #expect(try doubt("CC2510F32", locked: true) == "null", "the CC2510 has no place for one")
        // The factory address: hidden by the lock is not the same as none (the CC2430 has none).
        #expect(try doubt("CC2541F256", locked: true, address: "primary") == "not read: the debug interface is locked")
        #expect(try doubt("CC2541F256", address: "primary") == "null", "read")
        #expect(try doubt("CC2430F64", locked: true, address: "primary") == "null", "the CC2430 has none")
        #expect(try doubt("CC2510F32", locked: true, address: "primary") == "null", "the CC2510 has none")

        // A chip reporting a size code no chip of the data has: its address was not read, and
        // --flash-size is no way out (the chip reports its size); the text says so too, not "erased".
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.flashSizeCode = 6
        let json = ToolRun(["info", "--json"], debuggers: provider)
        #expect(
            json.output.contains(
                #""secondaryAddressDoubt": "not read: the chip's flash size is none of boards/chips.json's""#),
            "\(json.output)")
        #expect(
            json.output.contains(
                #""primaryAddressDoubt": "not read: the chip's flash size is none of boards/chips.json's""#),
            "\(json.output)")
        let text = ToolRun(["info"], debuggers: provider)
        #expect(
            text.output.hasSuffix(
                "primary IEEE address: not read (the chip's flash size is none of boards/chips.json's)\n"
                    + "secondary address: not read (the chip's flash size is none of boards/chips.json's)\n"),
            "\(text.output)")
    }

    /// Where the size is the user's, an erased place may be the wrong place: `info` and
    /// `--preserve-mac` say where they looked, so an address lost with a wrong size is not lost
    /// in silence (it was: the flash said nothing, info said "erased").
    @Test func anAddressNotFoundIsSaidWhereItWasLookedFor() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("image.hex", ":0400000001020304F2\n:00000001FF\n")
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named("CC2430F128")!)
        provider.debuggers[0].chip!.flash.replaceSubrange(
            0x1FFF8..<0x20000, with: [0xDD, 0xCC, 0xBB, 0xAA, 0x00, 0x4B, 0x12, 0x00])
        let info = ToolRun(["info", "--flash-size", "64"], debuggers: provider)
        #expect(
            info.output.hasSuffix("secondary address: none at 0xFFF8 (erased there, where a CC2430F64 keeps it)\n"),
            "\(info.output)")
        let flashed = ToolRun(["flash", image, "--flash-size", "64", "--preserve-mac"], debuggers: provider)
        #expect(flashed.status == 0, "\(flashed.diagnostics)")
        #expect(
            flashed.output.contains("secondary address: none to keep (0xFFF8 was erased, where a CC2430F64 keeps it)"),
            "\(flashed.output)")
    }

    /// A size too large for the chip is refused before the chip is touched: the larger part's SRAM
    /// (where the write buffer goes) is not there; on a chip that reports its size, a size the family
    /// does not come in is a usage error even while a debug lock hides which part it is.
    @Test func aWrongFlashSizeIsRefusedBeforeTheChipChanges() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("image.hex", ":0400000001020304F2\n:00000001FF\n")
        for part in ["CC2510F16", "CC1111F8"] {
            let provider = EmulatorProvider()
            provider.debuggers[0].chip = EmulatedChip(part: .named(part)!)
            provider.debuggers[0].chip!.flash[0x100] = 0x5A
            for arguments in [
                ["flash", image, "--flash-size", "32"], ["read", "-o", scratch.path("r.bin"), "--flash-size", "32"],
            ] {
                let run = ToolRun(arguments, debuggers: provider)
                #expect(run.status == 1, "\(part) \(arguments)")
                #expect(
                    run.diagnostics.contains(
                        "the target has no SRAM at 0xF000, where a \(part.prefix(6))F32's starts: it is a smaller part than the flash size given"
                    ), "\(run.diagnostics)")
                #expect(run.diagnostics.contains("hint: give --flash-size as the part's marking says"))
                #expect(provider.debuggers[0].chip!.flash[0x100] == 0x5A, "\(part) \(arguments)")
            }
            #expect(!FileManager.default.fileExists(atPath: scratch.path("r.bin")))
        }
        let locked = EmulatorProvider()
        locked.debuggers[0].chip!.flash[0x100] = 0x5A
        locked.debuggers[0].chip!.setDebugLockBit()
        for arguments in [["flash", image, "--flash-size", "8"], ["info", "--flash-size", "8"]] {
            let run = ToolRun(arguments, debuggers: locked)
            #expect(run.status == 64, "\(arguments)")
            #expect(
                run.diagnostics.contains("--flash-size 8 KiB: the CC2541 comes in 128 or 256 KiB"), "\(run.diagnostics)"
            )
            // Refused before the chip is even reset: its lock bit is still set, and locks it at the
            // next reset.
            let chip = locked.debuggers[0].chip!
            #expect(chip.flash[0x100] == 0x5A && chip.flash[chip.flash.count - 1] & 0x80 == 0)
            chip.reset(halt: true)
            #expect(chip.debugLocked)
        }
    }

    /// The burn test on a chip that reports no size takes --flash-size: without it a locked one is
    /// refused before its erase, saying what to give; with it the test runs. `doctor` names the
    /// family of such a chip rather than calling it unknown.
    @Test func theBurnTestOnAChipThatReportsNoSizeIsToldIt() throws {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named("CC2510F16")!)
        provider.debuggers[0].chip!.flash[0x100] = 0x5A
        provider.debuggers[0].chip!.setDebugLockBit()
        let refused = ToolRun(["doctor", "--burn-test", "--yes"], debuggers: provider)
        #expect(refused.status == 1)
        #expect(
            refused.diagnostics.contains("the CC2510 does not report its flash size, and none was given"),
            "\(refused.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash[0x100] == 0x5A && provider.debuggers[0].chip!.debugLocked)
        let ran = ToolRun(["doctor", "--burn-test", "--yes", "--flash-size", "16"], debuggers: provider)
        #expect(ran.status == 0, "\(ran.diagnostics)")
        let doctor = ToolRun(["doctor"], debuggers: provider)
        #expect(doctor.output.contains("opens; target CC2510 (it does not report its flash size)"), "\(doctor.output)")
        let misplaced = ToolRun(["doctor", "--flash-size", "16"], debuggers: provider)
        #expect(misplaced.status == 64)
        #expect(misplaced.diagnostics.contains("--flash-size is for --burn-test"))
    }

    /// A wrong --mac on a debug-locked chip is refused before the erase that would unlock it: the
    /// family (its target ID) settles the length. An image without data is refused before the
    /// chip is touched.
    @Test(arguments: [
        ("CC2541F256", "11:22:33:44:55:66:77:88"), ("CC2530F256", "11:22:33:44:55:66"),
        ("CC2543F32", "11:22:33:44:55:66"),
    ])
    func aWrongMacLeavesALockedChipAsItWas(part: String, mac: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("small.hex", ":040000001122334452\n:00000001FF\n")
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named(part)!)
        provider.debuggers[0].chip!.flash[0x100] = 0x5A
        provider.debuggers[0].chip!.setDebugLockBit()
        let run = ToolRun(["flash", image, "--mac", mac], debuggers: provider)
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("--mac: "), "\(run.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash[0x100] == 0x5A, "the chip was not erased")
        let empty = try scratch.write("empty.hex", ":00000001FF\n")
        let nothing = ToolRun(["flash", empty], debuggers: provider)
        #expect(nothing.status == 65)
        #expect(nothing.diagnostics.contains("\(empty): the image holds no data"))
        #expect(provider.debuggers[0].chip!.flash[0x100] == 0x5A)
    }

    /// A template for a chip without an IEEE address cannot drive provisioning (the ledger names
    /// chips by it): refused before anything is recorded or burned.
    @Test func provisionRefusesATemplateForAChipWithoutAnAddress() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // A small image with an iBeacon advertising block at 0x100 (a CC2543 has 32 KiB at most).
        let block: [UInt8] =
            [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + [UInt8](repeating: 0x11, count: 16)
            + [0, 1, 0, 2, 0xC5]
        let bin = scratch.path("c43.bin")
        try Data([UInt8](repeating: 0x00, count: 0x100) + block).write(to: URL(fileURLWithPath: bin))
        let imported = ToolRun([
            "template", "import", bin, "--name", "t43", "--chip", "CC2543F32", "-o", scratch.path("templates/t43"),
        ])
        #expect(imported.status == 0, "\(imported.diagnostics)")
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(Self.uuid),1,2\n")
        let run = ToolRun([
            "provision", list, "--template", "t43", "--templates", scratch.path("templates"), "--yes",
            "--ledger", scratch.path("l.sqlite"),
        ])
        #expect(run.status == 65, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("is for the CC2543F32, which has no IEEE address"), "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("l.sqlite")))
        // --chip-id secondary names a chip whose factory address is erased; it does not make one
        // for a part that has none, and the message says so rather than ignore the option.
        let secondary = ToolRun([
            "provision", list, "--template", "t43", "--templates", scratch.path("templates"), "--yes",
            "--ledger", scratch.path("l.sqlite"), "--chip-id", "secondary",
        ])
        #expect(secondary.status == 65, "\(secondary.diagnostics)")
        #expect(
            secondary.diagnostics.contains(
                "; --chip-id secondary names a chip by its secondary address only where its factory address is erased, and the CC2543F32 has none"
            ), "\(secondary.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("l.sqlite")))
    }

    /// A locked chip given a size of its family that it contradicts once the erase unlocks it:
    /// the flash stops there, says the chip was erased, and exits 1 (not a usage error, which
    /// would mean nothing was done); a CC2510 whose SRAM refutes the size likewise never says
    /// "nothing was changed".
    @Test func aSizeRefutedAfterTheEraseSaysTheChipWasErased() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("small.hex", ":0400000001020304F2\n:00000001FF\n")
        for (part, size, message) in [
            ("CC2541F256", "128", "--flash-size 128 KiB: the CC2541F256 reports 256 KiB"),
            ("CC2510F16", "32", "the target has no SRAM at 0xF000, where a CC2510F32's starts"),
        ] {
            let provider = EmulatorProvider()
            provider.debuggers[0].chip = EmulatedChip(part: .named(part)!)
            provider.debuggers[0].chip!.setDebugLockBit()
            let run = ToolRun(["flash", image, "--flash-size", size], debuggers: provider)
            #expect(run.status == 1, "\(part): \(run.diagnostics)")
            #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
            #expect(run.diagnostics.contains("hint: the chip's flash may be erased or partly written; "))
            #expect(!run.diagnostics.contains("nothing was changed") && !run.diagnostics.contains("usage:"))
        }
    }

    /// A locked chip is taken at the size given, whether or not its family reports its own: an
    /// image too large for that size is refused before the erase, the chip still locked and whole
    /// (it was erased first: the larger part of the family was one the chip could be).
    @Test func aLockedChipIsTakenAtTheSizeGivenBeforeTheErase() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // 192 KiB: more than a CC2541F128 holds, less than a CC2541F256.
        var image = try MemoryImage(bytes: [1, 2, 3, 4], at: 0)
        try image.write([5, 6, 7, 8], at: 192 * 1024 - 4)
        let path = scratch.path("big.hex")
        try Data(HexWriter().text(for: image)).write(to: URL(fileURLWithPath: path))
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(part: .named("CC2541F256")!)
        provider.debuggers[0].chip!.flash[0x100] = 0x42
        provider.debuggers[0].chip!.setDebugLockBit()
        let run = ToolRun(["flash", path, "--flash-size", "128"], debuggers: provider)
        #expect(run.status != 0)
        #expect(run.diagnostics.contains("the image reaches 0x2FFFF, beyond the chip's 128 KiB of flash"))
        #expect(
            run.diagnostics.contains(
                "hint: the chip's size is --flash-size's (a debug-locked chip hides its own): check it; the image is for a larger chip"
            ), "\(run.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash[0x100] == 0x42, "not erased")
        #expect(provider.debuggers[0].chip!.debugLocked, "still locked")
        #expect(!run.diagnostics.contains("may be erased"), "\(run.diagnostics)")
    }

    /// A station for the CC2541F256 on a locked chip said to be a CC2541F128 is refused before the
    /// erase, as made for another part (with the rule that takes a locked chip at the size given,
    /// it was first refused as "does not report its flash size, and none was given").
    @Test func aLockedChipSaidToBeAnotherPartIsRefusedBeforeTheErase() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.flash[0x100] = 0x42
        provider.debuggers[0].chip!.setDebugLockBit()
        let run = ToolRun(["flash", image, "--flash-size", "128"], debuggers: provider)
        #expect(run.status == 65, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "a station of template 'cc2541-ibeacon', made for the CC2541F256; the target is a CC2541F128 (as --flash-size says)"
            ),
            "\(run.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash[0x100] == 0x42, "not erased")
        #expect(provider.debuggers[0].chip!.debugLocked, "still locked")
    }

    /// An image that clears DBGLOCK itself (a dump of a locked chip, `--allow-last-page`) locks
    /// the chip at its next reset as surely as `--lock-debug`: the lock is read back and said
    /// ("the target is running" was all a chip locked this way was told).
    @Test func anImageThatLocksTheChipIsReadBackAndSaid() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var image = try MemoryImage(bytes: [1, 2, 3, 4], at: 0)
        try image.write([0x7F], at: 0x3FFFF)
        let path = scratch.path("locking.hex")
        try Data(HexWriter().text(for: image)).write(to: URL(fileURLWithPath: path))
        let provider = EmulatorProvider()
        let run = ToolRun(["flash", path, "--allow-last-page"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            run.output.hasSuffix(
                "debug interface locked by the image's own lock bits (only a chip erase unlocks it)\n"),
            "\(run.output)")
        #expect(ToolRun(["info"], debuggers: provider).output.contains("debug interface LOCKED"))
        let asked = ToolRun(["flash", path, "--allow-last-page", "--lock-debug"], debuggers: provider)
        #expect(asked.status == 0, "\(asked.diagnostics)")
        #expect(asked.output.hasSuffix("\ndebug interface locked (only a chip erase unlocks it)\n"), "\(asked.output)")
        let unlocked = try scratch.write("plain.hex", ":0400000001020304F2\n:00000001FF\n")
        let plain = ToolRun(["flash", unlocked], debuggers: provider)
        #expect(plain.status == 0, "\(plain.diagnostics)")
        #expect(!plain.output.contains("locked"), "\(plain.output)")
    }

    /// `--preserve-mac` keeps the chip's secondary address, also where it has none: an address
    /// the image holds there (`--allow-last-page`) is not written (it was, under "none to keep").
    @Test func preserveMACKeepsNoneWhereTheChipHasNone() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var image = try MemoryImage(bytes: [1, 2, 3, 4], at: 0)
        try image.write([1, 2, 3, 4, 5, 6], at: 0x3FFEA)
        let path = scratch.path("addressed.hex")
        try Data(HexWriter().text(for: image)).write(to: URL(fileURLWithPath: path))
        let provider = EmulatorProvider()
        let run = ToolRun(["flash", path, "--allow-last-page", "--preserve-mac"], debuggers: provider)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("secondary address: none to keep"), "\(run.output)")
        #expect(Array(provider.debuggers[0].chip!.flash[0x3FFEA..<0x3FFF0]) == [UInt8](repeating: 0xFF, count: 6))
        #expect(Array(provider.debuggers[0].chip!.flash[0..<4]) == [1, 2, 3, 4])
        // Without --preserve-mac the image's bytes are written, as it asks.
        let plain = ToolRun(["flash", path, "--allow-last-page"], debuggers: provider)
        #expect(plain.status == 0, "\(plain.diagnostics)")
        #expect(Array(provider.debuggers[0].chip!.flash[0x3FFEA..<0x3FFF0]) == [1, 2, 3, 4, 5, 6])
        // A chip with an address keeps it over the image's.
        let kept = ToolRun(["flash", path, "--allow-last-page", "--preserve-mac"], debuggers: provider)
        #expect(kept.status == 0, "\(kept.diagnostics)")
        #expect(kept.output.contains("secondary address: 06:05:04:03:02:01"), "\(kept.output)")
    }

    /// The secondary address has the chip's length: 8 bytes on a CC253x, 6 on a CC2540/41; a
    /// part without a factory address has no place for one.
    @Test func theSecondaryAddressHasTheChipsLength() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("small.hex", ":040000001122334452\n:00000001FF\n")
        let eight = "11:22:33:44:55:66:77:88"
        let cc2530 = EmulatorProvider()
        cc2530.debuggers[0].chip = EmulatedChip(part: .named("CC2530F32")!)
        let written = ToolRun(["flash", image, "--mac", eight], debuggers: cc2530)
        #expect(written.status == 0, "\(written.diagnostics)")
        #expect(
            Array(cc2530.debuggers[0].chip!.flash[0x7FE8..<0x7FF0]) == [0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
        let six = ToolRun(["flash", image, "--mac", "11:22:33:44:55:66"], debuggers: cc2530)
        #expect(six.status == 64)
        #expect(six.diagnostics.contains("--mac: the address has 6 bytes; this chip's secondary address has 8"))
        #expect(six.diagnostics.contains("hint: give this chip's secondary address as 8 bytes"))
        let cc2543 = EmulatorProvider()
        cc2543.debuggers[0].chip = EmulatedChip(part: .named("CC2543F32")!)
        let none = ToolRun(["flash", image, "--mac", "11:22:33:44:55:66"], debuggers: cc2543)
        #expect(none.status == 64)
        #expect(none.diagnostics.contains("--mac: the CC2543F32 has no IEEE address, and no place for a secondary one"))
        #expect(
            ToolRun(["flash", image, "--mac", "11:22:33:44:55"]).diagnostics.contains(
                "must be 6 bytes (CC2540/41) or 8"))
        cc2543.debuggers[0].chip!.flash[0x100] = 0x5A
        for locked in [false, true] {
            if locked { cc2543.debuggers[0].chip!.setDebugLockBit() }
            let keep = ToolRun(["flash", image, "--preserve-mac"], debuggers: cc2543)
            #expect(keep.status == 64, "locked: \(locked)")
            #expect(
                keep.diagnostics.contains(
                    "--preserve-mac: the CC2543 has no IEEE address, and no secondary one to keep"))
            #expect(cc2543.debuggers[0].chip!.flash[0x100] == 0x5A, "the chip is left as it was")
        }
    }

    /// A debugger lost once the chip erase has begun leaves the chip's flash changed, and the
    /// user is told so, whatever step it was (here: right after the erase, while reconnecting).
    @Test(arguments: [14, 16, 18, 30])
    func aFailureAfterTheEraseSaysTheFlashChanged(unplugAfter: Int) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.flash[0] = 0x12
        provider.debuggers[0].faults.unplugAfterTransfers = unplugAfter
        let run = ToolRun(["flash", image], debuggers: provider)
        #expect(run.status == 1)
        let erased = provider.debuggers[0].chip!.flash[0] != 0x12
        #expect(
            run.diagnostics.contains("the chip's flash may be erased or partly written") == erased
                || run.diagnostics.contains("the chip is left partly written"), "\(unplugAfter): \(run.diagnostics)")
        if erased {
            #expect(!run.diagnostics.contains("hint: replug the debugger, press its reset button and try again"))
        }
    }

    /// A chip fault after the erase (here a stuck bit in the identity) says so too.
    @Test func aChipFaultAfterTheEraseSaysTheFlashChanged() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.stuckAtZero[0x7F10] = 0x01  // the byte there is 0x15: bit 0 is set
        let run = ToolRun(["flash", image], debuggers: provider)
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("verification failed"), "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains("hint: the chip's flash may be erased or partly written"), "\(run.diagnostics)")
    }
}

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
        (DebuggerOperation.startingErase, true), (.settingUpDMA, true), (.programming(address: 0x400), true),
        (.programming(address: nil), true), (.waitingForFlash, true), (.verifying(address: 0), true),
        (.waitingForCRC, true), (.askingState, false), (.identifying, false), (.readingFlash(address: 0), false),
        (.resettingToRun, false), (.opening(selector: "1:7"), false),
    ])
    func theHintFollowsWhatTheStepMayHaveChanged(operation: DebuggerOperation, changesFlash: Bool) {
        for error in [
            TransportError.timeout, .noDevice, .pipe, .libusb(LibUSBErrorCode(rawValue: -1, name: "LIBUSB_ERROR_IO")),
        ] {
            let failure = DeviceSupport.failure(.transport(error, during: operation))
            #expect(failure.hint?.contains(Self.partlyWritten) == changesFlash, "\(operation) \(error)")
            #expect(failure.message.hasSuffix("while \(operation)"), "\(failure.message)")
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

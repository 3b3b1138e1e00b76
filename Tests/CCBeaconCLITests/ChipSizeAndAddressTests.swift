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

/// The device commands on chips that report no size or are told a wrong one, their addresses
/// and their lock: the part of `DeviceCommandTests` about what a chip is and keeps.
extension DeviceCommandTests {
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
        // An image too large for the size given may be for a larger part of the family: the hint
        // says the size was --flash-size's, as it does for a locked chip.
        var large = try MemoryImage(bytes: [1], at: 0)
        try large.write([2], at: 20 * 1024)
        let largePath = scratch.path("large.hex")
        try Data(HexWriter().text(for: large)).write(to: URL(fileURLWithPath: largePath))
        let tooLarge = ToolRun(["flash", largePath, "--flash-size", "16"], debuggers: provider)
        #expect(tooLarge.status == 65)
        #expect(
            tooLarge.diagnostics.contains(
                "hint: the chip's size is --flash-size's (the CC2510 does not report its own): check it; the image is for a larger chip"
            ), "\(tooLarge.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash[0x100] == 0x5A)

        let flashed = ToolRun(["flash", image, "--flash-size", "16", "--lock-debug"], debuggers: provider)
        #expect(flashed.status == 0, "\(flashed.diagnostics)")
        #expect(flashed.output.contains("flashed \(image) to the CC2510F16 on"), "\(flashed.output)")
        #expect(provider.debuggers[0].chip!.flash.prefix(4) == [1, 2, 3, 4])
        #expect(provider.debuggers[0].chip!.infoPage[1] == 0xFE)
        let locked = ToolRun(["info"], debuggers: provider)
        #expect(locked.output.contains("target: CC2510, debug interface LOCKED"), "\(locked.output)")
        // Locked or not, a CC2510's size is the user's because the family reports none.
        let lockedTooLarge = ToolRun(["flash", largePath, "--flash-size", "16"], debuggers: provider)
        #expect(lockedTooLarge.status == 65)
        #expect(
            lockedTooLarge.diagnostics.contains(
                "hint: the chip's size is --flash-size's (the CC2510 does not report its own): check it"),
            "\(lockedTooLarge.diagnostics)")

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
        // An image no part of the family holds is not a matter of --flash-size.
        try image.write([9], at: 300 * 1024)
        try Data(HexWriter().text(for: image)).write(to: URL(fileURLWithPath: path))
        let huge = ToolRun(["flash", path, "--flash-size", "128"], debuggers: provider)
        #expect(huge.status == 65)
        #expect(huge.diagnostics.contains("the image reaches 0x4B000, beyond the chip's 128 KiB of flash"))
        #expect(
            huge.diagnostics.contains(
                "hint: the image is for a larger chip than any CC2541 (at most 256 KiB), or holds data at a wrong address"
            ),
            "\(huge.diagnostics)")
        #expect(!huge.diagnostics.contains("--flash-size"), "\(huge.diagnostics)")
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
        #expect(
            run.diagnostics.contains(
                "hint: check --flash-size, the chip's size (a debug-locked chip hides its own): the station runs on a CC2541F256"
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

    /// A flash that fails once the lock bits clearing DBGLOCK were written (the image's own, or
    /// `--lock-debug`'s on a part whose lock bits lie in flash) leaves a chip that locks at its
    /// next reset: the hint says so (it said only "may be erased or partly written"), and the
    /// chip is locked once reset. A lock that does not take follows a written image: its hint
    /// does not say the flash may be erased.
    @Test(arguments: [false, true])
    func aFailedFlashThatWroteTheLockSaysTheChipWillLock(lockDebug: Bool) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var image = try MemoryImage(bytes: [1, 2, 3, 4], at: 0)
        if !lockDebug { try image.write([0x7F], at: 0x3FFFF) }
        let path = scratch.path("locking.hex")
        try Data(HexWriter().text(for: image)).write(to: URL(fileURLWithPath: path))
        let provider = EmulatorProvider()
        provider.debuggers[0].chip!.stuckAtZero[2] = 0x01  // 03 reads 02: verification fails
        let run = ToolRun(
            ["flash", path, "--verify", "read", lockDebug ? "--lock-debug" : "--allow-last-page"], debuggers: provider)
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "the lock bits that lock the debug interface were written, or may have been: the chip may be debug-locked from its next reset"
            ), "\(run.diagnostics)")
        #expect(ToolRun(["info"], debuggers: provider).output.contains("debug interface LOCKED"))

        provider.debuggers[0].chip!.stuckAtZero = [:]
        provider.debuggers[0].chip!.ignoresDebugLock = true
        let plain = try scratch.write("plain.hex", ":0400000001020304F2\n:00000001FF\n")
        let ignored = ToolRun(["flash", plain, "--lock-debug"], debuggers: provider)
        #expect(ignored.status == 1, "\(ignored.diagnostics)")
        #expect(
            ignored.diagnostics.contains("hint: the image was written, but the chip ignores"), "\(ignored.diagnostics)")
        #expect(!ignored.diagnostics.contains("may be erased"), "\(ignored.diagnostics)")
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
        // What was verified is what was written: not the image's bytes the address kept out.
        let notCovered =
            "the image verified (crc) but for its bytes at 0x3FFEA-0x3FFEF, which the secondary address took the place of"
        #expect(run.output.contains(notCovered) && !run.output.contains("whole image"), "\(run.output)")
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
        #expect(plain.output.contains("the whole image verified (crc)"), "\(plain.output)")
        // The address kept is the image's own here (the plain run wrote it): nothing replaced.
        #expect(kept.output.contains("the whole image verified (crc)"), "\(kept.output)")
        let given = ToolRun(["flash", path, "--allow-last-page", "--mac", "06:05:04:03:02:09"], debuggers: provider)
        let oneByte = notCovered.replacing("its bytes at 0x3FFEA-0x3FFEF", with: "its byte at 0x3FFEA")
        #expect(given.output.contains(oneByte), "\(given.output)")
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

    /// A debugger lost at the very last transfer, the reset to run, leaves the station written,
    /// verified (unless --verify none) and locked as asked: `flash` says so, and sends the user to
    /// flash again neither then nor, as base did, with "may be erased".
    @Test(arguments: [(false, "crc"), (true, "crc"), (false, "none")])
    func aLostResetToRunSaysTheStationIsWritten(lockDebug: Bool, verify: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try Self.station(scratch)
        let arguments = ["flash", image, "--verify", verify] + (lockDebug ? ["--lock-debug"] : [])
        // The transfers of the whole command: the last is the reset to run.
        var total = 0
        for limit in 1... {
            let provider = EmulatorProvider()
            provider.debuggers[0].faults.unplugAfterTransfers = limit
            if ToolRun(arguments, debuggers: provider).status == 0 {
                total = limit
                break
            }
            try #require(limit < 10_000)
        }
        let provider = EmulatorProvider()
        provider.debuggers[0].faults.unplugAfterTransfers = total - 1
        let run = ToolRun(arguments, debuggers: provider)
        #expect(run.status == 1)
        let written = verify == "none" ? "written, not verified" : "written and verified"
        #expect(
            run.diagnostics.contains(
                "while resetting the target to run; the image is \(written)\(lockDebug ? ", and the debug interface is locked" : ""), but the chip was not reset to run it"
            ), "\(run.diagnostics)")
        let start = "(or press the debugger's reset button) and it runs the image"
        #expect(
            run.diagnostics.contains(
                "hint: "
                    + (verify == "none"
                        ? "power-cycle the chip \(start)" : "the chip needs no flashing again: power-cycle it \(start)")
            ), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("may be"), "\(run.diagnostics)")
        #expect(provider.debuggers[0].chip!.debugLocked == lockDebug)
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
                || run.diagnostics.contains("the chip is left partly written")
                || run.diagnostics.contains("the chip may be left partly erased"), "\(unplugAfter): \(run.diagnostics)")
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

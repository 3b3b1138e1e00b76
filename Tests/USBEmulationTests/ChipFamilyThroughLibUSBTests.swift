import Foundation
import IntelHex
import TestSupport
import Testing

/// Every part of the CC253x/CC254x family through real libusb (the burst path of the CC2530/31/33/
/// 40/41 and the XDATA path of the CC2543/44/45), and of the CC251x/111x with their older register
/// map and of the CC243x with its banked variant: ccbeacon identifies, erases, flashes, verifies
/// and reads each emulated part, and the unmodified cc-tool — with chip tables of its own —
/// identifies, programs and reads the same part; the two agree byte for byte.
///
/// cc-tool writes the CC251x/111x through a buffer at XDATA 0xF000, which is SRAM only on the
/// parts with 4 KiB; the emulator models the smaller parts' SRAM at the top of XDATA alone (whether
/// the silicon mirrors it lower is not in our sources), so there cc-tool only reads what ccbeacon
/// wrote. It writes the CC243x through a buffer at XDATA 0x0000 with its DMA descriptor at 0x0800,
/// where TI's memory map has flash, not SRAM (that ends the XDATA space from 0xE000): on the model
/// its write takes nothing, and it says "Completed" over an erased chip.
@Suite(
    .serialized,
    .enabled(if: Tools.available && Tools.ccTool != nil, "needs umockdev and cc-tool (scripts/test installs them)"))
struct ChipFamilyThroughLibUSBTests {
    /// A part as `cc-tool --test` and `ccbeacon info` name it.
    struct Part: Sendable, CustomStringConvertible {
        var name: String
        var targetID: String
        var chipID: String
        var flashKiB: Int
        var ramKiB: Int
        var pageSize: Int
        var description: String { name }
        /// The CC243x: the older map with banks, CHIPID at 0xDF61.
        var bankedOlderMap: Bool { ["2430", "2431"].contains(targetID) }
        /// The CC251x/111x and CC243x: no size report (`--flash-size`), no factory address.
        var olderMap: Bool { ["2510", "2511", "1110", "1111"].contains(targetID) || bankedOlderMap }
        /// Whether cc-tool's write buffer is SRAM on this part (see the suite's note).
        var ccToolWrites: Bool { !olderMap || (ramKiB == 4 && !bankedOlderMap) }
    }

    /// The family, as cc-debugger-protocol.md §6.1 lists it (one more statement of it: the test's own).
    static let parts: [Part] = currentParts + olderParts + bankedParts

    /// The CC253x/4x.
    static let currentParts: [Part] =
        [
            Part(name: "CC2530F32", targetID: "2530", chipID: "0xA5", flashKiB: 32, ramKiB: 8, pageSize: 2048),
            Part(name: "CC2530F64", targetID: "2530", chipID: "0xA5", flashKiB: 64, ramKiB: 8, pageSize: 2048),
            Part(name: "CC2530F128", targetID: "2530", chipID: "0xA5", flashKiB: 128, ramKiB: 8, pageSize: 2048),
            Part(name: "CC2530F256", targetID: "2530", chipID: "0xA5", flashKiB: 256, ramKiB: 8, pageSize: 2048),
            Part(name: "CC2531F128", targetID: "2531", chipID: "0xB5", flashKiB: 128, ramKiB: 8, pageSize: 2048),
            Part(name: "CC2531F256", targetID: "2531", chipID: "0xB5", flashKiB: 256, ramKiB: 8, pageSize: 2048),
            Part(name: "CC2533F32", targetID: "2533", chipID: "0x95", flashKiB: 32, ramKiB: 4, pageSize: 1024),
            Part(name: "CC2533F64", targetID: "2533", chipID: "0x95", flashKiB: 64, ramKiB: 4, pageSize: 1024),
            Part(name: "CC2533F96", targetID: "2533", chipID: "0x95", flashKiB: 96, ramKiB: 6, pageSize: 1024),
            Part(name: "CC2543F18", targetID: "2543", chipID: "0x43", flashKiB: 18, ramKiB: 1, pageSize: 1024),
            Part(name: "CC2543F32", targetID: "2543", chipID: "0x43", flashKiB: 32, ramKiB: 1, pageSize: 1024),
            Part(name: "CC2544F32", targetID: "2544", chipID: "0x44", flashKiB: 32, ramKiB: 2, pageSize: 1024),
            Part(name: "CC2545F18", targetID: "2545", chipID: "0x45", flashKiB: 18, ramKiB: 1, pageSize: 1024),
            Part(name: "CC2545F32", targetID: "2545", chipID: "0x45", flashKiB: 32, ramKiB: 1, pageSize: 1024),
            Part(name: "CC2540F128", targetID: "2540", chipID: "0x8D", flashKiB: 128, ramKiB: 8, pageSize: 2048),
            Part(name: "CC2540F256", targetID: "2540", chipID: "0x8D", flashKiB: 256, ramKiB: 8, pageSize: 2048),
            Part(name: "CC2541F128", targetID: "2541", chipID: "0x41", flashKiB: 128, ramKiB: 8, pageSize: 2048),
            Part(name: "CC2541F256", targetID: "2541", chipID: "0x41", flashKiB: 256, ramKiB: 8, pageSize: 2048),
        ]

    /// The CC251x/111x.
    static let olderParts: [Part] =
        [("CC2510", "0x81"), ("CC2511", "0x91"), ("CC1110", "0x01"), ("CC1111", "0x11")].flatMap { family, chipID in
            [(8, 1), (16, 2), (32, 4)].map { kib, ram in
                Part(
                    name: "\(family)F\(kib)", targetID: String(family.dropFirst(2)), chipID: chipID, flashKiB: kib,
                    ramKiB: ram, pageSize: 1024)
            }
        }

    /// The CC243x.
    static let bankedParts: [Part] =
        [("CC2430", "0x85"), ("CC2431", "0x89")].flatMap { family, chipID in
            [32, 64, 128].map { kib in
                Part(
                    name: "\(family)F\(kib)", targetID: String(family.dropFirst(2)), chipID: chipID, flashKiB: kib,
                    ramKiB: 8, pageSize: 2048)
            }
        }

    /// Code at 0, data across the middle, data just below the last page, as Intel HEX.
    static func image(for part: Part) throws -> String {
        let size = part.flashKiB * 1024
        var image = try MemoryImage(bytes: (0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }, at: 0)
        try image.write((0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }, at: size / 2 - 512)
        try image.write((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 3 &+ 0x40) }, at: size - part.pageSize - 512)
        return String(decoding: HexWriter().text(for: image), as: UTF8.self)
    }

    @Test(arguments: parts) func bothToolsIdentifyProgramAndReadThePart(part: Part) throws {
        let work = try Workspace()
        defer { work.remove() }
        let chip = ["--chip", part.name]
        let test = try Tools.run(chip, [Tools.ccTool!, "--test"], in: work.url)
        #expect(test.status == 0)
        // cc-tool prints the CC251x/111x's PARTNUM as "Revision" and VERSION as "Internal ID"; the
        // CC243x's CHVER and CHIPID the right way round.
        let expectedLines =
            part.olderMap
            ? [
                "Name: \(part.name.prefix(6))", "\(part.bankedOlderMap ? "Internal ID" : "Revision"): \(part.chipID)",
                "ID: 0x\(part.targetID)", "Flash size: n/a",
            ]
            : [
                "Name: \(part.name.prefix(6))", "Internal ID: \(part.chipID)", "ID: 0x\(part.targetID)",
                "Flash size: \(part.flashKiB) KB", "RAM size: \(part.ramKiB) KB",
            ]
        for line in expectedLines {
            #expect(test.output.contains(line), "cc-tool --test on \(part): \(line)\n\(test.output)")
        }
        // The older parts report no size: ccbeacon is told it, as a user reads it off the part.
        let size = part.olderMap ? ["--flash-size", String(part.flashKiB)] : []
        let info = try Tools.ccbeacon(["info"] + size, options: chip, in: work.url)
        #expect(info.status == 0, "\(info.errors)")
        #expect(info.output.contains("target: \(part.name) (chip ID \(part.chipID)"), "\(info.output)")
        let sizes =
            "\(part.flashKiB) KiB\(part.olderMap ? " (as --flash-size says; the chip does not report it)" : ""), RAM: \(part.ramKiB) KiB"
        #expect(info.output.contains("flash: \(sizes), debug lock: off"), "\(info.output)")

        let image = try work.write("image.hex", try Self.image(for: part))
        let flashed = try Tools.ccbeacon(
            ["flash", image, "--verify", "read"] + size, options: chip + ["--save-flash", work.path("ours.bin")],
            in: work.url)
        #expect(flashed.status == 0, "\(flashed.errors)")
        #expect(flashed.output.contains("to the \(part.name) on"))
        let ours = try work.bytes("ours.bin")
        #expect(ours.count == part.flashKiB * 1024)
        if part.ccToolWrites {
            let written = try Tools.run(
                chip + ["--save-flash", work.path("cc.bin")], [Tools.ccTool!, "-e", "-w", image, "-v"], in: work.url)
            #expect(written.status == 0 && !written.output.contains("Failed"), "\(written.output)")
            #expect(try work.bytes("cc.bin") == ours, "cc-tool and ccbeacon leave the same flash")
        } else if part.bankedOlderMap {
            let written = try Tools.run(
                chip + ["--save-flash", work.path("cc.bin")], [Tools.ccTool!, "-e", "-w", image], in: work.url)
            #expect(written.status == 0, "\(written.output)")
            #expect(try work.bytes("cc.bin").allSatisfy { $0 == 0xFF }, "cc-tool's buffer at 0x0000 is flash")
        }

        // Each reads what the other wrote, the whole flash (cc-tool reads the largest size of a
        // family that reports none).
        let ccToolRead = try Tools.run(
            chip + ["--flash", work.path("ours.bin")], [Tools.ccTool!, "-r", work.path("cc-read.bin")], in: work.url)
        #expect(ccToolRead.status == 0)
        #expect(try work.bytes("cc-read.bin").prefix(ours.count) == ours[...])
        let oursRead = try Tools.ccbeacon(
            ["read", "-o", work.path("ours-read.bin")] + size,
            options: chip + ["--flash", work.path(part.ccToolWrites ? "cc.bin" : "ours.bin")], in: work.url)
        #expect(oursRead.status == 0, "\(oursRead.errors)")
        #expect(try work.bytes("ours-read.bin") == ours)

        let erase = try Tools.ccbeacon(
            ["erase"],
            options: chip + [
                "--flash", work.path(part.ccToolWrites ? "cc.bin" : "ours.bin"), "--save-flash",
                work.path("erased.bin"),
            ],
            in: work.url)
        #expect(erase.status == 0, "\(erase.errors)")
        #expect(try work.bytes("erased.bin").allSatisfy { $0 == 0xFF })
    }

    /// The Z-Stack images of the shared corpus, written by both tools, verified by both, equal: a
    /// CC2530 ZNP with a lock byte at 0x3FFF0 that protects its boot pages (refused until
    /// `--allow-last-page` says it is meant), and a CC2531 router that ends at 0x2F8FF.
    @Test(arguments: [
        ("CC2530F256", "39_koenkk-ZStack-CC2530ZNP-Prod.hex", true),
        ("CC2531F256", "40_koenkk-ZStack-router-cc2531-std.hex", false),
    ])
    func zStackImagesAreFlashedAndVerified(part: String, file: String, locksBootPages: Bool) throws {
        let corpus = SharedFixtures.files(in: "corpus", withExtension: "hex").first { $0.lastPathComponent == file }
        guard let corpus else { return }  // ../shared is not beside the checkout
        let work = try Workspace()
        defer { work.remove() }
        let chip = ["--chip", part]
        if locksBootPages {
            let refused = try Tools.ccbeacon(["flash", corpus.path], options: chip, in: work.url)
            #expect(refused.status == 65)
            #expect(
                refused.errors.contains("the image has data at 0x3FFF0, in the last flash page"), "\(refused.errors)")
        }
        let flashed = try Tools.ccbeacon(
            ["flash", corpus.path] + (locksBootPages ? ["--allow-last-page"] : []),
            options: chip + ["--save-flash", work.path("ours.bin")], in: work.url)
        #expect(flashed.status == 0, "\(flashed.errors)")
        #expect(flashed.output.contains("the whole image verified (crc)"), "\(flashed.output)")
        let written = try Tools.run(
            chip + ["--save-flash", work.path("cc.bin")], [Tools.ccTool!, "-e", "-w", corpus.path, "-v"], in: work.url)
        #expect(written.status == 0 && !written.output.contains("Failed"), "\(written.output)")
        #expect(try work.bytes("cc.bin") == work.bytes("ours.bin"))
        #expect(try work.bytes("ours.bin")[0x3FFF0] == (locksBootPages ? 0xF0 : 0xFF))
    }
}

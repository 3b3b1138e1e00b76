import Foundation
import IntelHex
import TestSupport
import Testing

/// The reference firmware's build: reproducible from source, and laid out as its README and
/// template.json say (static checks on the linker map and the image).
@Suite(.enabled(if: FirmwareBuild.canBuild, "needs SDCC (Debian package sdcc; scripts/test installs it)"))
struct FirmwareBuildTests {
    /// Anyone can rebuild both committed images from the C source, byte for byte (with the SDCC
    /// they were built with; another version makes other, equally valid code).
    @Test(
        .enabled(
            if: FirmwareBuild.hasPinnedSDCC,
            "needs SDCC \(FirmwareBuild.pinnedSDCCVersion), which built the committed images"))
    func committedImagesRebuildFromSource() throws {
        let build = try FirmwareBuild.require()
        #expect(
            try Data(contentsOf: build.image)
                == Data(contentsOf: FirmwareBuild.source.appendingPathComponent("image.hex")),
            "image.hex does not match what src/ builds to; run make in firmware-templates/cc2541-ibeacon")
        #expect(
            try Data(contentsOf: build.prewhitenedImage)
                == Data(contentsOf: FirmwareBuild.prewhitenedSource.appendingPathComponent("image.hex")),
            "the pre-whitened image does not match what src/ builds to; run make in firmware-templates/cc2541-ibeacon")
    }

    /// Code below the absolute blocks and inside the unbanked 32 KiB; the PDU, interval and TX
    /// power at their documented addresses; the power-mode entry where the PCON rule holds. For
    /// the shipped builds and the simulation builds alike (the simulation tests patch the latter
    /// with the shipped manifests, so their layout must agree).
    @Test(arguments: ["standard", "prewhitened", "sniff", "sim", "prewhitened-sim", "sniff-sim"])
    func linkerMapPlacesEverythingWhereDocumented(variant: String) throws {
        let build = try FirmwareBuild.require()
        let map = try build.map(variant)
        #expect(
            map.relocatableCodeEnd > 0x100 && map.relocatableCodeEnd <= 0x7EF0, "code ends at \(map.relocatableCodeEnd)"
        )
        #expect(map.symbols["_advertising_pdu"] == 0x7F00)
        #expect(map.symbols["_advertising_interval"] == 0x7F28)
        #expect(map.symbols["_tx_power_setting"] == 0x7F2C)
        let entry = try #require(map.symbols["_enter_power_mode"])
        #expect(entry == 0x7EF0)
        #expect((entry + 3) % 4 != 0, "the instruction after MOV PCON,#1 must not start on a 4-byte boundary")

        let image =
            variant.hasSuffix("sim")
            ? build.url("build/\(variant)/beacon.ihx") : build.url("build/\(variant)/beacon.ihx")
        let memory = try IntelHexFile(text: [UInt8](try Data(contentsOf: image)), fileName: image.path).memory
        // MOV PCON,#1 (75 87 01), NOP, RET.
        #expect(memory.contiguousBytes(in: entry..<(entry + 5)) == [0x75, 0x87, 0x01, 0x00, 0x22])
        #expect(try #require(memory.endAddress) <= 0x8000, "everything in the unbanked 32 KiB")
        // Template defaults: 100 ms rounded up to 3276 ticks of 32.753 kHz (100.02 ms; 3275 would
        // be 99.99 ms, under the Bluetooth 4.x minimum), TXPOWER 0xE1 (0 dBm).
        #expect(memory.contiguousBytes(in: 0x7F28..<0x7F2D) == [0xCC, 0x0C, 0x00, 0x00, 0xE1])
    }
}

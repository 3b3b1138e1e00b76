import BeaconPayload
import Foundation
import IntelHex
import Storage
import TestSupport
import Testing

@testable import FirmwareTemplate

/// The templates bundled in firmware-templates/.
struct BundledTemplateTests {
    static let directory = SharedFixtures.checkout.appendingPathComponent("firmware-templates").path
    static let names = (try? Files.list(directory).filter { Files.isFile("\(directory)/\($0)/template.json") }) ?? []

    @Test func thereIsABundledTemplate() {
        #expect(Self.names.contains("cc2541-ibeacon"))
    }

    @Test(arguments: names)
    func everyBundledTemplateLoadsAndStampsAStation(name: String) throws {
        let template = try StationTemplate.load(
            directory: "\(Self.directory)/\(name)", catalog: BoardCatalogTests.loadBundled())
        #expect(template.manifest.name == name)
        let identity = try #require(
            try? BeaconPayload.IBeacon(uuid: "7634A485-1732-4B7D-AB44-D505D8A24C60", major: "9", minor: "9"))
        let station = template.stationImage(for: identity)
        #expect(template.verify(station.file.memory, expected: identity, checkPower: true).passed)
    }

    /// The reference firmware keeps the whole 38-byte advertising PDU at 0x7F00, as its source
    /// and README document: header, advertiser address, then the 30-byte iBeacon data.
    @Test func referenceFirmwarePDUBlockIsWhereTheREADMESays() throws {
        let template = try StationTemplate.load(
            directory: "\(Self.directory)/cc2541-ibeacon", catalog: BoardCatalogTests.loadBundled())
        let block = try #require(template.image.memory.contiguousBytes(in: 0x7F00..<0x7F26))
        #expect(Array(block[0..<2]) == [0x42, 0x24])  // ADV_NONCONN_IND, random address, 36 bytes
        #expect(Array(block[2..<8]) == [0x56, 0x34, 0x12, 0xEE, 0xFF, 0xC0])  // C0:FF:EE:12:34:56, LSB first
        #expect(template.beaconField.address == 0x7F08)
        #expect(template.beaconField.kind == .iBeaconAdvertisingData)
        #expect(template.image.memory.endAddress! <= 0x8000, "everything in the unbanked 32 KiB")
    }

    static let sdcc = ["/usr/bin/sdcc", "/usr/local/bin/sdcc"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Anyone can rebuild the committed image.hex from the C source, byte for byte.
    @Test(.enabled(if: sdcc != nil, "needs SDCC (Debian package sdcc; scripts/test installs it)"))
    func committedImageRebuildsFromSource() throws {
        let source = "\(Self.directory)/cc2541-ibeacon"
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sdcc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "\(source)/src", toPath: work.appendingPathComponent("src").path)
        try FileManager.default.copyItem(
            atPath: "\(source)/Makefile", toPath: work.appendingPathComponent("Makefile").path)
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/make")
        make.arguments = ["-C", work.path, "image.hex"]
        make.standardOutput = FileHandle.nullDevice
        make.standardError = FileHandle.nullDevice
        try make.run()
        make.waitUntilExit()
        #expect(make.terminationStatus == 0)
        let rebuilt = try Data(contentsOf: work.appendingPathComponent("image.hex"))
        let committed = try Data(contentsOf: URL(fileURLWithPath: "\(source)/image.hex"))
        #expect(
            rebuilt == committed,
            "image.hex does not match what src/beacon.c builds to; run make in firmware-templates/cc2541-ibeacon")
    }
}

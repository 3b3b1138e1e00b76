import BeaconPayload
import Foundation
import IntelHex
import Storage
import TemplateFiles
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
        let template = try TemplateFolder.load("\(Self.directory)/\(name)", catalog: BoardCatalogTests.loadBundled())
        #expect(template.manifest.name == name)
        let identity = try #require(
            try? BeaconPayload.IBeacon(uuid: "7634A485-1732-4B7D-AB44-D505D8A24C60", major: "9", minor: "9"))
        let station = template.stationImage(for: identity)
        #expect(template.verify(station.file.memory, expected: identity, checkPower: true).passed)
    }

    /// The reference firmware keeps the whole 38-byte advertising PDU at 0x7F00, as its source
    /// and README document: header, advertiser address, then the 30-byte iBeacon data.
    @Test func referenceFirmwarePDUBlockIsWhereTheREADMESays() throws {
        let template = try TemplateFolder.load(
            "\(Self.directory)/cc2541-ibeacon", catalog: BoardCatalogTests.loadBundled())
        let block = try #require(template.image.memory.contiguousBytes(in: 0x7F00..<0x7F26))
        #expect(Array(block[0..<2]) == [0x42, 0x24])  // ADV_NONCONN_IND, random address, 36 bytes
        #expect(Array(block[2..<8]) == [0x56, 0x34, 0x12, 0xEE, 0xFF, 0xC0])  // C0:FF:EE:12:34:56, LSB first
        #expect(template.beaconField.address == 0x7F08)
        #expect(template.beaconField.kind == .iBeaconAdvertisingData)
        #expect(template.image.memory.endAddress! <= 0x8000, "everything in the unbanked 32 KiB")
    }
}

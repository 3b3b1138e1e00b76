import Foundation
import IntelHex
import TestSupport
import Testing

@testable import FirmwareTemplate

@Suite(.enabled(if: SharedFixtures.available, "needs ../shared/corpus"))
struct CorpusScanTests {
    /// The iBeacon images of the corpus and where their 30-byte block starts (corpus README).
    static let iBeaconImages: [(String, Int, String)] = [
        ("01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex", 0x32A, "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"),
        ("02_ghostyu-SimpleBLEPeripheral-ibeacon-CC2540-IAR.hex", 0x32A, "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"),
        ("03_bjoerke-HM10-ibeacon-custom-v1_0.bin", 0x20D, "EBEFD083-70A2-47C8-9837-E7B5634DF524"),
        ("05_HMSoft-HM10-CC2541-V540-full.bin", 0x904, "74278BDA-B644-4520-8F0C-720EAF059935"),
        ("06_HMSoft-HM10-CC2541-V551-HMSoft.bin", 0x12B, "74278BDA-B644-4520-8F0C-720EAF059935"),
        ("07_HMSoft-HM10-CC2541-V606-full.bin", 0x247, "74278BDA-B644-4520-8F0C-720EAF059935"),
        ("08_HMSoft-HM10-CC2541-V606-HMSoft.bin", 0x246, "74278BDA-B644-4520-8F0C-720EAF059935"),
        ("09_HMSoft-HM10-CC2541-V609-full.bin", 0x246, "74278BDA-B644-4520-8F0C-720EAF059935"),
        ("10_HMSoft-HM10-CC2541-V700-HMSoft.bin", 0x213, "74278BDA-B644-4520-8F0C-720EAF059935"),
        ("11_HMSoft-HM10-CC2541-V707-full.bin", 0xA16, "74278BDA-B644-4520-8F0C-720EAF059935"),
        ("12_HMSoft-HM10-CC2541-V707-HMSoft.bin", 0x216, "74278BDA-B644-4520-8F0C-720EAF059935"),
        ("13_HMSoft-HM10-CC2541-V709-full.bin", 0xA16, "74278BDA-B644-4520-8F0C-720EAF059935"),
        ("14_HMSoft-HM10-CC2541-V710.bin", 0x216, "74278BDA-B644-4520-8F0C-720EAF059935"),
    ]

    @Test(arguments: iBeaconImages)
    func findsTheIBeaconBlock(name: String, address: Int, uuid: String) throws {
        let found = PayloadFinder.find(try SharedFixtures.corpusMemory(name)).filter(\.isIBeacon)
        let block = try #require(found.first { $0.address == address }, "\(name): \(found.map(\.address))")
        #expect(block.layout == .iBeaconAdvertisingData(flags: 0x06))
        #expect(block.iBeacon?.uuid.uuidString == uuid)
        #expect(block.identityAddress == address + 9)
    }

    @Test(arguments: ["04_bjoerke-HM10-broadcaster-custom-v1_1.bin", "15_kilianc-BLE112-ibeacon-bgscript-CC2540.hex"])
    func negativeControlsHaveNoBlock(name: String) throws {
        #expect(PayloadFinder.find(try SharedFixtures.corpusMemory(name)).filter(\.isIBeacon).isEmpty)
    }

    @Test func findsTheUriBeaconIsNotAnIBeacon() throws {
        let found = PayloadFinder.find(
            try SharedFixtures.corpusMemory("34_google-UriBeacon-SimpleBLEBroadcaster-CC2541.hex"))
        #expect(found.allSatisfy { !$0.isIBeacon })
    }
}

@Suite(.enabled(if: SharedFixtures.available, "needs ../shared/corpus"))
struct OADTests {
    /// The CRC algorithm is proven on real images before anything relies on it: every stored crc0
    /// must be reproduced.
    @Test(arguments: [
        ("20_TI-BLE140-CC2541DK_BIM_SensorTagOadImgA.hex", 0x0800, OADHeader.Layout.bimImageA),
        ("27_TI-BLE13-CC2541DK_BIM_SensorTagOadImgA.hex", 0x0800, .bimImageA),
        ("28_ghostyu-OAD-ImageA-CC2541-SimpleBLEPeripheral.bin", 0x0000, .contiguous),
        ("29_ghostyu-OAD-ImageB-CC2541-SimpleBLEPeripheral.bin", 0x0000, .contiguous),
        ("31_deqingsun-BIMwithSmallOadA-CC2541.hex", 0x0800, .bimImageA),
        ("32_deqingsun-havirFwSmallUpdateA-CC2541.hex", 0x0800, .bimImageA),
        ("33_deqingsun-havirFwSmallUpdateA-CC2541.bin", 0x0000, .contiguous),
    ])
    func storedCRCIsReproduced(name: String, address: Int, layout: OADHeader.Layout) throws {
        let memory = try SharedFixtures.corpusMemory(name)
        let header = try #require(OADHeader.detect(in: memory), "\(name): no OAD header with a matching CRC")
        #expect(header.address == address)
        #expect(header.layout == layout)
        #expect(header.computeCRC(memory) == header.crc0)
    }

    @Test func theBIMAloneHasNoHeader() throws {
        #expect(OADHeader.detect(in: try SharedFixtures.corpusMemory("30_ghostyu-BIM_CC254xF256.hex")) == nil)
    }

    @Test func smallImageASecondPartEndsAtPage124() throws {
        let header = try #require(
            OADHeader.detect(in: try SharedFixtures.corpusMemory("31_deqingsun-BIMwithSmallOadA-CC2541.hex")))
        #expect(header.lengthWords == 24064)
        #expect(header.crcRanges == [0x0804..<0x4000, 0x2A800..<0x3E800])
    }

    @Test func changedBytesGetAFreshCRCAndAShadowTheBIMWillCheck() throws {
        let name = "32_deqingsun-havirFwSmallUpdateA-CC2541.hex"
        let url = SharedFixtures.directory!.appendingPathComponent("corpus/\(name)")
        let file = try IntelHexFile(text: try SharedFixtures.bytes(url))
        let header = try #require(OADHeader.detect(in: file.memory))
        // Change bytes in both parts of the split Image A.
        var patched = try file.patchingRecords([
            MemoryPatch(address: 0x1000, bytes: [1, 2, 3]), MemoryPatch(address: 0x30000, bytes: [4, 5]),
        ]).file
        #expect(OADHeader.validHeader(in: patched.memory) == nil, "the old CRC no longer matches")
        #expect(OADHeader.detect(in: patched.memory)?.crcMatches(patched.memory) == false, "found, and told stale")
        patched = try patched.patchingRecords(header.crcPatches(for: patched.memory)).file
        let fixed = try #require(OADHeader.detect(in: patched.memory))
        #expect(fixed.crc0 != header.crc0)
        #expect(fixed.crc1 == 0xFFFF)
    }
}

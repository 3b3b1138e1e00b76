import BeaconPayload
import Checksums
import Foundation
import IntelHex
import Storage
import StructuredText
import TargetData
import TestSupport
import Testing

@testable import FirmwareTemplate

/// Builds a template in memory from an image the way `template import` does.
func makeTemplate(
    name: String, imageBytes: [UInt8], isHex: Bool, chip: Chip, catalog: BoardCatalog, address: Int? = nil
) throws -> StationTemplate {
    let memory = isHex ? try IntelHexFile(text: imageBytes).memory : try MemoryImage(bytes: imageBytes, at: 0)
    let text = isHex ? imageBytes : TemplateImport.hexText(forBinary: memory, pageSize: chip.pageSize)
    let (beacon, _) = try TemplateImport.chooseBlock(in: memory, chip: chip, address: address)
    let manifest = TemplateImport.manifest(
        name: name, description: "test", chip: chip, imageFileName: "image.hex", imageBytes: text, beacon: beacon,
        memory: memory)
    // Round-trip the manifest through its JSON form, as a real import would.
    let reread = try TemplateManifest.read(Array(manifest.json().rendered().utf8), file: "template.json")
    #expect(reread == manifest)
    return try StationTemplate(
        manifest: reread, imageBytes: text, imagePath: "image.hex", directory: ".", catalog: catalog)
}

@Suite(.enabled(if: SharedFixtures.available, "needs ../shared/corpus"))
struct CorpusImportTests {
    static let catalog = try! BoardCatalogTests.loadBundled()
    static let f256 = catalog.chip(named: "CC2541F256")!
    static let station = try! IBeacon(
        uuid: "7634A485-1732-4B7D-AB44-D505D8A24C60", major: "0x0102", minor: "0x0304", power: "-51")

    @Test(arguments: CorpusScanTests.iBeaconImages)
    func importsEveryIBeaconImageAndStampsAStation(name: String, address: Int, uuid: String) throws {
        let bytes = try SharedFixtures.bytes(SharedFixtures.directory!.appendingPathComponent("corpus/\(name)"))
        let template = try makeTemplate(
            name: "t", imageBytes: bytes, isHex: name.hasSuffix(".hex"), chip: Self.f256, catalog: Self.catalog)
        #expect(template.beaconField.address == address)
        #expect(template.beaconField.kind == .iBeaconAdvertisingData)
        let station = template.stationImage(for: Self.station)
        #expect(station.file.memory.contiguousBytes(in: (address + 9)..<(address + 30)) == Self.station.payload)
        #expect(station.rewrittenLines.count <= 3)
        #expect(template.verify(station.file.memory, expected: Self.station, checkPower: true).passed)
        // The same image read back from its own text verifies too.
        let reread = try IntelHexFile(text: station.file.text)
        #expect(template.verify(reread.memory, expected: Self.station, checkPower: true).passed)
    }

    @Test func ghostYuTemplateDiffIsTwoLines() throws {
        let bytes = try SharedFixtures.bytes(
            SharedFixtures.directory!.appendingPathComponent(
                "corpus/01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex"))
        let template = try makeTemplate(
            name: "t", imageBytes: bytes, isHex: true, chip: Self.f256, catalog: Self.catalog)
        let station = template.stationImage(for: Self.station)
        #expect(station.rewrittenLines == [50, 51])
        #expect(station.file.text.count == bytes.count)
    }

    @Test(arguments: ["04_bjoerke-HM10-broadcaster-custom-v1_1.bin", "15_kilianc-BLE112-ibeacon-bgscript-CC2540.hex"])
    func refusesImagesWithoutAContiguousBlock(name: String) throws {
        let memory = try SharedFixtures.corpusMemory(name)
        #expect(throws: ImportError.noBlock) {
            try TemplateImport.chooseBlock(in: memory, chip: Self.f256, address: nil)
        }
    }

    @Test func refusesBlocksInNVAndLockPages() throws {
        var memory = try SharedFixtures.corpusMemory("03_bjoerke-HM10-ibeacon-custom-v1_0.bin")
        let block = try #require(memory.contiguousBytes(in: 0x20D..<0x22B))
        try memory.write(block, at: 0x3E900)  // a copy in the NV pages
        let (chosen, candidates) = try TemplateImport.chooseBlock(in: memory, chip: Self.f256, address: nil)
        #expect(chosen.address == 0x20D)
        #expect(candidates.count == 2)
        #expect(candidates[1].refusal == "it lies in the NV pages the BLE stack writes at first boot")
        #expect(throws: ImportError.refusedAtAddress(candidates[1])) {
            try TemplateImport.chooseBlock(in: memory, chip: Self.f256, address: 0x3E900)
        }
        var onlyLock = MemoryImage()
        try onlyLock.write(block, at: 0x3FFC0)
        #expect {
            try TemplateImport.chooseBlock(in: onlyLock, chip: Self.f256, address: nil)
        } throws: { error in
            guard case .onlyRefused(let list) = error as? ImportError else { return false }
            return list.first?.refusal == "it lies in the last page (secondary address and lock bits)"
        }
    }

    @Test func ambiguousImagesListEveryCandidateAndAddressChooses() throws {
        var memory = try SharedFixtures.corpusMemory("03_bjoerke-HM10-ibeacon-custom-v1_0.bin")
        let block = try #require(memory.contiguousBytes(in: 0x20D..<0x22B))
        try memory.write(block, at: 0x1000)
        #expect {
            try TemplateImport.chooseBlock(in: memory, chip: Self.f256, address: nil)
        } throws: { error in
            guard let error = error as? ImportError, case .ambiguous = error else { return false }
            return error.description.contains(
                "0x20D: iBeacon EBEFD083-70A2-47C8-9837-E7B5634DF524 major 48059 minor 43690 power -112 dBm")
                && error.description.contains("0x1000: iBeacon")
        }
        #expect(try TemplateImport.chooseBlock(in: memory, chip: Self.f256, address: 0x1000).chosen.address == 0x1000)
        #expect(throws: ImportError.self) {
            try TemplateImport.chooseBlock(in: memory, chip: Self.f256, address: 0x1001)
        }
    }

    /// An OAD template: the real Image A of file 32 with an iBeacon block planted in it and its CRC
    /// made valid again, as a firmware engineer's build would be. Every station keeps a valid CRC.
    @Test func oadTemplateKeepsTheBootManagersCRCValid() throws {
        let url = SharedFixtures.directory!.appendingPathComponent("corpus/32_deqingsun-havirFwSmallUpdateA-CC2541.hex")
        let original = try IntelHexFile(text: try SharedFixtures.bytes(url))
        let header = try #require(OADHeader.detect(in: original.memory))
        let placeholder = try IBeacon(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: "1", minor: "2")
            .advertisingData()
        var planted = try original.patchingRecords([MemoryPatch(address: 0x2000, bytes: placeholder)]).file
        planted = try planted.patchingRecords(header.crcPatches(for: planted.memory)).file
        let template = try makeTemplate(
            name: "oad", imageBytes: planted.text, isHex: true, chip: Self.f256, catalog: Self.catalog)
        #expect(template.manifest.oad == OADSpec(headerAddress: 0x0800, layout: .bimImageA))
        let station = template.stationImage(for: Self.station)
        let checked = try #require(OADHeader.detect(in: station.file.memory))
        #expect(checked.crc1 == 0xFFFF)
        #expect(checked.crc0 != template.oadHeader?.crc0)
        #expect(template.verify(station.file.memory, expected: Self.station, checkPower: true).passed)
        // A station whose CRC was not refreshed fails verification.
        let stale = try template.image.patchingRecords([
            MemoryPatch(address: template.beaconField.address, bytes: template.fieldBytes(for: Self.station))
        ])
        let report = template.verify(stale.file.memory, expected: Self.station, checkPower: true)
        #expect(report.problems.contains { $0.contains("CRC") })
    }
}

struct TemplateValidationTests {
    static let catalog = try! BoardCatalogTests.loadBundled()
    static let identity = try! IBeacon(
        uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: "1", minor: "2", power: "-59")

    /// A small synthetic image: code bytes, the iBeacon block at 0x100, more code.
    static func image() -> [UInt8] {
        var memory = try! MemoryImage(bytes: [UInt8](repeating: 0x22, count: 0x100), at: 0)
        try! memory.write(identity.advertisingData(), at: 0x100)
        try! memory.write([UInt8](repeating: 0x33, count: 0x40), at: 0x11E)
        return HexWriter(lineEnding: .crlf).text(for: memory, startAddress: .linear(0))
    }

    static func template(_ edit: (inout TemplateManifest) -> Void = { _ in }, image: [UInt8] = image()) throws
        -> StationTemplate
    {
        let f256 = catalog.chip(named: "CC2541F256")!
        let memory = try IntelHexFile(text: image).memory
        let (beacon, _) = try TemplateImport.chooseBlock(in: memory, chip: f256, address: nil)
        var manifest = TemplateImport.manifest(
            name: "t", description: "d", chip: f256, imageFileName: "image.hex", imageBytes: image, beacon: beacon,
            memory: memory)
        edit(&manifest)
        return try StationTemplate(
            manifest: manifest, imageBytes: image, imagePath: "t/image.hex", directory: "t", catalog: catalog)
    }

    @Test func refusesAChangedImage() throws {
        let manifest = try Self.template().manifest
        // Valid HEX, one code byte different: the sha256 in the manifest no longer matches.
        let changed = try IntelHexFile(text: Self.image()).patchingRecords([MemoryPatch(address: 0x10, bytes: [0x99])])
            .file.text
        #expect {
            try StationTemplate(
                manifest: manifest, imageBytes: changed, imagePath: "t/image.hex", directory: "t", catalog: Self.catalog
            )
        } throws: { error in
            guard case .imageChanged(let path, let expected, let actual) = error as? TemplateError else { return false }
            return path == "t/image.hex" && expected == manifest.imageSHA256 && actual == SHA256.hexDigest(changed)
        }
    }

    @Test func refusesPlaceholderMismatchUnknownChipReservedAndMissingFields() {
        #expect { try Self.template { $0.fields[0].placeholder[12] ^= 0xFF } } throws: { error in
            guard case .placeholderMismatch(_, let address, _, _) = error as? TemplateError else { return false }
            return address == 0x100
        }
        #expect { try Self.template { $0.chip = "CC9999" } } throws: { error in
            guard case .unknownChip = error as? TemplateError else { return false }
            return true
        }
        #expect { try Self.template { $0.fields[0].address = 0x3E800 } } throws: { error in
            error as? TemplateError
                == .reservedArea(
                    field: "advertisingData", address: 0x3E800, use: "the NV pages the BLE stack writes at first boot")
        }
        #expect { try Self.template { $0.fields[0].address = 0x200 } } throws: { error in
            error as? TemplateError == .fieldNotInImage(field: "advertisingData", address: 0x200)
        }
        #expect { try Self.template { $0.oad = OADSpec(headerAddress: 0, layout: .contiguous) } } throws: { error in
            error as? TemplateError == .oadHeaderInvalid(address: 0)
        }
    }

    @Test func stationKeepsTheTemplatesFlagsAndVerifies() throws {
        let template = try Self.template()
        let other = try IBeacon(uuid: "7634A485-1732-4B7D-AB44-D505D8A24C60", major: "7", minor: "9", power: "-60")
        let station = template.stationImage(for: other)
        #expect(station.payloadAddress == 0x100)
        #expect(
            station.file.memory.contiguousBytes(in: 0x100..<0x109) == [
                0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
            ])
        #expect(template.verify(station.file.memory, expected: other, checkPower: true).passed)

        let wrong = try IBeacon(uuid: "7634A485-1732-4B7D-AB44-D505D8A24C60", major: "8", minor: "9", power: "-61")
        let report = template.verify(station.file.memory, expected: wrong, checkPower: true)
        #expect(report.problems == ["major: expected 8, found 7", "power: expected -61 dBm, found -60 dBm"])
        let noPower = template.verify(
            station.file.memory,
            expected: try IBeacon(uuid: "7634A485-1732-4B7D-AB44-D505D8A24C60", major: "7", minor: "9"),
            checkPower: false)
        #expect(noPower.passed)
        #expect(noPower.notes == ["power not checked (the image has -60 dBm)"])

        var tampered = station.file.memory
        try tampered.write([0x00, 0x00], at: 0x20)
        #expect(
            template.verify(tampered, expected: other, checkPower: true).problems == [
                "the image differs from template 't' outside the payload: 2 bytes, the first at 0x20"
            ])
        #expect(
            template.verify(MemoryImage(), expected: other, checkPower: true).problems.first
                == "the image holds no complete iBeacon field at 0x100")
    }

    @Test(arguments: [
        (
            #""format": 1"#, #""format": 3"#,
            "template.json:1:12: format: version 3 is not supported; this ccbeacon reads version 1"
        ),
        (
            #""payloadFormat": "ibeacon""#, #""payloadFormat": "eddystone""#,
            "payloadFormat: 'eddystone' is not supported by this ccbeacon; supported: ibeacon"
        ),
        (
            #""kind": "ibeacon-advertising-data""#, #""kind": "tx-power""#,
            "fields[0].kind: 'tx-power' is not a field kind"
        ),
        (
            #""length": 30"#, #""length": 29"#,
            "fields[0].placeholder: holds 30 bytes and length says 29; a field of kind ibeacon-advertising-data takes 30"
        ),
        (#""name": "t""#, #""name": "../t""#, "name: '../t' must be letters, digits"),
        (
            #""image": "image.hex""#, #""image": "../image.hex""#,
            "image: must be a file name inside the template folder"
        ),
        // The manifest itself was refused as an image that "has changed since the template was made".
        (
            #""image": "image.hex""#, #""image": "template.json""#,
            "image: 'template.json' is this file, not a firmware image; give the image's file name (image.hex)"
        ),
    ])
    func manifestErrorsNameTheKey(original: String, replacement: String, message: String) throws {
        let template = try Self.template()
        let text = template.manifest.json().rendered().replacingOccurrences(of: "\n", with: "").replacingOccurrences(
            of: "  ", with: "")
        #expect(text.contains(original))
        #expect {
            try TemplateManifest.read(
                Array(text.replacingOccurrences(of: original, with: replacement).utf8), file: "template.json")
        } throws: { error in
            (error as? DataFileError)?.description.contains(message) == true
        }
    }
}

/// What is a station of a template: whatever leaves the same flash on an erased chip, fields
/// aside, with an identity in its beacon field — and nothing else.
struct StationRecognitionTests {
    enum Variant: String, CaseIterable, Sendable {
        case asGenerated, flatBinary, fieldsErased, extraByte, empty, fieldsOnly, templateItself
    }

    @Test(arguments: Variant.allCases) func aStationIsRecognisedWhateverItsLayout(variant: Variant) throws {
        let template = try BundledData.template()
        let identity = IBeacon(
            uuid: UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!, major: 1, minor: 2, measuredPower: -59)
        let station = template.stationImage(for: identity).file.memory
        let end = try #require(station.endAddress)
        let field = try #require(template.manifest.beaconField).range
        var memory: MemoryImage
        let expected: Bool
        switch variant {
        case .asGenerated: (memory, expected) = (station, true)
        case .flatBinary:
            (memory, expected) = (try MemoryImage(bytes: station.bytes(in: 0..<end, fill: 0xFF), at: 0), true)
        case .fieldsErased:
            memory = station
            try memory.write([UInt8](repeating: 0xFF, count: field.count), at: field.lowerBound)
            expected = false
        case .extraByte:
            memory = station
            try memory.write([0x12], at: end + 0x100)
            expected = false
        case .empty: (memory, expected) = (MemoryImage(), false)
        case .fieldsOnly:
            (memory, expected) = (
                try MemoryImage(bytes: station.bytes(in: field, fill: 0xFF), at: field.lowerBound), false
            )
        case .templateItself: (memory, expected) = (template.image.memory, true)
        }
        #expect(template.isStation(memory) == expected)
    }
}

// Makes the station image of one identity from ccbeacon's bundled template, checks the payload
// it carries, and flashes it into an emulated CC2541 through an emulated CC Debugger, printing
// the flash programmer's events. Exits 1 if anything disagrees.
import BeaconPayload
import CCDebugger
import CCDebuggerEmulator
import FirmwareTemplate
import Foundation
import TargetData

/// Stops with a message.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("station-image: \(message)\n".utf8))
    exit(1)
}

// The checkout this package sits in (Examples/StationImage): its boards and templates.
let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let boards = checkout.appendingPathComponent("boards")

// 1. The chips and boards, and the template.
let names = (try? FileManager.default.contentsOfDirectory(atPath: boards.path)) ?? []
let files = names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name in
    (try? Data(contentsOf: boards.appendingPathComponent(name))).map { (name: name, bytes: [UInt8]($0)) }
}
let catalog: BoardCatalog
do { catalog = try BoardCatalog.load(files: files, directory: boards.path) } catch { fail("\(error)") }
// A template is its manifest and its image, given as bytes (here read from the checkout's
// folder; an app may bundle them as resources).
let folder = checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon")
let template: StationTemplate
do {
    let manifestURL = folder.appendingPathComponent("template.json")
    let manifest = try TemplateManifest.read([UInt8](try Data(contentsOf: manifestURL)), file: manifestURL.path)
    let imageURL = folder.appendingPathComponent(manifest.image)
    template = try StationTemplate(
        manifest: manifest, imageBytes: [UInt8](try Data(contentsOf: imageURL)), imagePath: imageURL.path,
        directory: folder.path, catalog: catalog)
} catch { fail("\(error)") }

// 2. The station image: only the records that hold the identity are rewritten.
guard let uuid = UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60") else { fail("bad UUID") }
let identity = IBeacon(uuid: uuid, major: 1, minor: 2, measuredPower: -59)
let station = template.stationImage(for: identity)
print("template \(template.manifest.name): payload at 0x\(String(station.payloadAddress, radix: 16, uppercase: true))")
print("rewrote lines \(station.rewrittenLines.map(String.init).joined(separator: ", "))")

// 3. The payload it carries, checked as `ccbeacon verify` does.
let report = template.verify(station.file.memory, expected: identity, checkPower: true)
guard report.passed else { fail("the image does not carry the identity: \(report.problems)") }
print("payload checked: iBeacon \(identity)")

// 4. Flashed into an emulated chip, the identity read back and the whole image CRC-verified.
let debugger = EmulatedDebugger(chip: EmulatedChip())
let session = CC254xSession(transport: debugger, chips: catalog.chips)
do {
    let state = try session.open()
    let chip = try session.connect(targetID: state.targetID)
    let result = try FlashProgrammer(session: session).flash(
        station.file.memory, targetID: state.targetID, identity: chip,
        options: FlashOptions(verify: .crc, readBack: template.identityRanges)
    ) { event in
        switch event {
        case .started(let chip, let blocks, _): print("flash: \(chip), \(blocks) blocks")
        case .erased: print("flash: erased")
        case .programming(let progress) where progress.done == progress.total:
            print("flash: programmed \(progress.total) bytes")
        case .identityReadBack(let ranges): print("flash: identity read back from \(ranges.count) range(s)")
        case .verified(let mode): print("flash: verified (\(mode.rawValue))")
        case .running: print("flash: running")
        default: break
        }
    }
    print("done: \(result.chip.name) carries iBeacon \(identity)")
} catch {
    fail("\(error)")
}

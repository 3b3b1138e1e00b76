import BeaconPayload
import Checksums
import FirmwareTemplate
import Foundation
import IntelHex
import Storage
import StructuredText
import Synchronization
import TestSupport
import Testing

@testable import Provisioning
@testable import StationLedger
@testable import Stations

struct BatchTests {
    static let catalog = try! BundledData.boards()

    static func template() throws -> StationTemplate {
        let identity = try IBeacon(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: "1", minor: "2")
        var memory = try MemoryImage(bytes: [UInt8](repeating: 0x22, count: 0x100), at: 0)
        try memory.write(identity.advertisingData(), at: 0x100)
        try memory.write([UInt8](repeating: 0x33, count: 0x40), at: 0x11E)
        let text = HexWriter(lineEnding: .crlf).text(for: memory, startAddress: .linear(0))
        let chip = catalog.chip(named: "CC2541F256")!
        let (beacon, _) = try TemplateImport.chooseBlock(in: memory, chip: chip, address: nil)
        let manifest = TemplateImport.manifest(
            name: "small", description: "d", chip: chip, imageFileName: "image.hex", imageBytes: text, beacon: beacon,
            memory: memory)
        return try StationTemplate(
            manifest: manifest, imageBytes: text, imagePath: "image.hex", directory: ".", catalog: catalog)
    }

    static func stations(_ count: Int, major: UInt16 = 1) -> [Station] {
        (0..<count).map { index in
            Station(
                name: "station \(index)",
                identity: IBeacon(
                    uuid: UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!, major: major,
                    minor: UInt16(index)),
                line: index + 2)
        }
    }

    /// A batch of `stations` into `directory`, its progress unread.
    static func batch(
        _ stations: [Station], template: StationTemplate, into directory: String, writeBinary: Bool = false,
        jobs: Int = 1
    ) throws -> BatchSummary {
        try BatchGenerator.run(
            stations: stations, template: template, directory: directory, writeBinary: writeBinary, jobs: jobs
        ) { _, _ in }
    }

    @Test(arguments: [1, 3])
    func writesEveryStationAndTheRecord(jobs: Int) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("batch-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let template = try Self.template()
        let calls = Atomic(0)
        let summary = try BatchGenerator.run(
            stations: Self.stations(20), template: template, directory: directory, writeBinary: true, jobs: jobs
        ) { done, total in
            #expect(total == 20 && done <= 20)
            calls.add(1)
        }
        #expect(calls.value == 20)
        #expect(summary.count(.written) == 20)
        #expect(summary.strayFiles.isEmpty)
        for entry in summary.entries {
            let text = try Files.read(directory + "/" + entry.hexFile)
            #expect(SHA256.hexDigest(text) == entry.hexSHA256)
            let memory = try IntelHexFile(text: text).memory
            #expect(template.verify(memory, expected: entry.station.identity, checkPower: true).passed)
            let bin = try Files.read(directory + "/" + entry.binFile!)
            #expect(bin == memory.bytes(in: 0..<memory.endAddress!))
        }
        let record = try JSONParser.parse(try Files.read(directory + "/stations.json"), file: "stations.json")
        var root = try JSONObjectReader(record, file: "stations.json")
        var templateInfo = try root.object("template")
        #expect(try templateInfo.string("name") == "small")
        #expect(try templateInfo.string("payloadAddress") == "0x100")
        let list = try root.array("stations")
        #expect(list.count == 20)
        var first = try JSONObjectReader(list[0], file: "stations.json")
        #expect(try first.string("name") == "station 0")
        #expect(try first.string("file") == "station_0.hex")
        #expect(try first.integer("minor", in: 0...65535) == 0)
    }

    @Test func rerunSkipsIdenticalFilesReplacesChangedOnesAndLeavesStrangersAlone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("batch-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let template = try Self.template()
        _ = try BatchGenerator.run(
            stations: Self.stations(5), template: template, directory: directory, writeBinary: false, jobs: 2
        ) { _, _ in }
        try Files.writeAtomically(Array("not ours".utf8), to: directory + "/notes.txt")
        try Files.writeAtomically(Array("garbage".utf8), to: directory + "/station_3.hex")
        let again = try BatchGenerator.run(
            stations: Self.stations(5), template: template, directory: directory, writeBinary: false, jobs: 2
        ) { _, _ in }
        #expect(again.count(.unchanged) == 4)
        #expect(again.count(.replaced) == 1)
        #expect(again.entries[3].status == .replaced)
        #expect(again.strayFiles == ["notes.txt"])
        #expect(try Files.read(directory + "/notes.txt") == Array("not ours".utf8))
    }

    /// A file in the folder that no batch recorded is the user's: a station file of other content,
    /// or a `stations.json` that is no batch's record, refuses the run before anything changes. A
    /// file that already holds what the batch would write is simply taken.
    @Test(arguments: [
        (["station_1.hex": "precious"], ["station_1.hex"]),
        (["stations.json": #"{"mine": true}"#], ["stations.json"]),
        (["stations.json": "not even JSON"], ["stations.json"]),
        (
            ["stations.json": #"{"mine": true}"#, "station_4.hex": "x", "notes.txt": "n"],
            ["stations.json", "station_4.hex"]
        ),
        // Records in look only: they claim nothing (a batch's has a format, a template, and a file
        // and its sha256 for every station).
        (
            ["stations.json": #"{"stations": [{"note": "lobby", "file": "station_1.hex"}]}"#, "station_1.hex": "mine"],
            ["stations.json", "station_1.hex"]
        ),
        (["stations.json": #"{"stations": [1, 2, 3]}"#], ["stations.json"]),
        (["stations.json": #"{"stations": []}"#], ["stations.json"]),
        (
            [
                "stations.json":
                    #"{"format": 1, "template": {"name": "t"}, "stations": [{"file": "../x.hex", "sha256": "0"}]}"#
            ], ["stations.json"]
        ),
    ])
    func filesNoBatchRecordedAreNeverReplaced(present: [String: String], refused: [String]) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("batch-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Files.createDirectory(directory)
        for (name, text) in present { try Files.writeAtomically(Array(text.utf8), to: directory + "/" + name) }
        #expect {
            _ = try Self.batch(Self.stations(5), template: try Self.template(), into: directory, jobs: 2)
        } throws: { error in
            guard let error = error as? BatchError, case .unrecordedFiles(let folder, let names) = error.problem else {
                return false
            }
            return folder == directory && names == refused && error.completed == 0
        }
        #expect(try Files.list(directory).filter { !$0.hasPrefix(".") }.sorted() == present.keys.sorted())
        for (name, text) in present { #expect(try Files.read(directory + "/" + name) == Array(text.utf8)) }
        #expect(!Files.exists(directory + "/" + BatchGenerator.incompleteMarkerName))
    }

    /// Files a batch wrote stay the batch's when a later list or run leaves them out (its record
    /// keeps them as `otherFiles` with their sha256): a run that writes them again replaces them
    /// while they hold what was written, and refuses one changed by hand. Five stations with .bin
    /// files, two without, five changed with them.
    @Test func filesABatchWroteStayItsOwnWhenALaterRunLeavesThemOut() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("batch-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let template = try Self.template()
        _ = try Self.batch(Self.stations(5), template: template, into: directory, writeBinary: true)
        let fewer = try Self.batch(Self.stations(2), template: template, into: directory)
        #expect(fewer.strayFiles.count == 8, "three .hex and five .bin left alone: \(fewer.strayFiles)")
        let record = try #require(BatchRecord.read(in: directory))
        #expect(Set(record.written.keys).isSuperset(of: fewer.strayFiles))
        #expect(record.files.isDisjoint(with: fewer.strayFiles), "other writers are not kept off them")
        // One of them changed by hand is no longer the batch's.
        try Files.writeAtomically(Array("mine".utf8), to: directory + "/station_4.bin")
        #expect {
            _ = try Self.batch(Self.stations(5, major: 3), template: template, into: directory, writeBinary: true)
        } throws: { error in
            guard let error = error as? BatchError, case .unrecordedFiles(_, let names) = error.problem else {
                return false
            }
            return names == ["station_4.bin"]
        }
        try Files.removeDurably(directory + "/station_4.bin")
        let changed = try Self.batch(Self.stations(5, major: 2), template: template, into: directory, writeBinary: true)
        #expect(changed.entries.map(\.status) == [BatchFileStatus](repeating: .replaced, count: 5))
        #expect(changed.strayFiles.isEmpty)
    }

    /// The same station file, written by a batch into another folder and copied in: it holds what
    /// the batch would write, so it is taken (unchanged) and recorded.
    @Test func anUnrecordedFileOfTheSameContentIsTaken() throws {
        let first = FileManager.default.temporaryDirectory.appendingPathComponent("batch-\(UUID().uuidString)").path
        let second = first + "-copy"
        defer { for folder in [first, second] { try? FileManager.default.removeItem(atPath: folder) } }
        let template = try Self.template()
        _ = try Self.batch(Self.stations(3), template: template, into: first)
        try Files.createDirectory(second)
        try Files.writeAtomically(try Files.read(first + "/station_1.hex"), to: second + "/station_1.hex")
        let summary = try Self.batch(Self.stations(3), template: template, into: second)
        #expect(summary.entries.map(\.status) == [.written, .unchanged, .written])
        #expect(BatchRecord.read(in: second)?.files.contains("station_1.hex") == true)
    }

    @Test func aFailureStopsAndSaysHowFarItGot() throws {
        let template = try Self.template()
        #expect {
            _ = try BatchGenerator.run(
                stations: Self.stations(3), template: template, directory: "/proc/no-such-place", writeBinary: false,
                jobs: 1
            ) { _, _ in }
        } throws: { error in
            (error as? BatchError)?.description.contains("stations.json was not updated") == true
        }
    }
}

extension Atomic where Value == Int {
    func add(_ amount: Int) { _ = add(amount, ordering: .relaxed) }
    var value: Int { load(ordering: .relaxed) }
}

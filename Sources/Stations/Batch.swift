import BeaconPayload
import Checksums
import Dispatch
public import FirmwareTemplate
import HexText
import IntelHex
public import StationLedger
public import Storage
public import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What happened to one station's file.
public enum BatchFileStatus: String, Sendable {
    /// A new file.
    case written
    /// An existing file with other content was replaced.
    case replaced
    /// The existing file already had exactly this content and was left alone.
    case unchanged
}

/// One station's output.
public struct BatchEntry: Sendable {
    /// The station.
    public var station: Station
    /// The HEX file name inside the output folder.
    public var hexFile: String
    /// SHA-256 of the HEX file.
    public var hexSHA256: String
    /// The .bin file name, when asked for.
    public var binFile: String?
    /// SHA-256 of the .bin file.
    public var binSHA256: String?
    /// What happened to the HEX (and .bin) file.
    public var status: BatchFileStatus
    /// The advertising settings the image carries (for templates that expose them).
    public var settings: FoundSettings = FoundSettings()
    /// The bytes of the image's iBeacon field, as the station sends them: the whole advertising
    /// data (flags included) or, for a template whose field is the manufacturer data alone, that.
    public var beaconBytes: [UInt8] = []
}

/// The outcome of a batch.
public struct BatchSummary: Sendable {
    /// One entry per station, in list order.
    public var entries: [BatchEntry]
    /// Files in the folder that belong to no station of this list (left untouched).
    public var strayFiles: [String]
    /// The template named by the `stations.json` the batch replaced, if it differed.
    public var previousTemplate: String?
    /// True when an earlier batch into this folder was interrupted before it wrote its record.
    public var previousRunInterrupted = false
    /// Temporary files a killed writer left in the folder, removed by this run.
    public var removedTemporaryFiles: [String] = []

    /// How many entries have `status`.
    public func count(_ status: BatchFileStatus) -> Int { entries.filter { $0.status == status }.count }
}

/// A batch that stopped: which station, what failed.
public struct BatchError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Problem: Sendable {
        /// A file could not be read or written.
        case file(FileError)
        /// Another batch holds the output folder (and the caller asked not to wait).
        case folderBusy(FolderLock.Failure)
    }

    /// What went wrong.
    public var problem: Problem
    /// How many stations were done before it.
    public var completed: Int

    /// Creates an error.
    public init(_ problem: Problem, completed: Int) {
        self.problem = problem
        self.completed = completed
    }

    /// Plain-words reason.
    public var description: String {
        switch problem {
        case .file(let error):
            return
                "\(error) (after \(completed) station\(completed == 1 ? "" : "s"); stations.json was not updated)"
        case .folderBusy(let failure): return failure.description
        }
    }
}

/// Generates one image per station of a validated list.
public enum BatchGenerator {
    /// The name of the record of a batch inside its output folder.
    public static let manifestName = "stations.json"
    /// While a batch changes files, the previous record waits under this name (or an empty file
    /// stands here when there was none): its presence without `stations.json` means a batch was
    /// interrupted and the files no longer match any record.
    public static let incompleteMarkerName = ".stations.json.incomplete"

    /// Writes `DIR/<station>.hex` (and `.bin`) for every station, then `DIR/stations.json`.
    ///
    /// One batch at a time per folder: the folder is locked (`FolderLock`); with `wait` a second
    /// batch calls `waiting` and waits, without it fails at once. Every file is written
    /// atomically and durably (temporary file, `fsync`, rename, folder `fsync`); a file that
    /// already holds exactly the new content is not rewritten, so re-running a batch over its
    /// folder is safe and cheap. Files of other stations are never touched (and are reported).
    ///
    /// The folder never holds a `stations.json` that disagrees with the files it lists: before
    /// the first file changes the old record is set aside (`incompleteMarkerName`), and the new
    /// one is written only after every file is durably in place. A run that finds the marker
    /// without a record says the last run was interrupted; temporary files a killed run left are
    /// removed and listed. `progress(done, total)` is called from worker threads.
    /// `settings` (interval, TX power) apply to every station; each gets its own advertiser address
    /// (the list's, or one derived from its identity) where the template has an address field —
    /// a list with addresses must be checked against the template first (`AddressPlan`).
    public static func run(
        stations: [Station], template: StationTemplate, settings: CheckedSettings? = nil, directory: String,
        writeBinary: Bool, jobs: Int, wait: Bool = true, waiting: (Int32?) -> Void = { _ in },
        progress: @escaping @Sendable (Int, Int) -> Void
    ) throws(BatchError) -> BatchSummary {
        let record = Files.join(directory, manifestName)
        let marker = Files.join(directory, incompleteMarkerName)
        let lock: FolderLock
        do {
            try Files.createDirectory(directory)
            lock = try FolderLock.acquire(directory, wait: wait, waiting: waiting)
        } catch let error as FileError {
            throw BatchError(.file(error), completed: 0)
        } catch let error as FolderLock.Failure {
            if case .file(let file) = error { throw BatchError(.file(file), completed: 0) }
            throw BatchError(.folderBusy(error), completed: 0)
        } catch {
            throw BatchError(.file(FileError(.write, path: directory, reason: "\(error)")), completed: 0)
        }
        defer { lock.release() }
        var summary = BatchSummary(entries: [], strayFiles: [])
        summary.removedTemporaryFiles = Files.removeAbandonedTemporaryFiles(in: directory)
        let markerFound = Files.isFile(marker)
        summary.previousRunInterrupted = markerFound && !Files.isFile(record)
        let previousTemplate = BatchRecord.read(in: directory)?.templateName
        do throws(FileError) {
            // Set the old record aside before the first file changes.
            if Files.isFile(record) {
                try Files.renameDurably(record, to: marker)
            } else if !markerFound {
                try Files.writeAtomically([], to: marker)
            }
        } catch {
            throw BatchError(.file(error), completed: 0)
        }
        CrashPoint.batchStep.pass()
        let results = Mutex<[BatchEntry?]>([BatchEntry?](repeating: nil, count: stations.count))
        let failure = Mutex<FileError?>(nil)
        let next = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let workers = max(1, min(jobs, stations.count))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while failure.withLock({ $0 == nil }) {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < stations.count else { return }
                do throws(FileError) {
                    let entry = try generate(
                        stations[index], template: template, settings: settings, directory: directory,
                        writeBinary: writeBinary)
                    results.withLock { $0[index] = entry }
                    progress(done.add(1, ordering: .relaxed).newValue, stations.count)
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                }
            }
        }
        let entries = results.withLock { $0.compactMap { $0 } }
        if let error = failure.withLock({ $0 }) { throw BatchError(.file(error), completed: entries.count) }
        do {
            let text = manifest(entries: entries, template: template).rendered() + "\n"
            try Files.writeAtomically(Array(text.utf8), to: record)
            CrashPoint.batchStep.pass()
            try Files.removeDurably(marker)
            CrashPoint.batchStep.pass()
        } catch {
            throw BatchError(.file(error), completed: entries.count)
        }
        let ours = Set(entries.flatMap { [$0.hexFile] + ($0.binFile.map { [$0] } ?? []) } + [manifestName])
        summary.entries = entries
        summary.strayFiles = ((try? Files.list(directory)) ?? []).filter { !ours.contains($0) && !$0.hasPrefix(".") }
        summary.previousTemplate = previousTemplate == template.manifest.name ? nil : previousTemplate
        return summary
    }

    static func generate(
        _ station: Station, template: StationTemplate, settings: CheckedSettings?, directory: String,
        writeBinary: Bool
    ) throws(FileError) -> BatchEntry {
        let image = template.stationImage(
            for: station.identity, settings: (settings ?? template.defaultSettings).with(address: station.address))
        let hexName = station.fileStem + ".hex"
        let hexStatus = try writeIfChanged(image.file.text, to: Files.join(directory, hexName))
        var binName: String?
        var binDigest: String?
        var status = hexStatus
        if writeBinary, let end = image.file.memory.endAddress {
            let bytes = image.file.memory.bytes(in: 0..<end, fill: 0xFF)
            binName = station.fileStem + ".bin"
            binDigest = SHA256.hexDigest(bytes)
            let binStatus = try writeIfChanged(bytes, to: Files.join(directory, station.fileStem + ".bin"))
            if binStatus != .unchanged, status == .unchanged { status = binStatus }
        }
        let field = template.beaconField
        return BatchEntry(
            station: station, hexFile: hexName, hexSHA256: SHA256.hexDigest(image.file.text), binFile: binName,
            binSHA256: binDigest, status: status, settings: image.settings,
            beaconBytes: image.file.memory.bytes(in: field.address..<(field.address + field.kind.length)))
    }

    static func writeIfChanged(_ bytes: [UInt8], to path: String) throws(FileError) -> BatchFileStatus {
        let existing = try? Files.read(path)
        if existing == bytes { return .unchanged }
        try Files.writeAtomically(bytes, to: path)
        CrashPoint.batchStep.pass()
        return existing == nil ? .written : .replaced
    }

    /// `stations.json`: the template, and for every station its identity, files and their SHA-256.
    public static func manifest(entries: [BatchEntry], template: StationTemplate) -> JSONValue {
        .object([
            ("format", .integer(1)),
            (
                "template",
                .object([
                    ("name", .string(template.manifest.name)), ("imageSha256", .string(template.manifest.imageSHA256)),
                    (
                        "payloadAddress",
                        .string(HexText.address(template.beaconField.address))
                    ),
                ])
            ),
            (
                "stations",
                .array(
                    entries.map { entry in
                        var members: [(String, JSONValue)] = [
                            ("name", .string(entry.station.name)),
                            ("uuid", .string(entry.station.identity.uuid.uuidString)),
                            ("major", .integer(Int(entry.station.identity.major))),
                            ("minor", .integer(Int(entry.station.identity.minor))),
                            ("power", .integer(Int(entry.station.identity.measuredPower))),
                            ("powerSource", entry.station.powerOrigin.map { .string($0.label) } ?? .null),
                            ("file", .string(entry.hexFile)), ("sha256", .string(entry.hexSHA256)),
                        ]
                        if let bin = entry.binFile, let digest = entry.binSHA256 {
                            members += [("bin", .string(bin)), ("binSha256", .string(digest))]
                        }
                        if let address = entry.settings.address {
                            members.append(("address", .string(RandomStaticAddress.format(address))))
                        }
                        if let ticks = entry.settings.intervalTicks {
                            members.append(("intervalTicks", .integer(Int(ticks.ticks))))
                        }
                        if let register = entry.settings.txPowerRegister,
                            let dBm = template.chip.txPower(register: register)
                        {
                            members.append(("txPower", .integer(dBm)))
                        }
                        if !entry.beaconBytes.isEmpty {
                            // What a scan must hear: the bytes as burned, not assumed flags.
                            let key =
                                template.beaconField.kind == .iBeaconManufacturerData
                                ? "manufacturerData" : "advertisingData"
                            members.append((key, .string(HexText.bytes(entry.beaconBytes))))
                        }
                        if let note = entry.station.note { members.append(("note", .string(note))) }
                        if !entry.station.attributes.isEmpty {
                            members.append(("attributes", entry.station.attributesObject))
                        }
                        return .object(members)
                    })
            ),
        ])
    }
}

/// What other writers need to know of a batch folder's record: the files it lists, which no other
/// command may replace (the record would then disagree with them), and its template.
public struct BatchRecord: Sendable, Equatable {
    /// The record read: `stations.json`, or the record an interrupted batch set aside.
    public var path: String
    /// The names of the files it lists (each station's `file` and `bin`), with the record's own
    /// names, inside its folder.
    public var files: Set<String>
    /// The template it names, if it names one.
    public var templateName: String?

    /// The record of `directory`: its `stations.json`, or while a batch is interrupted the record
    /// it set aside (`.stations.json.incomplete`, empty when there was none); `nil` when there is
    /// neither. A record that cannot be parsed still claims its own names, so nothing replaces it
    /// unseen.
    public static func read(in directory: String) -> BatchRecord? {
        let ownNames: Set<String> = [BatchGenerator.manifestName, BatchGenerator.incompleteMarkerName]
        let record = Files.join(directory, BatchGenerator.manifestName)
        let marker = Files.join(directory, BatchGenerator.incompleteMarkerName)
        guard let path = [record, marker].first(where: Files.isFile) else { return nil }
        var result = BatchRecord(path: path, files: ownNames)
        guard let bytes = try? Files.read(path), let root = try? JSONParser.parse(bytes, file: path),
            case .object(let members) = root.value
        else { return result }
        if case .object(let template)? = members.first(where: { $0.key == "template" })?.value.value,
            case .string(let name)? = template.first(where: { $0.key == "name" })?.value.value
        {
            result.templateName = name
        }
        if case .array(let stations)? = members.first(where: { $0.key == "stations" })?.value.value {
            for case .object(let station) in stations.map(\.value) {
                for member in station where member.key == "file" || member.key == "bin" {
                    if case .string(let name) = member.value.value { result.files.insert(name) }
                }
            }
        }
        return result
    }
}

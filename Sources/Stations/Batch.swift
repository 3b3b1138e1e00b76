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
        /// Files in the folder no batch recorded that this batch would replace (a station file of
        /// other content, a `stations.json` that is no batch's record): the user's own, so nothing
        /// was changed. The names are in list order, `stations.json` first.
        case unrecordedFiles(folder: String, names: [String])
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
        case .unrecordedFiles(let folder, let names):
            let shown = names.joinedExcerpt()
            return
                "\(folder)/ holds \(names.count) file\(names.count == 1 ? "" : "s") this batch would replace that no batch record vouches for (yours, or changed since a batch wrote \(names.count == 1 ? "it" : "them")): \(shown)"
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
    /// A file the batch would change is replaced only when a batch recorded it (the folder's
    /// `stations.json`, or the marker below): otherwise it is the user's, and the run is refused
    /// (`unrecordedFiles`) before anything changes — as is a `stations.json` that is no batch's
    /// record.
    ///
    /// The folder never holds a `stations.json` that disagrees with the files it lists: before
    /// the first file changes the old record gives way to a marker (`incompleteMarkerName`) that
    /// claims its files and this run's, and the new one is written only after every file is
    /// durably in place. A run that finds the marker
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
        summary.previousRunInterrupted = Files.isFile(marker) && !Files.isFile(record)
        let previous = BatchRecord.read(in: directory)
        let unrecorded = unrecordedChanges(
            stations, template: template, settings: settings, directory: directory, writeBinary: writeBinary,
            previous: previous)
        if !unrecorded.isEmpty {
            // Refused whole: the folder is left as it was found, without a lock file of ours.
            lock.releaseRemovingFile()
            throw BatchError(.unrecordedFiles(folder: directory, names: unrecorded), completed: 0)
        }
        do throws(FileError) {
            // Before the first file changes, the marker claims the old record's files and this
            // run's, and the old record goes: a run killed part-way leaves every file it may have
            // written claimed.
            let planned = stations.flatMap { fileNames(of: $0, writeBinary: writeBinary) }
            try Files.writeAtomically(markerText(previous: previous, planned: planned), to: marker)
            if Files.isFile(record) { try Files.removeDurably(record) }
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
        let written = Set(entries.flatMap { [$0.hexFile] + ($0.binFile.map { [$0] } ?? []) })
        // Files earlier batches wrote here that are of no station of this list stay the batch's
        // while they hold exactly what was written: a later run may write them again.
        let others = (previous?.written ?? [:]).filter { name, digest in
            !written.contains(name) && BatchRecord.holds(Files.join(directory, name), digest)
        }
        do {
            let text = manifest(entries: entries, template: template, otherFiles: others).rendered() + "\n"
            try Files.writeAtomically(Array(text.utf8), to: record)
            CrashPoint.batchStep.pass()
            try Files.removeDurably(marker)
            CrashPoint.batchStep.pass()
        } catch {
            throw BatchError(.file(error), completed: entries.count)
        }
        let ours = written.union([manifestName])
        summary.entries = entries
        summary.strayFiles = ((try? Files.list(directory)) ?? []).filter { !ours.contains($0) && !$0.hasPrefix(".") }
        summary.previousTemplate = previous?.templateName == template.manifest.name ? nil : previous?.templateName
        return summary
    }

    /// The names of `station`'s files: its HEX, and with `writeBinary` its .bin.
    static func fileNames(of station: Station, writeBinary: Bool) -> [String] {
        [station.fileStem + ".hex"] + (writeBinary ? [station.fileStem + ".bin"] : [])
    }

    /// `station`'s image and its files' contents, in the order of `fileNames` (an image with no
    /// data has no .bin).
    static func files(
        of station: Station, template: StationTemplate, settings: CheckedSettings?, writeBinary: Bool
    ) -> (image: StationImage, contents: [[UInt8]]) {
        let image = template.stationImage(
            for: station.identity, settings: (settings ?? template.defaultSettings).with(address: station.address))
        guard writeBinary, let end = image.file.memory.endAddress else { return (image, [image.file.text]) }
        return (image, [image.file.text, image.file.memory.bytes(in: 0..<end, fill: 0xFF)])
    }

    /// The files of the folder this batch would change that no batch recorded: `stations.json`
    /// when it is no batch's record, then each station file that is there, unclaimed by
    /// `previous`, with other content than the batch's.
    static func unrecordedChanges(
        _ stations: [Station], template: StationTemplate, settings: CheckedSettings?, directory: String,
        writeBinary: Bool, previous: BatchRecord?
    ) -> [String] {
        var names: [String] = []
        if Files.isFile(Files.join(directory, manifestName)), previous?.isBatchRecord != true {
            names.append(manifestName)
        }
        let claimed = previous?.files ?? []
        let written = previous?.written ?? [:]
        for station in stations {
            // The station's image is made only when one of its files is there unclaimed.
            var contents: [[UInt8]]?
            for (index, name) in fileNames(of: station, writeBinary: writeBinary).enumerated()
            where !claimed.contains(name) {
                let path = Files.join(directory, name)
                guard Files.exists(path) else { continue }
                let existing = try? Files.read(path)
                if let digest = written[name], let existing, SHA256.hexDigest(existing) == digest { continue }
                let made =
                    contents
                    ?? files(of: station, template: template, settings: settings, writeBinary: writeBinary).contents
                contents = made
                // An image with no data has no .bin: one that is there is not changed.
                if index < made.count, existing != made[index] { names.append(name) }
            }
        }
        return names
    }

    /// The marker's text while a batch changes files: a record without stations' details that
    /// claims the previous record's files and `planned`, under the previous record's template, and
    /// keeps what the previous record says batches wrote (`otherFiles`, with their SHA-256).
    static func markerText(previous: BatchRecord?, planned: [String]) -> [UInt8] {
        let owned: Set<String> = [manifestName, incompleteMarkerName]
        let names = Set(planned).union(previous?.files ?? []).subtracting(owned).sorted()
        var members: [(String, JSONValue)] = [("format", .integer(1))]
        if let name = previous?.templateName { members.append(("template", .object([("name", .string(name))]))) }
        members.append(("stations", .array(names.map { .object([("file", .string($0))]) })))
        if let written = previous?.written, !written.isEmpty {
            members.append(("otherFiles", otherFilesValue(written)))
        }
        return Array((JSONValue.object(members).rendered() + "\n").utf8)
    }

    /// `otherFiles` as a record keeps them: each file with the SHA-256 a batch wrote it with.
    static func otherFilesValue(_ files: [String: String]) -> JSONValue {
        .array(
            files.sorted { $0.key < $1.key }.map {
                .object([("file", .string($0.key)), ("sha256", .string($0.value))])
            }
        )
    }

    static func generate(
        _ station: Station, template: StationTemplate, settings: CheckedSettings?, directory: String,
        writeBinary: Bool
    ) throws(FileError) -> BatchEntry {
        let (image, contents) = files(of: station, template: template, settings: settings, writeBinary: writeBinary)
        let names = fileNames(of: station, writeBinary: writeBinary)
        var status = BatchFileStatus.unchanged
        for (name, bytes) in zip(names, contents) {
            let written = try writeIfChanged(bytes, to: Files.join(directory, name))
            if written != .unchanged, status == .unchanged { status = written }
        }
        let field = template.beaconField
        return BatchEntry(
            station: station, hexFile: names[0], hexSHA256: SHA256.hexDigest(contents[0]),
            binFile: contents.count > 1 ? names[1] : nil,
            binSHA256: contents.count > 1 ? SHA256.hexDigest(contents[1]) : nil,
            status: status, settings: image.settings,
            beaconBytes: image.file.memory.bytes(in: field.address..<(field.address + field.kind.length)))
    }

    static func writeIfChanged(_ bytes: [UInt8], to path: String) throws(FileError) -> BatchFileStatus {
        let existing = try? Files.read(path)
        if existing == bytes { return .unchanged }
        try Files.writeAtomically(bytes, to: path)
        CrashPoint.batchStep.pass()
        return existing == nil ? .written : .replaced
    }

    /// `stations.json`: the template, and for every station its identity, files and their SHA-256;
    /// `otherFiles`, when there are any, the files earlier batches wrote into the folder that are
    /// of no station of this list, by name with the SHA-256 they were written with (left alone,
    /// and the batch's to write again while they hold just that).
    public static func manifest(
        entries: [BatchEntry], template: StationTemplate, otherFiles: [String: String] = [:]
    ) -> JSONValue {
        .object(
            [
                ("format", .integer(1)),
                (
                    "template",
                    .object([
                        ("name", .string(template.manifest.name)),
                        ("imageSha256", .string(template.manifest.imageSHA256)),
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
            ] + (otherFiles.isEmpty ? [] : [("otherFiles", otherFilesValue(otherFiles))]))
    }
}

/// What other writers need to know of a batch folder's record: the files it lists, which no other
/// command may replace (the record would then disagree with them), and its template.
public struct BatchRecord: Sendable, Equatable {
    /// The record read: `stations.json`, or the marker of a batch that runs or was interrupted.
    public var path: String
    /// The names of the files it lists (each station's `file` and `bin`), with the record's own
    /// names, inside its folder.
    public var files: Set<String>
    /// The template it names, if it names one.
    public var templateName: String?
    /// The files it says a batch wrote, each with the SHA-256 it was written with: its stations'
    /// files and `otherFiles`. One that still holds just that is the batch's to replace, though
    /// `files` need not list it.
    public var written: [String: String] = [:]
    /// Whether the file is a batch's record: `format` 1, a `template` with a `name`, and `stations`
    /// each with a `file` and its `sha256` (the marker: `format` 1 and `stations` with a `file`
    /// each). A `stations.json` someone else wrote is not, claims nothing, and no batch replaces
    /// it.
    public var isBatchRecord = false

    /// The record of `directory`: its `stations.json`, or while a batch runs or after one was
    /// interrupted its marker (`.stations.json.incomplete`: the old record's files and the run's;
    /// an empty file from an earlier ccbeacon); `nil` when there is neither. A record that cannot
    /// be parsed still claims its own names, so nothing replaces it unseen. A batch claims the
    /// files its record lists (each station's `file` and `bin`, and `otherFiles`, those earlier
    /// batches wrote that are of no station of its list), and only plain names in the folder.
    public static func read(in directory: String) -> BatchRecord? {
        let ownNames: Set<String> = [BatchGenerator.manifestName, BatchGenerator.incompleteMarkerName]
        let record = Files.join(directory, BatchGenerator.manifestName)
        let marker = Files.join(directory, BatchGenerator.incompleteMarkerName)
        guard let path = [record, marker].first(where: Files.isFile) else { return nil }
        var result = BatchRecord(path: path, files: ownNames)
        guard let bytes = try? Files.read(path), let root = try? JSONParser.parse(bytes, file: path),
            case .object(let members) = root.value
        else { return result }
        func value(_ key: String, in object: [JSONNode.Member]) -> JSONNode.Value? {
            object.first(where: { $0.key == key })?.value.value
        }
        func plainName(_ value: JSONNode.Value?) -> String? {
            guard case .string(let name)? = value, !name.isEmpty, name != ".", name != "..",
                !name.contains("/"), !name.contains("\0")
            else { return nil }
            return name
        }
        let isRecord = path == record
        guard case .number("1")? = value("format", in: members),
            case .array(let stations)? = value("stations", in: members)
        else { return result }
        if case .object(let template)? = value("template", in: members),
            case .string(let name)? = value("name", in: template)
        {
            result.templateName = name
        } else if isRecord {
            return result
        }
        var claims: Set<String> = []
        var written: [String: String] = [:]
        for node in stations {
            guard case .object(let station) = node.value, let file = plainName(value("file", in: station)) else {
                return result
            }
            if isRecord {
                guard case .string(let digest)? = value("sha256", in: station) else { return result }
                written[file] = digest
            }
            claims.insert(file)
            if let bin = plainName(value("bin", in: station)) {
                claims.insert(bin)
                if case .string(let digest)? = value("binSha256", in: station) { written[bin] = digest }
            }
        }
        // Files batches wrote that no station of the record has: the batch's while they hold what
        // was written, which no other writer needs to keep (the record lists no digest of theirs
        // that a change would belie).
        if case .array(let others)? = value("otherFiles", in: members) {
            for case .object(let other) in others.map(\.value) {
                if let name = plainName(value("file", in: other)), written[name] == nil,
                    case .string(let digest)? = value("sha256", in: other)
                {
                    written[name] = digest
                }
            }
        }
        result.isBatchRecord = true
        result.files.formUnion(claims)
        result.written = written
        return result
    }

    /// Whether the regular file at `path` holds exactly the content whose SHA-256 is `digest`.
    static func holds(_ path: String, _ digest: String) -> Bool {
        Files.isFile(path) && (try? Files.read(path)).map { SHA256.hexDigest($0) == digest } == true
    }
}

import BeaconPayload
public import StationLedger
import StructuredText

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A site's places made into stations: each place gets the site's UUID and major and the next
/// minor no station already has, so that a backend maps major/minor back to the place.
public enum SitePlan {
    /// Plans `places` (CSV: a `name` column and any others — floor, room, x, y, notes; `note`,
    /// `power` and `address` as a station list takes them) under `uuid` and `major`, minors from
    /// `firstMinor` on. `known`: every station already planned or registered (a ledger's, other
    /// lists'): their identities are skipped, and a place that is already one of them under this
    /// UUID and major keeps its minor, so a site planned again (a place added) keeps the minors it
    /// gave. The stations are checked as a station list is; every problem is reported at its place
    /// in `file`, and none is planned while any remains — a site too large for the minors left
    /// among them.
    public static func plan(
        places bytes: [UInt8], file: String, uuid: UUID, major: UInt16, firstMinor: UInt16, known: [Station]
    ) throws(StationListProblems) -> [Station] {
        var problems = ListProblems(file: file)
        let table: [[CSVField]]
        do { table = try CSVTable.parse(bytes, file: file) } catch { throw StationListProblems(problems: [error]) }
        guard let header = table.first else {
            problems.add("holds no places", line: 0, column: 0)
            throw problems.error
        }
        // The identity columns are the plan's to give.
        for field in header where ["uuid", "major", "minor"].contains(field.text.lowercased()) {
            problems.add(
                "a '\(field.text.lowercased())' column: the plan gives each place its UUID, major and minor; remove it",
                line: field.line, column: field.column)
        }
        // Without a name no place can be planned; an identity column alone leaves the rows to
        // read, and their problems are reported with it.
        if !header.contains(where: { $0.text.lowercased() == "name" }) {
            problems.add(
                "the header row lacks name; a places file names each place (and may have any other columns)",
                line: header[0].line, column: 1)
            throw problems.error
        }

        // The place rows read as a list's rows, then given their identities.
        var rows = StationListReader.csvRows(bytes, problems: &problems, requiring: ["name"])
        if rows.isEmpty, problems.isEmpty {
            problems.add("holds no places", line: 0, column: 0)
            throw problems.error
        }
        let here = known.filter { $0.identity.uuid == uuid && $0.identity.major == major }
        let kept = Dictionary(here.map { ($0.name, $0.identity.minor) }, uniquingKeysWith: { first, _ in first })
        var taken = Set(here.map(\.identity.minor))
        // A place named as a known station but for case is refused: the list would then clash with
        // it (names are told apart without case in file names).
        let byLowercase = Dictionary(known.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        let elsewhere = Dictionary(
            known.filter { !($0.identity.uuid == uuid && $0.identity.major == major) }.map { ($0.name, $0) },
            uniquingKeysWith: { first, _ in first })
        var next = Int(firstMinor)
        var short = 0
        for index in rows.indices {
            let name = rows[index].cells["name"]
            let at = (line: name?.line ?? rows[index].line, column: name?.column ?? 1)
            let minor: Int
            if let text = name?.text, let earlier = kept[text] {
                minor = Int(earlier)
            } else if let text = name?.text, let other = byLowercase[text.lowercased()], other.name != text {
                problems.add(
                    "'\(text)' differs only in case from the station '\(other.name)'; name the place as the station is named",
                    line: at.line, column: at.column, keyPath: "name")
                rows[index].reported = true
                continue
            } else {
                if let text = name?.text, let other = elsewhere[text] {
                    problems.add(
                        "'\(text)' is already a station of UUID \(other.identity.uuid.uuidString) major \(other.identity.major); rename the place, or plan it under that UUID and major",
                        line: at.line, column: at.column, keyPath: "name")
                }
                while next <= 0xFFFF, taken.contains(UInt16(next)) { next += 1 }
                guard next <= 0xFFFF else {
                    short += 1
                    rows[index].reported = true  // the shortage is said once, for the site
                    continue
                }
                minor = next
                taken.insert(UInt16(next))
                next += 1
            }
            for (column, value) in [("uuid", uuid.uuidString), ("major", String(major)), ("minor", String(minor))] {
                rows[index].cells[column] = (value, at.line, at.column, column)
            }
        }
        if short > 0 {
            problems.add(
                "\(rows.count) places need minors; from \(firstMinor) on, UUID \(uuid.uuidString) major \(major) has \(rows.count - short) free that no other station holds: plan part of the site under another major",
                line: 0, column: 0)
        }
        let stations = StationListReader.stations(from: rows, problems: &problems)
        try problems.check()
        return stations
    }

    /// Where stations known from several sources (lists, a ledger) cannot all be true of one site:
    /// one identity under two names, or one name with two identities — a plan would keep a minor
    /// another station holds, or one of two — or two names of two sources that differ only in case
    /// (one list refuses them: they share file names). The same station in two sources is no
    /// conflict.
    /// Each conflict in words, naming both sources, in the order found.
    public static func conflicts(among sources: [(source: String, stations: [Station])]) -> [String] {
        struct Identity: Hashable {
            var uuid: UUID
            var major: UInt16
            var minor: UInt16
        }
        func words(_ identity: Identity) -> String {
            "UUID \(identity.uuid.uuidString) major \(identity.major) minor \(identity.minor)"
        }
        var byIdentity: [Identity: (name: String, source: String)] = [:]
        // By the name without case, as file names tell names apart.
        var byName: [String: (name: String, identity: Identity, source: String)] = [:]
        var found: [String] = []
        for (source, stations) in sources {
            for station in stations {
                let identity = Identity(
                    uuid: station.identity.uuid, major: station.identity.major, minor: station.identity.minor)
                let key = station.name.lowercased()
                if let other = byIdentity[identity], other.name != station.name {
                    found.append(
                        "'\(station.name)' in \(source) has the identity of '\(other.name)' in \(other.source) (\(words(identity)))"
                    )
                } else if let other = byName[key], other.name != station.name, other.source != source {
                    found.append(
                        "'\(station.name)' in \(source) differs only in case from '\(other.name)' in \(other.source) (names are told apart without case in file names)"
                    )
                } else if let other = byName[key], other.name == station.name, other.identity != identity {
                    found.append(
                        "'\(station.name)' is \(words(other.identity)) in \(other.source), but \(words(identity)) in \(source)"
                    )
                }
                byIdentity[identity] = byIdentity[identity] ?? (station.name, source)
                byName[key] = byName[key] ?? (station.name, identity, source)
            }
        }
        return found
    }

    /// The stations as a station list in CSV — `name,uuid,major,minor`, then `power`, `address`
    /// and `note` where any station has one, then the attributes in the order the stations name
    /// them — that `batch`, `provision` and `labels` read back as they are. Cells are quoted where
    /// CSV needs it and otherwise written as they are (the list is read back, not reinterpreted).
    public static func csv(_ stations: [Station]) -> String {
        let attributeNames = StationAttribute.columns(of: stations)
        let hasPower = stations.contains { $0.powerOrigin == .list }
        let hasAddress = stations.contains { $0.address != nil }
        let hasNote = stations.contains { $0.note != nil }
        var header = ["name", "uuid", "major", "minor"]
        if hasPower { header.append("power") }
        if hasAddress { header.append("address") }
        if hasNote { header.append("note") }
        var text = (header + attributeNames).map(CSVCell.verbatim).joined(separator: ",") + "\n"
        for station in stations {
            var cells = [
                station.name, station.identity.uuid.uuidString, String(station.identity.major),
                String(station.identity.minor),
            ]
            if hasPower { cells.append(station.powerOrigin == .list ? String(station.identity.measuredPower) : "") }
            if hasAddress { cells.append(station.address?.description ?? "") }
            if hasNote { cells.append(station.note ?? "") }
            let values = station.attributeValues
            cells += attributeNames.map { values[$0] ?? "" }
            text += cells.map(CSVCell.verbatim).joined(separator: ",") + "\n"
        }
        return text
    }
}

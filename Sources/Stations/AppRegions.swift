public import BeaconPayload
public import StationLedger
public import StructuredText

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// One beacon region an iOS app monitors or ranges: what `CLBeaconIdentityConstraint` takes (a
/// UUID, optionally a major, and a minor only beside a major) and the identifier it is registered
/// under.
public struct BeaconRegion: Sendable, Equatable {
    /// The identifier the app registers the region under (Core Location replaces a region when
    /// another is registered under the same identifier).
    public var identifier: String
    /// The proximity UUID.
    public var uuid: UUID
    /// The major, or `nil` for every major.
    public var major: UInt16?
    /// The minor (only with a major), or `nil` for every minor.
    public var minor: UInt16?
    /// The region's line in its file (0 for a region made here), for messages.
    public var line: Int
    /// The region's place in its file's array (from 0), for messages: a file on one line has
    /// every region on line 1.
    public var index: Int

    /// A region.
    public init(
        identifier: String, uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil, line: Int = 0, index: Int = 0
    ) {
        self.identifier = identifier
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.line = line
        self.index = index
    }

    /// Whether a station broadcasting `identity` is in this region: the region's constraint is one
    /// of the three the identity meets (its UUID; its UUID and major; all three).
    public func covers(_ identity: IBeacon) -> Bool { Self.constraints(met: identity).contains(constraintKey) }

    /// What the region constrains, as a key: a region covers an identity exactly when its key is one
    /// of `constraints(met:)`, so a set of keys answers for many regions or stations at once.
    var constraintKey: ConstraintKey { ConstraintKey(uuid: uuid, major: major, minor: minor) }

    /// The three constraints `identity` meets.
    static func constraints(met identity: IBeacon) -> [ConstraintKey] {
        [
            ConstraintKey(uuid: identity.uuid, major: nil, minor: nil),
            ConstraintKey(uuid: identity.uuid, major: identity.major, minor: nil),
            ConstraintKey(uuid: identity.uuid, major: identity.major, minor: identity.minor),
        ]
    }

    /// A UUID, optionally a major, and a minor only beside a major.
    struct ConstraintKey: Hashable {
        var uuid: UUID
        var major: UInt16?
        var minor: UInt16?
    }

    /// `7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 2`, as much as the region constrains.
    public var constraint: String {
        uuid.uuidString + (major.map { " major \($0)" } ?? "") + (minor.map { " minor \($0)" } ?? "")
    }

    /// The region as one object of a regions file.
    public var json: JSONValue {
        .object(
            [("identifier", .string(identifier)), ("uuid", .string(uuid.uuidString))]
                + (major.map { [("major", JSONValue.integer(Int($0)))] } ?? [])
                + (minor.map { [("minor", JSONValue.integer(Int($0)))] } ?? []))
    }
}

/// An app's beacon regions against the stations it is meant to hear: the regions file, the check
/// and the smallest list that covers a registry.
public enum AppRegions {
    /// Core Location monitors at most 20 regions per app (beacon and circular regions together);
    /// registering more fails for the extra ones.
    public static let monitoringLimit = 20

    /// UUIDs that ship as vendors' factory defaults or in Apple's sample code: a region with one
    /// of them in an app for our stations is another vendor's setting left in.
    public static let wellKnownUUIDs: [(uuid: String, owner: String)] = [
        ("B9407F30-F5F8-466E-AFF9-25556B57FE6D", "Estimote's factory default"),
        ("F7826DA6-4FA2-4E98-8024-BC5B71E0893E", "Kontakt.io's factory default"),
        ("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "Apple's AirLocate sample code"),
    ]

    /// Reads a regions file: a JSON array of `{"identifier", "uuid", "major"?, "minor"?}` objects
    /// (unknown keys, a minor without a major and values out of range are errors, with line and
    /// column).
    public static func read(_ bytes: [UInt8], file: String) throws(DataFileError) -> [BeaconRegion] {
        let root = try JSONParser.parse(bytes, file: file)
        guard case .array(let elements) = root.value else {
            throw DataFileError(
                file: file, line: root.line, column: root.column, keyPath: "",
                message:
                    "expected an array of regions ({\"identifier\": …, \"uuid\": …, \"major\": …, \"minor\": …}), found \(root.kindDescription)"
            )
        }
        var regions: [BeaconRegion] = []
        for (index, element) in elements.enumerated() {
            var object = try JSONObjectReader(element, file: file, path: "[\(index)]")
            let identifier = try object.string("identifier")
            guard identifier.contains(where: { !$0.isWhitespace }) else {
                throw object.error("identifier", "is empty or blank; name the region")
            }
            let uuidText = try object.string("uuid")
            // What an app reads it with, `UUID(uuidString:)`, takes only the 36-character form.
            let parsed = try? IdentityParser.uuid(uuidText)
            guard Self.isUUIDString(uuidText), let uuid = parsed else {
                throw object.error(
                    "uuid",
                    "'\(uuidText.excerpt())' is not the 8-4-4-4-12 form an app reads (UUID(uuidString:) takes exactly 36 characters: hex digits in groups of 8, 4, 4, 4 and 12 with hyphens, no blanks)"
                        + (parsed.map { "; write \($0.uuidString)" } ?? ""))
            }
            let major = try object.optionalInteger("major", in: 0...0xFFFF).map { UInt16($0) }
            let minor = try object.optionalInteger("minor", in: 0...0xFFFF).map { UInt16($0) }
            if minor != nil, major == nil {
                throw object.error(
                    "minor", "needs a major beside it (a beacon identity constraint takes a minor only with one)")
            }
            try object.finish()
            regions.append(
                BeaconRegion(
                    identifier: identifier, uuid: uuid, major: major, minor: minor, line: element.line, index: index))
        }
        return regions
    }

    /// Whether `text` is a UUID as Foundation's `UUID(uuidString:)` reads it: 36 characters, hex
    /// digits (either case) in groups of 8, 4, 4, 4 and 12 joined by hyphens.
    static func isUUIDString(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        return bytes.indices.allSatisfy { index in
            [8, 13, 18, 23].contains(index)
                ? bytes[index] == UInt8(ascii: "-")
                : (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index])
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(bytes[index] | 0x20)
        }
    }

    /// The regions as a regions file (what `read` reads).
    public static func file(_ regions: [BeaconRegion]) -> String {
        JSONValue.array(regions.map(\.json)).rendered() + "\n"
    }

    /// The fewest regions that cover `stations`: one per UUID; a UUID whose stations share one
    /// major gets that major too (as many regions, and the app does not wake for others' stations
    /// that use the same UUID). Identifiers are `ccbeacon-`, the whole UUID and the major: two
    /// UUIDs alike in a block stay apart.
    public static func covering(_ stations: [Station]) -> [BeaconRegion] {
        var majors: [UUID: Set<UInt16>] = [:]
        var order: [UUID] = []
        for station in stations {
            if majors[station.identity.uuid] == nil { order.append(station.identity.uuid) }
            majors[station.identity.uuid, default: []].insert(station.identity.major)
        }
        return order.sorted { $0.uuidString < $1.uuidString }.map { uuid in
            let used = majors[uuid] ?? []
            let major = used.count == 1 ? used.first : nil
            return BeaconRegion(
                identifier: "ccbeacon-\(uuid.uuidString)" + (major.map { "-\($0)" } ?? ""), uuid: uuid, major: major)
        }
    }

    /// Checks `regions` against `stations` (see `RegionReport`). What the app monitors is the last
    /// region registered under each identifier (registering one replaces the region of that
    /// identifier), of the first `monitoringLimit` identifiers registered in the file's order
    /// (registering a region under one more fails): coverage is of those; every region of the file
    /// is matched.
    /// Each region and station is looked up in sets of constraint keys, not against every other:
    /// a file of thousands of regions takes as long to check as to read.
    public static func check(_ regions: [BeaconRegion], stations: [Station]) -> RegionReport {
        var report = RegionReport(regionCount: regions.count, stationCount: stations.count)
        let met = Set(stations.flatMap { BeaconRegion.constraints(met: $0.identity) })
        let context = ReasonContext(stations)
        // Core Location compares identifiers as they are written (a precomposed é is not e and a
        // combining accent): compared scalar by scalar, not as Swift's canonically equal strings.
        let keys = regions.map { Array($0.identifier.unicodeScalars) }
        // Where in `regions` the last region so far under each identifier is: in the end, the one
        // monitored.
        var kept: [[Unicode.Scalar]: Int] = [:]
        // The same, of the identifiers the app manages to register: the limit refuses one more.
        var registered: [[Unicode.Scalar]: Int] = [:]
        for (position, region) in regions.enumerated() {
            if let earlier = kept[keys[position]] { report.sharedIdentifiers.append((regions[earlier], region)) }
            kept[keys[position]] = position
            if registered[keys[position]] != nil || registered.count < AppRegions.monitoringLimit {
                registered[keys[position]] = position
            } else {
                report.pastLimit.append(region)
            }
            guard !met.contains(region.constraintKey) else { continue }
            report.unmatched.append((region, context.reason(region)))
        }
        report.monitoredCount = kept.count
        // Of identifiers past the limit nothing is registered: nothing replaces, nothing is replaced.
        report.sharedIdentifiers.removeAll { registered[Array($0.later.identifier.unicodeScalars)] == nil }
        report.replaced = regions.indices.compactMap { position in
            guard let last = registered[keys[position]], last != position else { return nil }
            return (regions[position], regions[last])
        }
        let monitored = Set(registered.values.map { regions[$0].constraintKey })
        report.uncovered = stations.filter { station in
            !BeaconRegion.constraints(met: station.identity).contains(where: monitored.contains)
        }
        return report
    }

    /// Why a region matches none of the stations: another vendor's UUID, a UUID a few digits from
    /// one the stations use, or the stations under its UUID with other majors or minors. The
    /// stations are grouped once for all the regions of a file.
    struct ReasonContext {
        /// Each UUID the stations use, with the majors used under it and the minors under each.
        var minorsByMajor: [UUID: [UInt16: Set<UInt16>]] = [:]
        /// The UUIDs the stations use, in order of their text.
        var used: [UUID]

        init(_ stations: [Station]) {
            for station in stations {
                let identity = station.identity
                minorsByMajor[identity.uuid, default: [:]][identity.major, default: []].insert(identity.minor)
            }
            used = minorsByMajor.keys.sorted { $0.uuidString < $1.uuidString }
        }

        /// Why `region`, which covers none of the stations, covers none.
        func reason(_ region: BeaconRegion) -> String {
            if let majors = minorsByMajor[region.uuid] {
                if let major = region.major, majors[major] == nil {
                    return
                        "no station under its UUID has major \(major) (the stations' majors: \(list(majors.keys.sorted().map(String.init))))"
                }
                let minors = region.major.flatMap { majors[$0] } ?? []
                return
                    "no station under its UUID and major has minor \(region.minor.map(String.init) ?? "") (the stations' minors: \(list(minors.sorted().map(String.init))))"
            }
            let known = wellKnownUUIDs.first { $0.uuid == region.uuid.uuidString }
            let distances = used.map { (uuid: $0, apart: digitsApart($0, region.uuid)) }
            guard let (closest, apart) = distances.min(by: { $0.apart < $1.apart }) else {
                return "there are no stations to match" + (known.map { "; its UUID is \($0.owner)" } ?? "")
            }
            if let known {
                return "its UUID is \(known.owner), which no station uses; the stations use \(closest.uuidString)"
                    + (used.count > 1 ? " and \(used.count - 1) other UUID\(used.count > 2 ? "s" : "")" : "")
            }
            if apart <= 4 {
                return
                    "no station uses its UUID; \(closest.uuidString) differs from it in \(apart) hex digit\(apart == 1 ? "" : "s") — a typo?"
            }
            return
                "no station uses its UUID; the closest the stations use is \(closest.uuidString) (\(apart) of 32 hex digits differ: another vendor's UUID?)"
        }
    }

    /// How many of the 32 hex digits of two UUIDs differ.
    public static func digitsApart(_ first: UUID, _ second: UUID) -> Int {
        withUnsafeBytes(of: first.uuid) { a in
            withUnsafeBytes(of: second.uuid) { b in
                zip(a, b).reduce(0) { count, pair in
                    count + (pair.0 >> 4 != pair.1 >> 4 ? 1 : 0) + (pair.0 & 0xF != pair.1 & 0xF ? 1 : 0)
                }
            }
        }
    }

    static func list(_ items: [String]) -> String {
        items.count <= 8 ? items.joined(separator: ", ") : items.prefix(8).joined(separator: ", ") + ", …"
    }
}

/// What `AppRegions.check` found: stations no region covers, regions that cover no station (each
/// with why), regions registered under one identifier, and whether there are more regions than
/// an app may monitor.
public struct RegionReport: Sendable {
    /// How many regions were checked.
    public var regionCount: Int
    /// How many the app monitors: one per identifier, the last registered (`regionCount` less the
    /// regions a later one replaces).
    public var monitoredCount = 0
    /// How many stations they were checked against.
    public var stationCount: Int
    /// Stations no monitored region covers: the app never wakes for them.
    public var uncovered: [Station] = []
    /// Regions that cover no station, with the reason in words.
    public var unmatched: [(region: BeaconRegion, reason: String)] = []
    /// Each region a later one of its identifier replaces, with the region the app monitors under
    /// that identifier instead (the last registered); such a region covers nothing.
    public var replaced: [(region: BeaconRegion, monitoredInstead: BeaconRegion)] = []
    /// The replaced region that would cover `station` (an uncovered one), with the region monitored
    /// instead: why the app never wakes for it, though a region of the file covers it.
    public func replacedCover(of station: Station) -> (region: BeaconRegion, monitoredInstead: BeaconRegion)? {
        replaced.first { $0.region.covers(station.identity) }
    }
    /// Regions whose registration fails: under an identifier beyond the first `monitoringLimit`
    /// the file registers. Such a region covers nothing.
    public var pastLimit: [BeaconRegion] = []
    /// The region past the limit that would cover `station` (an uncovered one, not covered by a
    /// replaced region).
    public func pastLimitCover(of station: Station) -> BeaconRegion? {
        pastLimit.first { $0.covers(station.identity) }
    }
    /// Pairs of regions with one identifier (the later replaces the earlier when registered).
    public var sharedIdentifiers: [(earlier: BeaconRegion, later: BeaconRegion)] = []

    /// A report of `regionCount` regions against `stationCount` stations, nothing found yet.
    public init(regionCount: Int, stationCount: Int) {
        self.regionCount = regionCount
        self.stationCount = stationCount
    }

    /// More regions than Core Location monitors for one app.
    public var tooManyToMonitor: Bool { monitoredCount > AppRegions.monitoringLimit }

    /// Whether anything was found.
    public var hasProblems: Bool {
        !uncovered.isEmpty || !unmatched.isEmpty || !sharedIdentifiers.isEmpty || tooManyToMonitor
    }
}

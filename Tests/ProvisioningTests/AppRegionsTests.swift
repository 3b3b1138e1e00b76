import BeaconPayload
import Foundation
import StationLedger
import Stations
import StructuredText
import Testing

/// An app's beacon regions against its stations: the regions file, what a region covers, what the
/// check reports and the fewest regions that cover a registry.
struct AppRegionsTests {
    static let ours = UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!
    static let estimote = UUID(uuidString: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")!

    static func station(_ name: String, _ uuid: UUID = ours, major: UInt16, minor: UInt16) -> Station {
        Station(name: name, identity: IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: -59))
    }

    static let site = [
        station("Entrance", major: 1, minor: 1), station("Hall A", major: 1, minor: 2),
        station("Floor 2", major: 2, minor: 1),
    ]

    /// A region covers a station when every field it gives is the station's.
    @Test(arguments: [
        (BeaconRegion(identifier: "all", uuid: ours), true),
        (BeaconRegion(identifier: "site", uuid: ours, major: 1), true),
        (BeaconRegion(identifier: "place", uuid: ours, major: 1, minor: 2), true),
        (BeaconRegion(identifier: "other place", uuid: ours, major: 1, minor: 3), false),
        (BeaconRegion(identifier: "other site", uuid: ours, major: 2), false),
        (BeaconRegion(identifier: "vendor", uuid: estimote), false),
    ])
    func aRegionCoversWhatItsFieldsSay(region: BeaconRegion, covers: Bool) {
        #expect(region.covers(Self.site[1].identity) == covers)
    }

    /// The paper's app: its region is Estimote's default UUID, its stations another; nothing is
    /// covered, and the region is named as the vendor's default.
    @Test func aVendorsDefaultUUIDIsNamed() {
        let report = AppRegions.check([BeaconRegion(identifier: "store", uuid: Self.estimote)], stations: Self.site)
        #expect(report.hasProblems)
        #expect(report.uncovered.map(\.name) == ["Entrance", "Hall A", "Floor 2"])
        #expect(report.unmatched.count == 1)
        #expect(
            report.unmatched.first?.reason
                == "its UUID is Estimote's factory default, which no station uses; the stations use 7634A485-1732-4B7D-AB44-D505D8A24C60"
        )
    }

    /// Why a region matches nothing: a typo (a few digits off), another UUID altogether, or
    /// majors and minors the stations under its UUID do not use.
    @Test(arguments: [
        (
            BeaconRegion(identifier: "typo", uuid: UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C6F")!),
            "no station uses its UUID; 7634A485-1732-4B7D-AB44-D505D8A24C60 differs from it in 1 hex digit — a typo?"
        ),
        (
            BeaconRegion(identifier: "far", uuid: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!),
            "no station uses its UUID; the closest the stations use is 7634A485-1732-4B7D-AB44-D505D8A24C60 (30 of 32 hex digits differ: another vendor's UUID?)"
        ),
        (
            BeaconRegion(identifier: "site 7", uuid: ours, major: 7),
            "no station under its UUID has major 7 (the stations' majors: 1, 2)"
        ),
        (
            BeaconRegion(identifier: "place 9", uuid: ours, major: 1, minor: 9),
            "no station under its UUID and major has minor 9 (the stations' minors: 1, 2)"
        ),
    ])
    func anUnmatchedRegionSaysWhy(region: BeaconRegion, reason: String) {
        let report = AppRegions.check([BeaconRegion(identifier: "all", uuid: Self.ours), region], stations: Self.site)
        #expect(report.uncovered.isEmpty)
        #expect(report.unmatched.map(\.reason) == [reason])
    }

    /// Two regions under one identifier, and more than 20 regions, are problems even when every
    /// station is covered; a region list that covers every station and matches one each is not.
    @Test func sharedIdentifiersAndTooManyRegionsAreReported() {
        let fine = AppRegions.check(
            [
                BeaconRegion(identifier: "a", uuid: Self.ours, major: 1),
                BeaconRegion(identifier: "b", uuid: Self.ours, major: 2),
            ],
            stations: Self.site)
        #expect(!fine.hasProblems)
        let shared = AppRegions.check(
            [
                BeaconRegion(identifier: "a", uuid: Self.ours, major: 1, line: 2),
                BeaconRegion(identifier: "a", uuid: Self.ours, major: 2, line: 3),
            ], stations: Self.site)
        #expect(shared.sharedIdentifiers.map { [$0.earlier.line, $0.later.line] } == [[2, 3]])
        // As Core Location compares them: scalar by scalar (a precomposed é and e + a combining
        // accent are two identifiers).
        let accents = AppRegions.check(
            [
                BeaconRegion(identifier: "caf\u{E9}", uuid: Self.ours, major: 1),
                BeaconRegion(identifier: "cafe\u{301}", uuid: Self.ours, major: 2),
            ], stations: Self.site)
        #expect(accents.sharedIdentifiers.isEmpty && !accents.hasProblems)
        #expect(shared.hasProblems)
        let places = (1...21).map { minor in
            BeaconRegion(identifier: "place \(minor)", uuid: Self.ours, major: 1, minor: UInt16(minor))
        }
        let stations = (1...21).map { Self.station("P\($0)", major: 1, minor: UInt16($0)) }
        let many = AppRegions.check(places, stations: stations)
        // The 21st region is never monitored: its station is uncovered.
        #expect(many.uncovered.map(\.name) == ["P21"] && many.unmatched.isEmpty)
        #expect(many.tooManyToMonitor && many.hasProblems)
        #expect(!AppRegions.check(Array(places.prefix(20)), stations: Array(stations.prefix(20))).hasProblems)
    }

    /// What iOS monitors is the last region registered under each identifier: a station only a
    /// replaced region covers is not covered, and the limit counts the regions left. (Both were
    /// counted over every region of the file: 21 regions with one identifier twice were "too many",
    /// and a station of the replaced region's major was covered.)
    @Test func aReplacedRegionNeitherCoversNorCounts() {
        let replaced = AppRegions.check(
            [
                BeaconRegion(identifier: "site", uuid: Self.ours, major: 1, line: 2),
                BeaconRegion(identifier: "site", uuid: Self.ours, major: 2, line: 3),
            ], stations: Self.site)
        #expect(replaced.uncovered.map(\.name) == ["Entrance", "Hall A"])
        #expect(replaced.monitoredCount == 1 && replaced.regionCount == 2)
        // Three under one identifier: the app monitors the last; each earlier one is replaced by it
        // (not by the next, which is itself replaced).
        let three = AppRegions.check(
            [
                BeaconRegion(identifier: "x", uuid: Self.ours, major: 1, minor: 1, line: 2),
                BeaconRegion(identifier: "x", uuid: Self.ours, major: 1, line: 3),
                BeaconRegion(identifier: "x", uuid: Self.ours, major: 2, line: 4),
            ], stations: Self.site)
        #expect(three.uncovered.map(\.name) == ["Entrance", "Hall A"])
        #expect(three.replaced.map { [$0.region.line, $0.monitoredInstead.line] } == [[2, 4], [3, 4]])
        let places = (1...20).map { minor in
            BeaconRegion(identifier: "place \(minor)", uuid: Self.ours, major: 1, minor: UInt16(minor))
        }
        let stations = (1...20).map { Self.station("P\($0)", major: 1, minor: UInt16($0)) }
        let twice = AppRegions.check(places + [places[19]], stations: stations)
        #expect(twice.regionCount == 21 && twice.monitoredCount == 20)
        #expect(!twice.tooManyToMonitor)
        #expect(twice.sharedIdentifiers.count == 1 && twice.hasProblems)
        let more = places + [BeaconRegion(identifier: "place 21", uuid: Self.ours, major: 1, minor: 21)]
        #expect(AppRegions.check(more + [more[0]], stations: stations).monitoredCount == 21)
        #expect(AppRegions.check(more + [more[0]], stations: stations).tooManyToMonitor)
    }

    /// A region under a 21st identifier is never monitored (registering it fails): a station only
    /// it covers is uncovered, and named with that region. (Coverage was of every identifier: a
    /// file of 20 one-place regions and one UUID-wide region passed every station as covered.)
    @Test func aRegionPastTheLimitCoversNothing() {
        let stations = (1...8).map { Self.station("P\($0)", major: 1, minor: UInt16($0)) }
        let places = (0..<20).map { index in
            BeaconRegion(identifier: "d\(index)", uuid: Self.ours, major: 1, minor: 1, line: index + 2, index: index)
        }
        let all = BeaconRegion(identifier: "all", uuid: Self.ours, line: 22, index: 20)
        let report = AppRegions.check(places + [all], stations: stations)
        #expect(report.tooManyToMonitor)
        #expect(report.pastLimit.map(\.identifier) == ["all"])
        #expect(report.uncovered.map(\.name) == (2...8).map { "P\($0)" })
        #expect(report.uncovered.allSatisfy { report.pastLimitCover(of: $0)?.identifier == "all" })
        // First in the file, the wide region is monitored; the 21st one-place region is not.
        let first = AppRegions.check([all] + places, stations: stations)
        #expect(first.uncovered.isEmpty && first.pastLimit.map(\.identifier) == ["d19"])
        // Two regions under a 21st identifier: neither is registered, so neither replaces the other
        // (the station was said to be covered by one "but the app monitors" the other).
        let wide = BeaconRegion(identifier: "wide", uuid: Self.ours, line: 22, index: 20)
        let wideMajor = BeaconRegion(identifier: "wide", uuid: Self.ours, major: 1, line: 23, index: 21)
        let twice = AppRegions.check(places + [wide, wideMajor], stations: stations)
        #expect(twice.replaced.isEmpty && twice.sharedIdentifiers.isEmpty)
        #expect(twice.pastLimit.map(\.index) == [20, 21])
        #expect(twice.uncovered.map(\.name) == (2...8).map { "P\($0)" })
        // A region replacing one already registered is no 21st identifier.
        let again = AppRegions.check(places + [places[0]], stations: stations)
        #expect(again.pastLimit.isEmpty && !again.tooManyToMonitor)
    }

    /// Every region two UUIDs, two majors and two minors make (a minor only beside a major), each
    /// against every identity of them: `covers` and the check's lookups say what the fields say,
    /// compared field by field here.
    @Test func everyConstraintCoversExactlyWhatItsFieldsSay() {
        let uuids = [Self.ours, Self.estimote]
        let values: [UInt16?] = [nil, 1, 2]
        let regions = uuids.flatMap { uuid in
            values.flatMap { major in
                values.compactMap { minor in
                    major == nil && minor != nil
                        ? nil
                        : BeaconRegion(
                            identifier: "\(uuid) \(major ?? 0) \(minor ?? 0)", uuid: uuid, major: major, minor: minor)
                }
            }
        }
        let stations = uuids.flatMap { uuid in
            [1, 2].flatMap { major in
                [1, 2].map { minor in Self.station("\(uuid) \(major) \(minor)", uuid, major: major, minor: minor) }
            }
        }
        func fieldsSay(_ region: BeaconRegion, _ station: Station) -> Bool {
            region.uuid == station.identity.uuid && (region.major == nil || region.major == station.identity.major)
                && (region.minor == nil || region.minor == station.identity.minor)
        }
        #expect(regions.count == 14)
        for region in regions {
            for station in stations { #expect(region.covers(station.identity) == fieldsSay(region, station)) }
        }
        // Each region alone, and each against each one station: the check's sets agree.
        for region in regions {
            let report = AppRegions.check([region], stations: stations)
            #expect(report.uncovered.map(\.name) == stations.filter { !fieldsSay(region, $0) }.map(\.name))
            for station in stations {
                let alone = AppRegions.check([region], stations: [station])
                #expect(alone.unmatched.isEmpty == fieldsSay(region, station))
                #expect(alone.uncovered.isEmpty == fieldsSay(region, station))
            }
        }
    }

    /// The fewest regions: one per UUID, with the major when its stations share one; they cover
    /// every station, match one each, and read back from their file as they were.
    @Test func theFewestRegionsCoverTheRegistry() throws {
        let stations = Self.site + [Self.station("Shop", Self.estimote, major: 4, minor: 1)]
        let regions = AppRegions.covering(stations)
        #expect(
            regions == [
                BeaconRegion(identifier: "ccbeacon-7634A485-1732-4B7D-AB44-D505D8A24C60", uuid: Self.ours),
                BeaconRegion(
                    identifier: "ccbeacon-B9407F30-F5F8-466E-AFF9-25556B57FE6D-4", uuid: Self.estimote, major: 4),
            ])
        #expect(!AppRegions.check(regions, stations: stations).hasProblems)
        let file = AppRegions.file(regions)
        let read = try AppRegions.read(Array(file.utf8), file: "regions.json")
        #expect(read.map(\.constraint) == regions.map(\.constraint))
        #expect(read.map(\.identifier) == regions.map(\.identifier))
        #expect(AppRegions.covering([]).isEmpty)
        // Two UUIDs alike in their first block get regions of their own names.
        let alike = UUID(uuidString: "7634A485-0000-4B7D-AB44-D505D8A24C60")!
        let twins = [Self.station("A", major: 1, minor: 1), Self.station("B", alike, major: 1, minor: 1)]
        let named = AppRegions.covering(twins)
        #expect(Set(named.map(\.identifier)).count == 2)
        #expect(!AppRegions.check(named, stations: twins).hasProblems)
    }

    /// A regions file that is not what `CLBeaconIdentityConstraint` takes is refused where it goes
    /// wrong.
    @Test(arguments: [
        (#"{"identifier": "a"}"#, "", "expected an array of regions"),
        // Its hint names only the form an app reads (it said "or 32 hex digits", which is refused).
        (
            #"[{"identifier": "a", "uuid": "7634A485"}]"#, "[0].uuid",
            "uuid: '7634A485' is not the 8-4-4-4-12 form an app reads (UUID(uuidString:) takes exactly 36 characters: hex digits in groups of 8, 4, 4, 4 and 12 with hyphens, no blanks)"
        ),
        (
            #"[{"identifier": "a", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "minor": 2}]"#, "[0].minor",
            "needs a major"
        ),
        (
            #"[{"identifier": "a", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": 70000}]"#, "[0].major",
            "65535"
        ),
        (
            #"[{"identifier": "", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60"}]"#, "[0].identifier",
            "is empty or blank"
        ),
        (
            #"[{"identifier": "  ", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60"}]"#, "[0].identifier",
            "is empty or blank"
        ),
        (#"[{"identifier": "a\u202E", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60"}]"#, "[0].identifier", "holds"),
        (
            #"[{"identifier": "a", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "majr": 1}]"#, "[0].majr",
            "unknown key"
        ),
        (#"[{"uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60"}]"#, "[0].identifier", "is missing"),
        // UUID(uuidString:) reads neither: the app would have no region (both were taken).
        (
            #"[{"identifier": "a", "uuid": "7634A48517324B7DAB44D505D8A24C60"}]"#, "[0].uuid",
            "is not the 8-4-4-4-12 form an app reads"
        ),
        (
            #"[{"identifier": "a", "uuid": " 7634A485-1732-4B7D-AB44-D505D8A24C60 "}]"#, "[0].uuid",
            "write 7634A485-1732-4B7D-AB44-D505D8A24C60"
        ),
        ("[", "", "the file ends where a value should start"),
    ])
    func aBadRegionsFileIsRefusedWhereItGoesWrong(text: String, keyPath: String, message: String) {
        // Either case is the same UUID to Foundation: a lower-case one is read.
        #expect(
            (try? AppRegions.read(
                Array(#"[{"identifier": "a", "uuid": "7634a485-1732-4b7d-ab44-d505d8a24c60"}]"#.utf8), file: "r"))?
                .count == 1)
        #expect {
            try AppRegions.read(Array(text.utf8), file: "regions.json")
        } throws: { error in
            guard let error = error as? DataFileError else { return false }
            return (keyPath.isEmpty || error.keyPath == keyPath) && error.description.contains(message)
        }
    }
}

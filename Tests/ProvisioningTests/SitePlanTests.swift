import BeaconPayload
import Foundation
import StationLedger
import Stations
import StructuredText
import Testing

/// A site's places made into stations: minors skip every identity known, a place planned before
/// keeps its minor, the list written reads back as it was, and a site that does not fit is refused
/// whole.
struct SitePlanTests {
    static let uuid = UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!
    static let places = #"""
        name,floor,room,x,y,notes,note
        Lift lobby,2,201,-12.5,4,by the lift,
        Meeting room,2,214,3.0,18.5,,"quiet, please"
        Kitchen,2,220,21,7.25,"coffee, ""tea""",
        """#

    static func plan(
        _ text: String = places, major: UInt16 = 2, firstMinor: UInt16 = 1, known: [Station] = []
    ) throws(StationListProblems) -> [Station] {
        try SitePlan.plan(
            places: Array(text.utf8), file: "places.csv", uuid: uuid, major: major, firstMinor: firstMinor,
            known: known)
    }

    static func station(_ name: String, major: UInt16, minor: UInt16, uuid: UUID = uuid) -> Station {
        Station(name: name, identity: IBeacon(uuid: uuid, major: major, minor: minor))
    }

    @Test func eachPlaceGetsTheNextFreeMinorAndKeepsItsColumns() throws {
        let known = [Self.station("Old", major: 2, minor: 2), Self.station("Elsewhere", major: 3, minor: 1)]
        let stations = try Self.plan(known: known)
        #expect(stations.map(\.name) == ["Lift lobby", "Meeting room", "Kitchen"])
        #expect(stations.map(\.identity.minor) == [1, 3, 4], "minor 2 is Old's; major 3 is another site")
        #expect(stations.allSatisfy { $0.identity.uuid == Self.uuid && $0.identity.major == 2 })
        #expect(
            stations[0].attributes.map { [$0.name, $0.value] } == [
                ["floor", "2"], ["room", "201"], ["x", "-12.5"], ["y", "4"], ["notes", "by the lift"],
            ])
        #expect(stations[1].note == "quiet, please")
        // Written and read back as a station list, it is the same list.
        let text = SitePlan.csv(stations)
        let read = try StationListReader.read(Array(text.utf8), file: "floor2.csv")
        #expect(read.map(\.name) == stations.map(\.name))
        #expect(read.map(\.identity) == stations.map(\.identity))
        #expect(read.map(\.attributes) == stations.map(\.attributes))
        #expect(read.map(\.note) == stations.map(\.note))
        #expect(read[2].attributes.last?.value == #"coffee, "tea""#)
    }

    /// Values with spaces or tabs at their ends, quotes, commas and a short row come back from the
    /// written list exactly (a reader trims only bare cells).
    /// Every problem of a places file is reported at once, in file order: a row of the wrong
    /// shape does not hide the name clashes after it.
    @Test func everyProblemOfThePlacesIsReported() throws {
        let known = [Self.station("Lobby", major: 2, minor: 1)]
        let text = "name,floor\nlobby,1\nhall,2,extra\nhall,3\n"
        let error = try #require(throws: StationListProblems.self) { try Self.plan(text, known: known) }
        #expect(
            error.problems.map { "\($0.line):\($0.column)" } == ["2:1", "3:8", "4:1"], "\(error.description)")
        #expect(error.problems[0].message.contains("'lobby' differs only in case from the station 'Lobby'"))
        #expect(error.problems[1].message == "this row has 3 fields, the header has 2")
        #expect(error.problems[2].message.contains("'hall' is already on line 3"))
    }

    /// An identity column in the places is reported with the rows' own problems, not instead of
    /// them: the rows are still read (the plan gives their identities anyway).
    @Test func anIdentityColumnDoesNotHideTheRows() throws {
        let text = "name,floor,minor\nA,1\nB,1,extra,x\nA,2\n"
        let error = try #require(throws: StationListProblems.self) { try Self.plan(text) }
        #expect(error.problems.map { "\($0.line):\($0.column)" } == ["1:12", "3:11", "4:1"], "\(error.description)")
        #expect(error.problems[1].message == "this row has 4 fields, the header has 3")
        #expect(error.problems[2].message.contains("station 'A' is already on line 2"))
    }

    @Test func whatIsWrittenReadsBackExactly() throws {
        let places = "name,v,w\nA,\"  padded  \",\"x, \"\"y\"\"\"\nB,\"t\t\"\nC\n"
        let stations = try Self.plan(places)
        #expect(stations.map { $0.attributes.map(\.value) } == [["  padded  ", #"x, "y""#], ["t\t", ""], ["", ""]])
        let read = try StationListReader.read(Array(SitePlan.csv(stations).utf8), file: "out.csv")
        #expect(read.map(\.attributes) == stations.map(\.attributes))
        // A semicolon or a tab inside a cell is quoted, as every CSV ccbeacon writes (some locales
        // split on them); it was written bare.
        let split = try Self.plan("name,\"x;y\"\nA,\"1;2\"\nB,\"p\tq\"\n")
        let text = SitePlan.csv(split)
        #expect(
            text.hasSuffix(",\"x;y\"\nA,\(Self.uuid.uuidString),2,1,\"1;2\"\nB,\(Self.uuid.uuidString),2,2,\"p\tq\"\n"),
            "\(text)")
        #expect(
            try StationListReader.read(Array(text.utf8), file: "out.csv").map(\.attributes) == split.map(\.attributes))
    }

    /// Planned again with a place added, the places planned before keep their minors.
    @Test func aSitePlannedAgainKeepsItsMinors() throws {
        let first = try Self.plan(firstMinor: 10)
        #expect(first.map(\.identity.minor) == [10, 11, 12])
        let grown = "name,floor\nKitchen,2\nNew desk,2\nLift lobby,2\n"
        let again = try Self.plan(grown, firstMinor: 10, known: first)
        #expect(again.map { "\($0.name) \($0.identity.minor)" } == ["Kitchen 12", "New desk 13", "Lift lobby 10"])
    }

    /// What cannot be planned is refused, every problem at its place and nothing planned: columns
    /// the plan gives, no name column, a place that is a station of another site, a typo of a list
    /// column, and more places than minors left.
    @Test(arguments: [
        (
            "name,minor\nA,1\n",
            ["places.csv:1:6: a 'minor' column: the plan gives each place its UUID, major and minor; remove it"]
        ),
        (
            "room\n201\n",
            [
                "places.csv:1:1: the header row lacks name; a places file names each place (and may have any other columns)"
            ]
        ),
        (
            "name,room\nElsewhere,1\n",
            [
                "places.csv:2:1: name: 'Elsewhere' is already a station of UUID 7634A485-1732-4B7D-AB44-D505D8A24C60 major 3; rename the place, or plan it under that UUID and major"
            ]
        ),
        (
            "name,powr\nA,-59\n",
            [
                "places.csv:1:6: unknown column 'powr' — 'power' misspelt? (the columns are name, uuid, major, minor, power, address, note; any other is kept as the stations' attribute)"
            ]
        ),
        ("name\nA\nA\n", ["places.csv:3:1: name: station 'A' is already on line 2; names must be unique"]),
        (
            "name\nelsewhere\n",
            [
                "places.csv:2:1: name: 'elsewhere' differs only in case from the station 'Elsewhere'; name the place as the station is named"
            ]
        ),
        ("name,floor\n", ["places.csv: holds no places"]),
        (
            "name\nA\nB\nC\n",
            [
                "places.csv: 3 places need minors; from 65534 on, UUID 7634A485-1732-4B7D-AB44-D505D8A24C60 major 2 has 2 free that no other station holds: plan part of the site under another major"
            ]
        ),
    ])
    func whatCannotBePlannedIsRefused(text: String, problems: [String]) {
        let firstMinor: UInt16 = text.hasPrefix("name\nA\nB\nC") ? 65534 : 1
        #expect {
            try Self.plan(text, firstMinor: firstMinor, known: [Self.station("Elsewhere", major: 3, minor: 1)])
        } throws: { error in
            (error as? StationListProblems)?.problems.map(\.description) == problems
        }
    }
}

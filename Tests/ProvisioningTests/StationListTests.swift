import BeaconPayload
import Testing

@testable import Provisioning
@testable import StationLedger
@testable import Stations
@testable import StructuredText

struct StationListTests {
    static func read(_ text: String, file: String = "s.csv") throws -> [Station] {
        try StationListReader.read(Array(text.utf8), file: file)
    }

    static func problems(_ text: String, file: String = "s.csv") -> [String] {
        do {
            _ = try StationListReader.read(Array(text.utf8), file: file)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func readsCSVWithColumnsInAnyOrderAndDefaults() throws {
        let stations = try Self.read(
            "minor,major,uuid,name,note,power\r\n2,1,7634A485-1732-4B7D-AB44-D505D8A24C60,Hall A,\"by the door, left\",-51\r\n3,0x1,7634a4851732 4b7dab44d505d8a24c60,Hall B,,\n"
                .replacingOccurrences(of: "1732 4b7d", with: "17324b7d"))
        #expect(stations.count == 2)
        #expect(stations[0].name == "Hall A")
        #expect(stations[0].identity.measuredPower == -51)
        #expect(stations[0].note == "by the door, left")
        #expect(stations[1].identity.minor == 3)
        #expect(stations[1].identity.measuredPower == -59)  // empty power means the default
        #expect(stations[1].note == nil)
        #expect(stations[1].line == 3)
        #expect(stations[0].fileStem == "Hall_A")
    }

    /// In a JSON list on one line every station is on line 1: a duplicate is still pointed at by
    /// its own place (its column and key path), not the first station's, and names the first by
    /// its element as well as its line (a name, a file name, an identity, an address).
    @Test func aDuplicateOnOneJSONLineIsPointedAtItself() {
        let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
        let text =
            #"[{"name":"a","uuid":"\#(uuid)","major":1,"minor":1},{"name":"a","uuid":"\#(uuid)","major":1,"minor":2}]"#
        #expect(
            Self.problems(text, file: "j.json") == [
                "j.json:1:89: [1].name: station 'a' is already on line 1 at [0]; names must be unique"
            ])
        // A second station of the same identity is pointed at by its own UUID.
        let same =
            #"[{"name":"a","uuid":"\#(uuid)","major":1,"minor":1},{"name":"b","uuid":"\#(uuid)","major":1,"minor":1}]"#
        #expect(
            Self.problems(same, file: "j.json") == [
                "j.json:1:100: [1].uuid: station 'b' has the same UUID, major and minor as 'a' on line 1 at [0]; scanners could not tell them apart"
            ])
        let stemAndAddress =
            #"[{"name":"x","uuid":"\#(uuid)","major":1,"minor":1},{"name":"B","uuid":"\#(uuid)","major":1,"minor":2,"address":"C0:FF:EE:12:34:56"},"#
            + #"{"name":"b","uuid":"\#(uuid)","major":1,"minor":3,"address":"C0:FF:EE:12:34:56"}]"#
        let found = Self.problems(stemAndAddress, file: "j.json")
        #expect(found.count == 2)
        #expect(
            found.first?.hasSuffix("[2].name: 'b' and 'B' (line 1 at [1]) would share the file name b; rename one")
                == true, "\(found)")
        #expect(
            found.last?.hasSuffix(
                "[2].address: station 'b' has the same address C0:FF:EE:12:34:56 as 'B' on line 1 at [1]; every beacon needs its own"
            ) == true, "\(found)")
    }

    @Test func readsJSON() throws {
        let stations = try Self.read(
            """
            [
              {"name": "Gate 1", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": 1, "minor": "0x0002", "power": -51},
              {"name": "Gate 2", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": "1", "minor": 3, "note": null}
            ]
            """, file: "s.json")
        #expect(stations.map(\.name) == ["Gate 1", "Gate 2"])
        #expect(stations[0].identity.minor == 2)
        #expect(stations[1].line == 3)
    }

    /// A required key that is null or of the wrong JSON type is an error with its key path; it
    /// never drops the station silently (null and other types once made a list one station shorter).
    @Test(arguments: [
        ("\"name\": null", "[1].name: expected a string, found null"),
        ("\"name\": 7", "[1].name: expected a string, found a number"),
        ("\"uuid\": null", "[1].uuid: expected a string, found null"),
        ("\"uuid\": true", "[1].uuid: expected a string, found true/false"),
        ("\"uuid\": {}", "[1].uuid: expected a string, found an object"),
        ("\"uuid\": []", "[1].uuid: expected a string, found an array"),
        ("\"uuid\": 7634", "[1].uuid: expected a string, found a number"),
        ("\"major\": null", "[1].major: expected a string or a number, found null"),
        ("\"major\": false", "[1].major: expected a string or a number, found true/false"),
        ("\"minor\": [2]", "[1].minor: expected a string or a number, found an array"),
        ("\"minor\": {\"value\": 2}", "[1].minor: expected a string or a number, found an object"),
        ("\"power\": true", "[1].power: expected a string or a number, found true/false"),
        ("\"note\": 5", "[1].note: expected a string, found a number"),
        ("\"address\": []", "[1].address: expected a string, found an array"),
    ])
    func aJSONValueOfTheWrongKindIsAnErrorNeverADroppedStation(replacement: String, problem: String) {
        let good = ["name": "\"b\"", "uuid": "\"7634A485-1732-4B7D-AB44-D505D8A24C60\"", "major": "1", "minor": "2"]
        let key = String(replacement.dropFirst().prefix { $0 != "\"" })
        var members = good.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }
        if let index = members.firstIndex(where: { $0.hasPrefix("\"\(key)\"") }) {
            members[index] = replacement
        } else {
            members.append(replacement)
        }
        let text = """
            [{"name": "a", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": 1, "minor": 1},
            {\(members.joined(separator: ", "))}]
            """
        let found = Self.problems(text, file: "s.json")
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.hasPrefix("s.json:2:") == true && found.first?.hasSuffix(problem) == true, "\(found)")
    }

    /// Optional keys may be null (left out); a top-level object is a JSON error, not a CSV one.
    @Test func nullOptionalsAreLeftOutAndATopLevelObjectIsAJSONError() throws {
        let stations = try Self.read(
            """
            [{"name": "a", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": 1, "minor": 1,
              "power": null, "address": null, "note": null}]
            """, file: "s.json")
        #expect(stations.count == 1 && stations[0].note == nil && stations[0].address == nil)
        #expect(
            Self.problems(" {\"name\": \"a\"}", file: "s.json") == [
                "s.json:1:2: expected an array of stations ([{\"name\": …, \"uuid\": …, \"major\": …, \"minor\": …}, …]), found an object"
            ])
        #expect(Self.problems("{\"name\": ", file: "s.json").first?.contains("the file ends") == true)
    }

    /// A row that fails to parse still claims its name: a later station of that name (or of its
    /// file name) is reported now, not only once the first row is mended.
    @Test func aRowThatFailsStillClaimsItsName() {
        let text = """
            name,uuid,major,minor
            a,7634A485-1732-4B7D-AB44-D505D8A24C60,70000,1
            a,7634A485-1732-4B7D-AB44-D505D8A24C60,1,2
            b,7634A485-XXXX-4B7D-AB44-D505D8A24C60,1,3
            B,7634A485-1732-4B7D-AB44-D505D8A24C60,1,4
            """
        #expect(
            Self.problems(text) == [
                "s.csv:2:40: major: '70000' is out of range; allowed: 0…65535 (decimal) or 0x0000…0xFFFF (hex)",
                "s.csv:3:1: name: station 'a' is already on line 2; names must be unique",
                "s.csv:4:3: uuid: '7634A485-XXXX-4B7D-AB44-D505D8A24C60' contains 'X' at position 10, which is not a hex digit; allowed: 8-4-4-4-12 hex digits (7634A485-1732-4B7D-AB44-D505D8A24C60) or 32 hex digits, any case",
                "s.csv:5:1: name: 'B' and 'b' (line 4) would share the file name B; rename one",
            ])
    }

    @Test func reportsEveryBadRowWithLineAndColumn() {
        let text = """
            name,uuid,major,minor,power
            ok,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1,-59
            bad uuid,7634A485-XXXX-4B7D-AB44-D505D8A24C60,1,2,-59
            bad numbers,7634A485-1732-4B7D-AB44-D505D8A24C60,70000,-1,200
            ,7634A485-1732-4B7D-AB44-D505D8A24C60,1,4,
            ok,7634A485-1732-4B7D-AB44-D505D8A24C60,1,5,
            OK,7634A485-1732-4B7D-AB44-D505D8A24C60,1,6,
            twin,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1,
            short,7634A485-1732-4B7D-AB44-D505D8A24C60
            long,7634A485-1732-4B7D-AB44-D505D8A24C60,1,9,0,extra
            """
        #expect(
            Self.problems(text) == [
                "s.csv:3:10: uuid: '7634A485-XXXX-4B7D-AB44-D505D8A24C60' contains 'X' at position 10, which is not a hex digit; allowed: 8-4-4-4-12 hex digits (7634A485-1732-4B7D-AB44-D505D8A24C60) or 32 hex digits, any case",
                "s.csv:4:50: major: '70000' is out of range; allowed: 0…65535 (decimal) or 0x0000…0xFFFF (hex)",
                "s.csv:4:56: minor: '-1' is negative; allowed: 0…65535 (decimal) or 0x0000…0xFFFF (hex)",
                "s.csv:4:59: power: '200' is out of range; allowed: signed dBm -128…127, or a 0x byte (0xC5 = -59)",
                "s.csv:5:1: name: is empty; every station needs a name",
                "s.csv:6:1: name: station 'ok' is already on line 2; names must be unique",
                "s.csv:7:1: name: 'OK' and 'ok' (line 2) would share the file name OK; rename one",
                "s.csv:8:6: uuid: station 'twin' has the same UUID, major and minor as 'ok' on line 2; scanners could not tell them apart",
                "s.csv:9:7: this row has 2 fields, the header has 5",
                "s.csv:10:49: this row has 6 fields, the header has 5",
            ])
    }

    @Test(arguments: [
        (
            "name,uuid,major\n",
            "s.csv:1:1: the header row lacks minor; it must name name,uuid,major,minor[,power][,address][,note]"
        ),
        (
            "name,uuid,major,minor,powr\nx,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1,-59\n",
            "s.csv:1:23: unknown column 'powr' — 'power' misspelt? (the columns are name, uuid, major, minor, power, address, note; any other is kept as the stations' attribute)"
        ),
        ("name,uuid,major,minor,name\n", "s.csv:1:23: column 'name' appears twice"),
        ("", "s.csv: holds no stations"),
        ("name,uuid,major,minor\n", "s.csv: holds no stations"),
        ("name,uuid,major,minor\n\"x,7634\n", "s.csv:2:1: this quoted field is never closed; add the closing quote"),
        (
            "name,uuid,major,minor\n***,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\n",
            "s.csv:2:1: name: '***' has no ASCII letter or digit to make a file name from (station files are named in ASCII, which every flasher opens); add one"
        ),
        // Dots are kept in a file name, so '..' made '_..hex' where '.' was refused.
        (
            "name,uuid,major,minor\n..,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1\n",
            "s.csv:2:1: name: '..' has no ASCII letter or digit to make a file name from (station files are named in ASCII, which every flasher opens); add one"
        ),
    ])
    func reportsBadHeadersAndFiles(text: String, problem: String) {
        #expect(Self.problems(text).first == problem)
    }

    /// Columns beyond the known ones are the stations' attributes, in the list's order and with
    /// the list's spelling, from CSV and JSON alike (a JSON number as written); a value that would
    /// be a spreadsheet formula must be a number, a hidden character is refused, one column twice
    /// (any case) is refused, and a plural is no typo.
    @Test func otherColumnsAreTheStationsAttributes() throws {
        let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
        let csv = try StationListReader.read(
            Array(
                "name,uuid,major,minor,Floor,room,x,notes\nA,\(uuid),1,1,2,Room 201,-12.5,by the door\nB,\(uuid),1,2,,,,\n"
                    .utf8),
            file: "s.csv")
        #expect(
            csv[0].attributes.map { [$0.name, $0.value] } == [
                ["Floor", "2"], ["room", "Room 201"], ["x", "-12.5"], ["notes", "by the door"],
            ])
        #expect(csv[1].attributes.map(\.value) == ["", "", "", ""])
        let json = try StationListReader.read(
            Array(
                #"[{"name": "A", "uuid": "\#(uuid)", "major": 1, "minor": 1, "floor": 2, "room": "Room 201", "x": null}]"#
                    .utf8),
            file: "s.json")
        #expect(json[0].attributes.map { [$0.name, $0.value] } == [["floor", "2"], ["room", "Room 201"]])
        for (text, problem) in [
            (
                "name,uuid,major,minor,x\nA,\(uuid),1,1,=SUM(A1)\n",
                "s.csv:2:44: x: '=SUM(A1)' begins as a spreadsheet formula does"
            ),
            (
                "name,uuid,major,minor,x\nA,\(uuid),1,1,-inf\n",
                "s.csv:2:44: x: '-inf' begins as a spreadsheet formula does"
            ),
            ("name,uuid,major,minor,x\nA,\(uuid),1,1,\"\t=cmd\"\n", "s.csv:2:44: x: '"),
            ("name,uuid,major,minor,room,Room\n", "s.csv:1:28: column 'Room' appears twice"),
            ("name,uuid,major,minor,room\nA,\(uuid),1,1,\"a\u{202E}b\"\n", "s.csv:2:44: room: holds U+202E"),
            ("name,uuid,major,minor,@x\n", "s.csv:1:23: column '@x' begins as a spreadsheet formula does"),
            (
                "name,uuid,major,minor,chip\n",
                "s.csv:1:23: column 'chip' is a field of the registry 'ledger export' writes"
            ),
            ("name,uuid,major,minor,minors\n", "s.csv:1:23: unknown column 'minors' — 'minor' misspelt?"),
            ("name,uuid,major,minor,nmae\n", "s.csv:1:23: unknown column 'nmae' — 'name' misspelt?"),
        ] {
            #expect(Self.problems(text).first?.hasPrefix(problem) == true, "\(Self.problems(text))")
        }
        // Words a letter from a column are words of their own; a short row's attributes are empty.
        let words = try StationListReader.read(
            Array("name,uuid,major,minor,tower,node,mayor,notes,powers\nA,\(uuid),1,1,T\n".utf8), file: "s.csv")
        #expect(words[0].attributes.map(\.name) == ["tower", "node", "mayor", "notes", "powers"])
        #expect(words[0].attributes.map(\.value) == ["T", "", "", "", ""])
    }

    /// JSON keys are read without case, as CSV headers are: `UUID` is the UUID, `Note` the note, and
    /// one key twice in two cases is refused.
    @Test func jsonKeysAreReadWithoutCase() throws {
        let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
        let read = try StationListReader.read(
            Array(#"[{"Name": "A", "UUID": "\#(uuid)", "Major": 1, "minor": 1, "Note": "hi", "Floor": "2"}]"#.utf8),
            file: "s.json")
        #expect(read[0].name == "A" && read[0].note == "hi")
        #expect(read[0].attributes == [StationAttribute(name: "Floor", value: "2")])
        let twice =
            #"[{"name": "A", "uuid": "\#(uuid)", "UUID": "\#(uuid)", "major": 1, "minor": 1, "floor": 1, "Floor": 2}]"#
        #expect(
            Self.problems(twice, file: "s.json").filter { $0.contains("appears twice") }.count == 2,
            "\(Self.problems(twice, file: "s.json"))")
    }

    /// A plain number is what a spreadsheet reads as that number: sign, digits, fraction, exponent.
    @Test(arguments: [
        ("-12.5", true), ("+3", true), ("1e3", true), ("-1E-3", true), ("0.5", true), (".5", true), ("3.", true),
        ("-", false), ("-inf", false), ("nan", false), ("0x10", false), ("-0x1p3", false), ("1e", false),
        ("- 1", false), ("", false), ("1,5", false),
    ])
    func aPlainNumberIsOnlyANumber(text: String, plain: Bool) {
        #expect(CSVCell.isPlainNumber(text) == plain)
    }

    @Test func reportsJSONProblemsWithKeyPaths() {
        let text = """
            [
              {"name": "a", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": 1, "minor": 1, "mjor": "red"},
              {"name": "b", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": 1},
              {"name": "c", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": true, "minor": 70000},
              7
            ]
            """
        #expect(
            Self.problems(text, file: "s.json") == [
                "s.json:2:97: [0].mjor: unknown column 'mjor' — 'major' misspelt? (the columns are name, uuid, major, minor, power, address, note; any other is kept as the stations' attribute)",
                "s.json:3:3: [1].minor: is missing",
                "s.json:4:74: [2].major: expected a string or a number, found true/false",
                "s.json:4:89: [2].minor: '70000' is out of range; allowed: 0…65535 (decimal) or 0x0000…0xFFFF (hex)",
                "s.json:5:3: [3]: expected an object with name, uuid, major, minor, found a number",
            ])
        #expect(Self.problems("[1,", file: "s.json") == ["s.json:1:4: the file ends where a value should start"])
    }

    @Test(arguments: [
        ("Hall A/1", "Hall_A_1"), ("../../etc/passwd", "_._.._etc_passwd"), ("Zürich", "Z_rich"),
        (".hidden", "_hidden"),
    ])
    func fileNamesAreSafe(name: String, stem: String) {
        #expect(Station.fileStem(for: name) == stem)
    }

    @Test func readsAddressesAndRefusesBadOrSharedOnes() throws {
        let good = try Self.read(
            "name,uuid,major,minor,address\nA,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1,C0:FF:EE:12:34:56\nB,7634A485-1732-4B7D-AB44-D505D8A24C60,1,2,\n"
        )
        #expect(good[0].address?.description == "C0:FF:EE:12:34:56")
        #expect(good[1].address == nil, "empty: derived later")
        #expect(
            Self.problems(
                "name,uuid,major,minor,address\nA,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1,00:12:4B:00:25:41\nB,7634A485-1732-4B7D-AB44-D505D8A24C60,1,2,C0:FF:EE:12:34:56\nC,7634A485-1732-4B7D-AB44-D505D8A24C60,1,3,c0:ff:ee:12:34:56\n"
            ) == [
                "s.csv:2:44: address: '00:12:4B:00:25:41' is not a random static address: its two top bits must be 1 (first byte C0…FF)",
                "s.csv:4:44: address: station 'C' has the same address C0:FF:EE:12:34:56 as 'B' on line 3; every beacon needs its own",
            ])
        #expect(
            Self.problems(
                #"[{"name": "A", "uuid": "7634A485-1732-4B7D-AB44-D505D8A24C60", "major": 1, "minor": 1, "address": "C0:FF"}]"#,
                file: "s.json")
                == [
                    "s.json:1:99: [0].address: 'C0:FF' is not a device address; write 6 bytes as XX:XX:XX:XX:XX:XX (most significant first)"
                ])
    }
}

/// Names and notes are stored (ledger), written (stations.json, exports) and shown (tables): a NUL
/// used to cut `Lab\0 1` to `Lab` in the ledger, and invalid UTF-8 became U+FFFD unseen.
struct StationListTextTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    static func problems(_ bytes: [UInt8], file: String) -> [String] {
        do {
            _ = try StationListReader.read(bytes, file: file)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test(arguments: [
        (
            "Lab\u{0} 1", "",
            "s.csv:2:1: name: holds U+0000 (NUL) at character 4; names may hold no control character, line break or invisible character (bidirectional controls among them)"
        ),
        (
            "\"Lab\n1\"", "",
            "s.csv:2:1: name: holds U+000A (line feed) at character 4; names may hold no control character, line break or invisible character (bidirectional controls among them)"
        ),
        (
            "Lab\t1", "",
            "s.csv:2:1: name: holds U+0009 (tab) at character 4; names may hold no control character, line break or invisible character (bidirectional controls among them)"
        ),
        (
            "Lab\u{2028}1", "",
            "s.csv:2:1: name: holds U+2028 (line separator) at character 4; names may hold no control character, line break or invisible character (bidirectional controls among them)"
        ),
        (
            "Lab 1", "a\u{0}b",
            "s.csv:2:48: note: holds U+0000 (NUL) at character 2; notes may hold tabs but no other control character, line break or invisible character"
        ),
        (
            "Lab 1", "\"two\r\nlines\"",
            "s.csv:2:48: note: holds U+000D (carriage return) at character 4; notes may hold tabs but no other control character, line break or invisible character"
        ),
        (
            "Lab 1", "a\u{85}b",
            "s.csv:2:48: note: holds U+0085 (next line) at character 2; notes may hold tabs but no other control character, line break or invisible character"
        ),
    ])
    func controlCharactersInNamesAndNotesAreRefused(name: String, note: String, problem: String) {
        let text = "name,uuid,major,minor,note\n\(name),\(Self.uuid),1,1,\(note)\n"
        #expect(Self.problems(Array(text.utf8), file: "s.csv") == [problem])
    }

    @Test func aTabInANoteIsKept() throws {
        let text = "name,uuid,major,minor,note\nLab 1,\(Self.uuid),1,1,shelf\t3\n"
        #expect(try StationListReader.read(Array(text.utf8), file: "s.csv")[0].note == "shelf\t3")
    }

    @Test func anEscapedNULInAJSONNameIsRefused() {
        let text = #"[{"name": "Lab\u0000 1", "uuid": "\#(Self.uuid)", "major": 1, "minor": 1}]"#
        #expect(
            Self.problems(Array(text.utf8), file: "s.json") == [
                "s.json:1:11: [0].name: holds U+0000 (NUL) at character 4; names may hold no control character, line break or invisible character (bidirectional controls among them)"
            ])
    }

    /// Invalid UTF-8 is refused at its first bad byte (line and column), never turned into U+FFFD.
    @Test(arguments: [
        ([0xFF], "s.csv:2:4: invalid UTF-8 (byte 0xFF); save the file as UTF-8"),
        ([0xC3], "s.csv:2:4: invalid UTF-8 (byte 0xC3); save the file as UTF-8"),
        ([0xC3, 0xA9, 0xE2, 0x82], "s.csv:2:5: invalid UTF-8 (byte 0xE2); save the file as UTF-8"),
        ([0xED, 0xA0, 0x80], "s.csv:2:4: invalid UTF-8 (byte 0xED); save the file as UTF-8"),
        ([0xC0, 0xAF], "s.csv:2:4: invalid UTF-8 (byte 0xC0); save the file as UTF-8"),
        ([0x80], "s.csv:2:4: invalid UTF-8 (byte 0x80); save the file as UTF-8"),
    ])
    func invalidUTF8InACSVListIsRefused(bad: [UInt8], problem: String) {
        let bytes = Array("name,uuid,major,minor\nLab".utf8) + bad + Array(",\(Self.uuid),1,1\n".utf8)
        #expect(Self.problems(bytes, file: "s.csv") == [problem])
    }

    @Test func invalidUTF8InAJSONListIsRefused() {
        let bytes =
            Array("[\n  {\"name\": \"Lab".utf8) + [0xFE]
            + Array(" 1\", \"uuid\": \"\(Self.uuid)\", \"major\": 1, \"minor\": 1}]".utf8)
        #expect(
            Self.problems(bytes, file: "s.json") == ["s.json:2:16: invalid UTF-8 (byte 0xFE); save the file as UTF-8"])
    }

    @Test func validUTF8IsRead() throws {
        let text = "name,uuid,major,minor,note\nCafé 😀,\(Self.uuid),1,1,ü\n"
        let stations = try StationListReader.read(Array(text.utf8), file: "s.csv")
        #expect(stations[0].name == "Café 😀" && stations[0].note == "ü")
    }
}

/// `calibrate --write` into a CSV list: one cell's bytes change, or a power column is added at
/// the row ends; every other byte stays.
struct ListPowerEditTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    struct Case: Sendable, CustomTestStringConvertible {
        let list: String
        let edited: String
        let addedColumn: Bool
        var testDescription: String { list.debugDescription }
    }

    @Test(arguments: [
        Case(
            list: "name,uuid,major,minor,power\nA,\(uuid),1,1,-59\nHall B,\(uuid),1,2, -59 \nC,\(uuid),1,3,\n",
            edited: "name,uuid,major,minor,power\nA,\(uuid),1,1,-59\nHall B,\(uuid),1,2,-61\nC,\(uuid),1,3,\n",
            addedColumn: false),
        // CRLF, a byte-order mark, a quoted name and note with a comma and quotes, an empty cell.
        Case(
            list: "\u{FEFF}power,name,uuid,major,minor,note\r\n,\"Hall B\",\(uuid),1,2,\"a, \"\"b\"\"\"\r\n",
            edited: "\u{FEFF}power,name,uuid,major,minor,note\r\n-61,\"Hall B\",\(uuid),1,2,\"a, \"\"b\"\"\"\r\n",
            addedColumn: false),
        // No power column: one is added at every row's end, empty but for the station's.
        Case(
            list: "name,uuid,major,minor,note\nA,\(uuid),1,1,\"x, y\"\nHall B,\(uuid),1,2,z \r\nC,\(uuid),1,3,",
            edited:
                "name,uuid,major,minor,note,power\nA,\(uuid),1,1,\"x, y\",\nHall B,\(uuid),1,2,z ,-61\r\nC,\(uuid),1,3,,",
            addedColumn: true),
        // A row without its trailing cells (spreadsheets drop empty ones; the list reader takes
        // it): the missing cells are empty ones, written out up to the power cell.
        Case(
            list: "name,uuid,major,minor,note,power\nA,\(uuid),1,1,,-59\nHall B,\(uuid),1,2",
            edited: "name,uuid,major,minor,note,power\nA,\(uuid),1,1,,-59\nHall B,\(uuid),1,2,,-61",
            addedColumn: false),
        Case(
            list: "name,uuid,major,minor,power,note\nHall B,\(uuid),1,2\r\nC,\(uuid),1,3,-59,x\n",
            edited: "name,uuid,major,minor,power,note\nHall B,\(uuid),1,2,-61\r\nC,\(uuid),1,3,-59,x\n",
            addedColumn: false),
        // No power column and short rows anywhere: each is filled out before its power cell.
        Case(
            list: "name,uuid,major,minor,note\nA,\(uuid),1,1\nHall B,\(uuid),1,2\nC,\(uuid),1,3,x\n",
            edited: "name,uuid,major,minor,note,power\nA,\(uuid),1,1,,\nHall B,\(uuid),1,2,,-61\nC,\(uuid),1,3,x,\n",
            addedColumn: true),
    ])
    func onlyTheStationsPowerChanges(_ test: Case) throws {
        let edited = try ListPowerEdit.settingPower(-61, of: "Hall B", inCSV: Array(test.list.utf8), file: "l.csv")
        #expect(String(decoding: edited.bytes, as: UTF8.self) == test.edited)
        #expect(edited.addedColumn == test.addedColumn)
        let stations = try StationListReader.read(edited.bytes, file: "l.csv")
        #expect(stations.first { $0.name == "Hall B" }?.identity.measuredPower == -61)
        #expect(stations.filter { $0.name != "Hall B" }.allSatisfy { $0.identity.measuredPower == -59 })
    }

    @Test(arguments: [
        ("[{\"name\": \"Hall B\", \"uuid\": \"\(uuid)\", \"major\": 1, \"minor\": 2}]", "is a JSON list"),
        ("name,uuid,major,minor\nA,\(uuid),1,1\n", "has no station named 'Hall B'"),
        ("name,uuid,major,minor\nHall B,\(uuid),1,1\nHall B,\(uuid),1,2\n", "has 2 stations named 'Hall B'"),
        ("uuid,major,minor\n\(uuid),1,1\n", "has no header row naming a name column"),
        ("name,uuid,major,minor\nHall B,\(uuid),1,2,9\n", "this row has 5 fields, the header has 4"),
    ])
    func whatCannotBeEditedIsRefused(_ list: String, _ message: String) {
        #expect {
            _ = try ListPowerEdit.settingPower(-61, of: "Hall B", inCSV: Array(list.utf8), file: "l.csv")
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}

/// Untrusted names and notes (issue 17's input policy): every character that would not show —
/// controls, line breaks, bidirectional overrides and other invisible format characters — and,
/// in names, spaces at either end and a first character a spreadsheet takes for a formula, is
/// refused with the line and column, never accepted.
struct UntrustedStationTextTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    @Test(arguments: [
        ("a\u{1B}[31mRED\u{1B}[0m", "U+001B (escape) at character 2"),
        ("left\u{202E}thgir", "U+202E (right-to-left override) at character 5"),
        ("iso\u{2066}late\u{2069}", "U+2066 (left-to-right isolate)"),
        ("zero\u{200B}width", "U+200B (zero-width space)"),
        ("soft\u{00AD}hyphen", "U+00AD (soft hyphen)"),
        ("bom\u{FEFF}inside", "U+FEFF (zero-width no-break space)"),
        ("next\u{0085}line", "U+0085 (next line)"),
        (" padded", "begins or ends with a space"),
        ("padded ", "begins or ends with a space"),
        ("=HYPERLINK(\"http://x\",\"a\")", "begins with '=', which a spreadsheet"),
        ("+1 floor", "begins with '+'"),
        ("-north", "begins with '-'"),
        ("@home", "begins with '@'"),
    ])
    func aHostileNameIsRefusedWhereItIs(name: String, problem: String) {
        let json =
            "[{\"name\": " + JSONValue.string(name).compact()
            + ", \"uuid\": \"\(Self.uuid)\", \"major\": 1, \"minor\": 2}]"
        do {
            _ = try StationListReader.read(Array(json.utf8), file: "list.json")
            Issue.record("accepted: \(name.debugDescription)")
        } catch {
            #expect(error.problems.count == 1)
            let message = error.problems.first?.description ?? ""
            #expect(message.hasPrefix("list.json:1:"), "\(message)")
            #expect(message.contains(problem), "\(message)")
            #expect(!message.contains("\u{1B}") && !message.contains("\u{202E}"), "the message never carries it")
        }
    }

    @Test(arguments: ["note\u{202E}x", "bell\u{07}", "line\nbreak"])
    func aHostileNoteIsRefused(note: String) {
        let json =
            "[{\"name\": \"ok\", \"uuid\": \"\(Self.uuid)\", \"major\": 1, \"minor\": 2, \"note\": "
            + JSONValue.string(note).compact() + "}]"
        #expect(throws: StationListProblems.self) { try StationListReader.read(Array(json.utf8), file: "list.json") }
    }

    /// What stays allowed: any other printable text, in any script, tabs in notes.
    @Test func printableTextInAnyScriptIsAccepted() throws {
        let json =
            "[{\"name\": \"Küche 東京 Δ-2 (north) R&D 'x' \\\"y\\\" </svg> */\", \"uuid\": \"\(Self.uuid)\", \"major\": 1, \"minor\": 2, \"note\": \"a\\tb = c\"}]"
        let stations = try StationListReader.read(Array(json.utf8), file: "list.json")
        #expect(stations.first?.name == "Küche 東京 Δ-2 (north) R&D 'x' \"y\" </svg> */")
    }
}

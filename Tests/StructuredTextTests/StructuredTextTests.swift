import Testing

@testable import StructuredText

struct JSONParserTests {
    static func parse(_ text: String) throws -> JSONNode { try JSONParser.parse(Array(text.utf8), file: "t.json") }

    @Test func parsesValuesWithPositions() throws {
        let node = try Self.parse("{\n  \"a\": [1, -2.5e3, \"x\\u00e9\\n\"],\n  \"b\": {\"c\": true, \"d\": null}\n}")
        var root = try JSONObjectReader(node, file: "t.json")
        let array = try root.array("a")
        #expect(array.count == 3)
        #expect(array[0].line == 2 && array[0].column == 9)
        guard case .number("-2.5e3") = array[1].value else { Issue.record("number kept as written"); return }
        guard case .string("xé\n") = array[2].value else { Issue.record("escapes"); return }
        var b = try root.object("b")
        #expect(b.optionalNode("d") == nil)  // null reads as absent
        #expect(b.optionalNode("c") != nil)
        try b.finish()
        try root.finish()
    }

    @Test func surrogatePairsAndBOM() throws {
        let node = try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("\"\\ud83d\\ude00\"".utf8), file: "t.json")
        guard case .string("😀") = node.value else { Issue.record("surrogate pair"); return }
    }

    @Test(arguments: [
        ("", 1, 1, "the file ends where a value should start"),
        ("{\"a\": 1,}", 1, 9, "expected a quoted key"),
        ("{\"a\": 1 \"b\": 2}", 1, 9, "expected ',' or '}'"),
        ("{\"a\": 1, \"a\": 2}", 1, 10, "key \"a\" appears twice"),
        ("[1, 2", 1, 6, "the file ends inside an array"),
        ("01", 1, 3, "numbers do not start with 0 (write hex as a string, \"0x…\")"),
        ("\"abc", 1, 5, "the file ends inside a string"),
        ("\"a\tb\"", 1, 3, "control character in a string (write it as an escape)"),
        ("[1] 2", 1, 5, "unexpected text after the JSON value"),
        ("\n  tru", 2, 3, "not a JSON value: 'tru' (a value is an object, array, string, number, true, false or null)"),
        (
            "nothing", 1, 1,
            "not a JSON value: 'nothing' (a value is an object, array, string, number, true, false or null)"
        ),
        (
            "[falsehood]", 1, 2,
            "not a JSON value: 'falsehood' (a value is an object, array, string, number, true, false or null)"
        ),
        ("\"\\x\"", 1, 4, "unknown escape \\x"),
        ("\"\\ud800\"", 1, 8, "a high surrogate must be followed by a low surrogate"),
        ("-", 1, 2, "a number needs digits"),
        ("1.", 1, 3, "a fraction needs digits"),
    ])
    func rejectsMalformedJSON(text: String, line: Int, column: Int, message: String) {
        #expect(throws: DataFileError(file: "t.json", line: line, column: column, message: message)) {
            try Self.parse(text)
        }
    }

    @Test func refusesDeepNesting() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: DataFileError.self) { try Self.parse(deep) }
    }

    @Test func readerReportsKeyPathsTypesRangesAndUnknownKeys() throws {
        let node = try Self.parse(
            "{\"chip\": {\"flashSize\": \"0x40000\", \"pages\": 300, \"name\": 5, \"colour\": \"red\"}}")
        var root = try JSONObjectReader(node, file: "b.json")
        var chip = try root.object("chip")
        #expect(try chip.integer("flashSize", in: 0...0x100000) == 0x40000)
        #expect(
            throws: DataFileError(
                file: "b.json", line: 1, column: 44, keyPath: "chip.pages",
                message: "300 is out of range; allowed: 1…128")
        ) {
            try chip.integer("pages", in: 1...128)
        }
        #expect(
            throws: DataFileError(
                file: "b.json", line: 1, column: 57, keyPath: "chip.name", message: "expected a string, found a number")
        ) {
            try chip.string("name")
        }
        #expect(
            throws: DataFileError(file: "b.json", line: 1, column: 10, keyPath: "chip.missing", message: "is missing")
        ) {
            try chip.string("missing")
        }
        #expect(
            throws: DataFileError(
                file: "b.json", line: 1, column: 70, keyPath: "chip.colour",
                message: "unknown key; the keys here are: flashSize, missing, name, pages")
        ) {
            try chip.finish()
        }
        #expect(
            DataFileError(file: "b.json", line: 3, column: 4, keyPath: "a.b", message: "m").description
                == "b.json:3:4: a.b: m")
    }

    @Test(arguments: [("12", 12), ("-3", -3), ("0x1F", 31), ("0X0", 0)])
    func integersParseDecimalAndHex(text: String, value: Int) {
        #expect(JSONObjectReader.parseInteger(text) == value)
    }

    @Test(arguments: ["", "0x", "1.5", "12a", "+3", "1234567890123456"])
    func nonIntegersAreRefused(text: String) {
        #expect(JSONObjectReader.parseInteger(text) == nil)
    }
}

struct CSVTableTests {
    static func parse(_ text: String) throws -> [[CSVField]] { try CSVTable.parse(Array(text.utf8), file: "s.csv") }

    @Test func parsesQuotedFieldsAndPositions() throws {
        let rows = try Self.parse("name,note\r\n\"a, b\",\"say \"\"hi\"\"\"\n\n c ,\"two\nlines\"\nlast,")
        #expect(
            rows.map { $0.map(\.text) } == [
                ["name", "note"], ["a, b", "say \"hi\""], ["c", "two\nlines"], ["last", ""],
            ])
        #expect(rows[1][1].line == 2 && rows[1][1].column == 8)
        #expect(rows[2][0].line == 4 && rows[2][0].column == 1)
        #expect(rows[3][0].line == 6)
        #expect(rows[3][1].column == 6)
    }

    @Test func ignoresByteOrderMarkAndBlankLines() throws {
        let rows = try CSVTable.parse([0xEF, 0xBB, 0xBF] + Array("a,b\n   \n1,2\n".utf8), file: "s.csv")
        #expect(rows.map { $0.map(\.text) } == [["a", "b"], ["1", "2"]])
    }

    @Test(arguments: [
        ("a,\"b\n", 1, 3, "this quoted field is never closed; add the closing quote"),
        ("a,\"b\"c\n", 1, 6, "text after a closing quote; put the whole field in quotes and double any quote inside"),
        ("a,b\"c\n", 1, 4, "a quote inside an unquoted field; put the field in quotes and write the quote as \"\""),
    ])
    func rejectsBadQuoting(text: String, line: Int, column: Int, message: String) {
        #expect(throws: DataFileError(file: "s.csv", line: line, column: column, message: message)) {
            try Self.parse(text)
        }
    }
}

/// Each CSV field knows its bytes in the file, so one cell can be replaced and nothing else.
struct CSVFieldBytesTests {
    @Test(arguments: [
        "a,b,c\n1,2,3\n", "a,b,c\r\n1, 2 ,3\r\n", "\u{FEFF}a,\"b,\"\"x\"\"\",c\n1,\"two\nlines\",3",
        "a,b\n\n\n1,2\n", "a, \"b\" ,c\n,,\n", "é,ü\n\"ø\",ß\r",
    ])
    func eachFieldsBytesHoldItsTextAndTheFieldsTileTheirRow(_ text: String) throws {
        let bytes = Array(text.utf8)
        let rows = try CSVTable.parse(bytes, file: "t.csv")
        for row in rows {
            for field in row {
                let raw = String(decoding: bytes[field.bytes], as: UTF8.self)
                let unquoted = CSVTable.trimmed(raw)
                let expected =
                    unquoted.hasPrefix("\"")
                    ? String(unquoted.dropFirst().dropLast()).replacing("\"\"", with: "\"") : unquoted
                #expect(expected == field.text, "\(raw.debugDescription) in \(text.debugDescription)")
            }
            // Neighbours are one comma apart: the row's bytes are its fields and the commas.
            for (left, right) in zip(row, row.dropFirst()) {
                #expect(left.bytes.upperBound + 1 == right.bytes.lowerBound)
                #expect(bytes[left.bytes.upperBound] == UInt8(ascii: ","))
            }
        }
    }
}

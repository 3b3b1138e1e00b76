// libFuzzer target for the station-list reader (CSV and JSON), compiled with the station-list
// source and linked with the StructuredText and BeaconPayload modules by scripts/fuzz.
// Besides "never crash", every accepted list must have unique names, unique file names and
// unique identities, and every reported problem must carry a position inside the input. And
// (untrusted text): every accepted name and note holds nothing that would not show, no name
// begins or ends with a space or begins like a formula, and every encoder keeps its promise on
// it: the CSV cell never begins with a formula character and reads back whole, the terminal's
// escaping and the JSON writer leave no invisible character but joiners between visible ones,
// the JSON string parses back equal. Names and notes are of bounded length.

import StructuredText

/// libFuzzer entry point: one input, read as a station list (JSON when it starts with '[').
@_cdecl("LLVMFuzzerTestOneInput")
public func stationListFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Lines as the CSV reader counts them: LF, CRLF, and a lone CR (old Mac files) each end one.
    let lineCount =
        bytes.indices.filter {
            bytes[$0] == 0x0A || (bytes[$0] == 0x0D && ($0 + 1 == bytes.count || bytes[$0 + 1] != 0x0A))
        }
        .count + 1
    do {
        let stations = try StationListReader.read(bytes, file: "fuzz")
        precondition(!stations.isEmpty, "an accepted list is never empty")
        precondition(Set(stations.map(\.name)).count == stations.count, "duplicate names accepted")
        precondition(Set(stations.map { $0.fileStem.lowercased() }).count == stations.count, "file-name clash accepted")
        let identities = Set(stations.map { "\($0.identity.uuid)/\($0.identity.major)/\($0.identity.minor)" })
        precondition(identities.count == stations.count, "duplicate identity accepted")
        for station in stations {
            precondition(!station.fileStem.contains("/") && !station.fileStem.hasPrefix("."), "unsafe file name")
            checkUntrusted(station.name, isName: true)
            if let note = station.note { checkUntrusted(note, isName: false) }
        }
    } catch {
        precondition(!error.problems.isEmpty, "a rejected list names its problems")
        for problem in error.problems {
            precondition(problem.line >= 0 && problem.line <= lineCount + 1, "problem outside the input")
        }
    }
    _ = try? CSVTable.parse(bytes, file: "fuzz")
    _ = try? JSONParser.parse(bytes, file: "fuzz")
    return 0
}

/// Whether `scalar` would not show: a control, a line or paragraph separator, a format
/// character, a default-ignorable, private-use or non-character, the braille blank. (Written
/// here apart from `HiddenCharacters`, so that the two can disagree and be caught.)
func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
    let properties = scalar.properties
    let category = properties.generalCategory
    return category == .control || category == .format || category == .lineSeparator
        || category == .paragraphSeparator || category == .privateUse || properties.isNoncharacterCodePoint
        || properties.isDefaultIgnorableCodePoint || scalar.value == 0x2800
}

/// Whether `text` holds a character that would not show (a tab allowed where `allowingTab`):
/// the rule is context-free, so a joiner or selector is one wherever it stands.
func misplacedInvisible(_ text: String, allowingTab: Bool) -> Bool {
    text.unicodeScalars.contains { isInvisible($0) && !(allowingTab && $0 == "\t") }
}

/// The input policy and the encoders' promises, on one accepted name or note.
func checkUntrusted(_ text: String, isName: Bool) {
    precondition(
        !misplacedInvisible(text, allowingTab: !isName),
        "a character that would not show accepted: \(text.debugDescription)")
    precondition(
        isName ? text.count <= 100 && text.utf8.count <= 400 : text.count <= 1000 && text.utf8.count <= 4000,
        "a text too long accepted")
    if isName {
        precondition(text.first?.isWhitespace != true && text.last?.isWhitespace != true, "a padded name accepted")
        precondition(!(text.first.map { "=+-@".contains($0) } ?? false), "a formula-like name accepted")
    }
    let cell = CSVCell.text(text)
    precondition(!(cell.first.map { "=+-@\t\r".contains($0) } ?? false), "a CSV cell that is a formula")
    if let row = try? CSVTable.parse(Array((cell + "\n").utf8), file: "cell"), let field = row.first?.first {
        precondition(field.text == text || field.text == "'" + text, "a CSV cell that does not read back")
    }
    precondition(!misplacedInvisible(VisibleText.escaped(text), allowingTab: false), "the terminal escaping leaks")
    let json = JSONValue.string(text).compact()
    precondition(!misplacedInvisible(json, allowingTab: false), "the JSON writer leaks")
    guard let node = try? JSONParser.parse(Array(json.utf8), file: "json"), case .string(let back) = node.value else {
        preconditionFailure("a JSON string that does not parse: \(json)")
    }
    precondition(back == text, "a JSON string that does not read back")
}

import BeaconPayload
public import StationLedger
public import StructuredText

/// A station list with every problem found in it (a list is used only when it has none).
public struct StationListProblems: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every problem, in file order.
    public var problems: [DataFileError]

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// The problems found in one list file, each at its place in the file: a reader collects every
/// one before it gives up, so a list with three mistakes is fixed in one go.
struct ListProblems {
    /// The file, as messages name it.
    let file: String
    /// What was found so far, in the order found.
    private(set) var found: [DataFileError] = []

    /// None yet in `file`.
    init(file: String) { self.file = file }

    /// Whether none was found.
    var isEmpty: Bool { found.isEmpty }
    /// How many were found.
    var count: Int { found.count }

    /// A problem a reader of the file reported itself (CSV or JSON syntax).
    mutating func append(_ problem: DataFileError) { found.append(problem) }

    /// `message` at a place in the file.
    mutating func add(_ message: String, line: Int, column: Int, keyPath: String = "") {
        found.append(DataFileError(file: file, line: line, column: column, keyPath: keyPath, message: message))
    }

    /// `message` about a whole station: at its row.
    mutating func add(_ message: String, at station: Station) {
        add(message, line: station.line, column: station.column, keyPath: station.element ?? "")
    }

    /// Every problem, in file order, as the error a reader throws.
    var error: StationListProblems {
        StationListProblems(problems: found.sorted { ($0.line, $0.column) < ($1.line, $1.column) })
    }

    /// Throws `error` if any was found.
    func check() throws(StationListProblems) {
        guard found.isEmpty else { throw error }
    }
}

/// Reads station lists: CSV with a header row (`name,uuid,major,minor[,power][,address][,note]`,
/// columns in any order, and any other columns — floor, room, x, y — kept as each station's
/// attributes) or a JSON array of objects with the same keys. The whole list is validated before
/// anything uses it: every bad row, duplicate name, duplicate identity (UUID, major, minor) and
/// file-name clash is reported, with line and column. A column one letter away from a known one
/// (`mjor`, `powr`, `uid`) is taken for a typo, not an attribute.
public enum StationListReader {
    /// The columns (and JSON keys) a list may have.
    public static let columns = ["name", "uuid", "major", "minor", "power", "address", "note"]
    /// The ones it must have.
    public static let requiredColumns = ["name", "uuid", "major", "minor"]

    /// The keys whose JSON values must be strings (the others, numbers, may also be strings).
    static let textColumns: Set<String> = ["name", "uuid", "address", "note"]

    /// The first character of a file after blanks and a byte-order mark: `[` or `{` make it JSON
    /// (a list, or batch's record), anything else CSV.
    public static func firstSignificantByte(_ bytes: [UInt8]) -> UInt8? {
        bytes.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
    }

    /// Whether a file that begins with `head` may be a station list, whatever its rows hold: as
    /// CSV, a header (its first row that is not blank; lines end in LF, CRLF or CR) naming every
    /// required column and no field of the registry `ledger export` writes; as JSON, "name" and
    /// "uuid" keys and no "chip" key (a registry's). A rule on the file's start, so that a list
    /// with a wrong row, or too large to read, still counts.
    public static func mayBeList(_ head: [UInt8]) -> Bool {
        let first = firstSignificantByte(head)
        if first == UInt8(ascii: "[") || first == UInt8(ascii: "{") {
            let keys = jsonKeys(in: head)
            return keys.contains("name") && keys.contains("uuid") && !keys.contains("chip")
        }
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" }
        // Line by line up to the first that is not blank: the rest of the head is never decoded.
        var line = ""
        var start = 0
        while start < head.count {
            var end = start
            while end < head.count, head[end] != 0x0A, head[end] != 0x0D { end += 1 }
            line = String(decoding: head[start..<end], as: UTF8.self).lowercased()
            if !line.allSatisfy(blank) { break }
            start = end + 1
        }
        let edge: (Character) -> Bool = { blank($0) || $0 == "\"" }
        let header = line.split(separator: ",", omittingEmptySubsequences: false).map { cell in
            String(cell.drop(while: edge).reversed().drop(while: edge).reversed())
        }
        let registryOnly = Registry.reservedNames.subtracting(columns)
        return Set(requiredColumns).isSubset(of: header) && registryOnly.isDisjoint(with: header)
    }

    /// The keys (lower-cased) of JSON text, cut short or not: every string followed by a colon.
    static func jsonKeys(in bytes: [UInt8]) -> Set<String> {
        let quote = UInt8(ascii: "\"")
        var keys: Set<String> = []
        var index = 0
        while index < bytes.count {
            guard bytes[index] == quote else {
                index += 1
                continue
            }
            var end = index + 1
            while end < bytes.count, bytes[end] != quote { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
            guard end < bytes.count else { break }
            var next = end + 1
            while next < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[next]) { next += 1 }
            if next < bytes.count, bytes[next] == UInt8(ascii: ":") {
                keys.insert(String(decoding: bytes[(index + 1)..<end], as: UTF8.self).lowercased())
            }
            index = end + 1
        }
        return keys
    }

    /// Reads `bytes` as JSON when the first non-blank character is `[` or `{`, else as CSV.
    public static func read(_ bytes: [UInt8], file: String) throws(StationListProblems) -> [Station] {
        let first = firstSignificantByte(bytes)
        var problems = ListProblems(file: file)
        let rows =
            first == UInt8(ascii: "[") || first == UInt8(ascii: "{")
            ? jsonRows(bytes, problems: &problems) : csvRows(bytes, problems: &problems)
        let stations = stations(from: rows, problems: &problems)
        try problems.check()
        return stations
    }

    /// The stations of `rows`, each checked, then all together (names, file names, identities,
    /// addresses unique); every problem goes to `problems`.
    static func stations(from rows: [Row], problems: inout ListProblems) -> [Station] {
        // Each row with the station it made, if any, for where its clashes are pointed at.
        var parsed: [(row: Row, station: Station?)] = []
        for row in rows {
            let known = problems.count
            let station = parse(row, problems: &problems)
            if station == nil, !row.reported, problems.count == known {
                // Never drop a row silently: every row that makes no station says why.
                problems.add(
                    "this station cannot be read", line: row.line, column: row.column, keyPath: row.element ?? "")
            }
            parsed.append((row, station))
        }
        let stations = parsed.compactMap(\.station)
        if stations.isEmpty, problems.isEmpty {
            problems.add("holds no stations", line: 0, column: 0)
        }
        checkUniqueness(parsed, problems: &problems)
        return stations
    }

    /// A row before parsing: its cells by column, each with its position.
    struct Row {
        var line: Int
        var cells: [String: (text: String, line: Int, column: Int, keyPath: String)]
        /// True when reading the row already reported a problem with it.
        var reported = false
        /// The cells of the attribute columns, in the list's order, by the column's own name.
        var attributes: [(name: String, text: String, line: Int, column: Int, keyPath: String)] = []
        /// A JSON list's element (`[3]`): its rows may share a line.
        var element: String? = nil
        /// Where the JSON element begins on its line; 1 for a CSV row.
        var column = 1

        /// Where the row is, for a message about another row (`Station.place`).
        var place: String { Station.place(line: line, element: element) }
    }

    /// The known column `name` is a typo of, or `nil`: one letter left out or added, or two
    /// neighbours swapped, in any case (`mjor`, `nmae`, `uuuid`). A changed letter is no typo here —
    /// `tower`, `node` and `mayor` are words of their own — and neither is a plural, but for the
    /// identity's columns (`minors` is no place's attribute; `notes` may be).
    public static func typoOf(_ name: String) -> String? {
        let lower = Array(name.lowercased())
        return columns.first { known in
            let column = Array(known)
            if lower == column { return false }
            if lower == column + ["s"] { return requiredColumns.contains(known) }
            return isSlip(lower, of: column)
        }
    }

    /// Whether `a` is `b` with one character left out or added, or two neighbours swapped.
    static func isSlip(_ a: [Character], of b: [Character]) -> Bool {
        if a.count == b.count {
            let differ = a.indices.filter { a[$0] != b[$0] }
            return differ.count == 2 && differ[1] == differ[0] + 1 && a[differ[0]] == b[differ[1]]
                && a[differ[1]] == b[differ[0]]
        }
        let (long, short) = a.count > b.count ? (a, b) : (b, a)
        guard long.count == short.count + 1 else { return false }
        let start = zip(long, short).prefix { $0 == $1 }.count
        return Array(long[(start + 1)...]) == Array(short[start...])
    }

    /// What is wrong with `name` as an attribute column, or `nil`: it must be visible text of at
    /// most 100 characters that no spreadsheet takes for a formula, and no typo of a known column.
    public static func attributeNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "a column without a name; name it or remove it" }
        if let hidden = HiddenCharacters.describeFirst(in: name, allowingTab: false) {
            return "a column name holds \(hidden)"
        }
        if let tooLong = lengthProblem(name, limit: maximumNameLength, what: "column name") { return tooLong }
        if let typo = typoOf(name) {
            return
                "unknown column '\(name.excerpt())' — '\(typo)' misspelt? (the columns are \(columns.joined(separator: ", ")); any other is kept as the stations' attribute)"
        }
        if Registry.reservedNames.contains(name.lowercased()) {
            return
                "column '\(name.excerpt())' is a field of the registry 'ledger export' writes; name the attribute otherwise (say 'place \(name.excerpt())')"
        }
        if CSVCell.beginsAsFormula(name) {
            return "column '\(name.excerpt())' begins as a spreadsheet formula does (=, +, -, @, a tab)"
        }
        return nil
    }

    /// What is wrong with an attribute's value, or `nil`: visible text (tabs allowed) of at most
    /// 1000 characters; one that begins as a spreadsheet formula does (`=`, `+`, `-`, `@`) must be
    /// a number (`-12.5`), so that the registry can be written without changing it.
    public static func attributeValueProblem(_ value: String) -> String? {
        if let hidden = HiddenCharacters.describeFirst(in: value, allowingTab: true) {
            return
                "holds \(hidden); attributes may hold tabs but no other control character, line break or invisible character"
        }
        if let tooLong = lengthProblem(value, limit: maximumNoteLength, what: "value") { return tooLong }
        if CSVCell.beginsAsFormula(value), !CSVCell.isPlainNumber(value) {
            return
                "'\(value.excerpt())' begins as a spreadsheet formula does (=, +, -, @, a tab); only a plain number may (-12.5)"
        }
        return nil
    }

    /// The rows of a CSV list whose header must name `required` (a places file names only `name`).
    static func csvRows(
        _ bytes: [UInt8], problems: inout ListProblems, requiring required: [String] = requiredColumns
    ) -> [Row] {
        let table: [[CSVField]]
        do { table = try CSVTable.parse(bytes, file: problems.file) } catch {
            problems.append(error)
            return []
        }
        guard let header = table.first else { return [] }
        var names: [String] = []
        var seen: Set<String> = []
        // Attribute columns by index, with their own spelling.
        var attributeColumns: [Int: String] = [:]
        for (index, field) in header.enumerated() {
            let name = field.text.lowercased()
            if !seen.insert(name).inserted {
                problems.add("column '\(field.text.excerpt())' appears twice", line: field.line, column: field.column)
            } else if !columns.contains(name) {
                if let problem = attributeNameProblem(field.text) {
                    problems.add(problem, line: field.line, column: field.column)
                } else {
                    attributeColumns[index] = field.text
                }
            }
            names.append(name)
        }
        let missing = required.filter { !names.contains($0) }
        if !missing.isEmpty {
            problems.add(
                "the header row lacks \(missing.joined(separator: ", ")); it must name name,uuid,major,minor[,power][,address][,note]",
                line: header[0].line, column: 1)
            return []
        }
        return table.dropFirst().compactMap { fields -> Row? in
            guard let first = fields.first else { return nil }
            let known = problems.count
            // Too many fields is an error; too few only when a required column is left out
            // (spreadsheets may drop empty trailing optional cells).
            let lacksRequired = names.dropFirst(fields.count).contains { required.contains($0) }
            if fields.count > names.count || lacksRequired {
                let at = fields.count > names.count ? fields[names.count] : fields[fields.count - 1]
                problems.add(
                    "this row has \(fields.count) fields, the header has \(names.count)", line: at.line,
                    column: at.column)
            }
            var cells: [String: (String, Int, Int, String)] = [:]
            var attributes: [(String, String, Int, Int, String)] = []
            for (index, name) in names.enumerated() {
                // A short row (a spreadsheet drops empty trailing cells) has empty attributes there.
                let field = index < fields.count ? fields[index] : nil
                if let attribute = attributeColumns[index] {
                    attributes.append(
                        (attribute, field?.text ?? "", field?.line ?? first.line, field?.column ?? 1, attribute))
                } else if let field, columns.contains(name) {
                    cells[name] = (field.text, field.line, field.column, name)
                }
            }
            return Row(line: first.line, cells: cells, reported: problems.count > known, attributes: attributes)
        }
    }

    static func jsonRows(_ bytes: [UInt8], problems: inout ListProblems) -> [Row] {
        let root: JSONNode
        do { root = try JSONParser.parse(bytes, file: problems.file) } catch {
            problems.append(error)
            return []
        }
        guard case .array(let elements) = root.value else {
            problems.add(
                "expected an array of stations ([{\"name\": …, \"uuid\": …, \"major\": …, \"minor\": …}, …]), found \(root.kindDescription)",
                line: root.line, column: root.column)
            return []
        }
        var rows: [Row] = []
        for (index, element) in elements.enumerated() {
            let path = "[\(index)]"
            guard case .object(let members) = element.value else {
                problems.add(
                    "expected an object with name, uuid, major, minor, found \(element.kindDescription)",
                    line: element.line, column: element.column, keyPath: path)
                continue
            }
            let known = problems.count
            var cells: [String: (String, Int, Int, String)] = [:]
            var attributes: [(String, String, Int, Int, String)] = []
            var seen: Set<String> = []
            for var member in members {
                // Keys are read without case, as CSV headers are: `UUID` is `uuid`, twice is an error.
                guard seen.insert(member.key.lowercased()).inserted else {
                    problems.add(
                        "key '\(member.key.excerpt())' appears twice (keys are read without regard to case)",
                        line: member.value.line, column: member.value.column, keyPath: "\(path).\(member.key.excerpt())"
                    )
                    continue
                }
                if columns.contains(member.key.lowercased()) { member.key = member.key.lowercased() }
                guard columns.contains(member.key) else {
                    // The key is quoted short: it may be of any length.
                    let keyPath = "\(path).\(member.key.excerpt())"
                    if let problem = attributeNameProblem(member.key) {
                        problems.add(problem, line: member.value.line, column: member.value.column, keyPath: keyPath)
                        continue
                    }
                    // Any other key is an attribute: text, or a number as written.
                    switch member.value.value {
                    case .string(let text), .number(let text):
                        attributes.append((member.key, text, member.value.line, member.value.column, keyPath))
                    case .null: continue
                    default:
                        problems.add(
                            "an attribute must be a string or a number, found \(member.value.kindDescription)",
                            line: member.value.line, column: member.value.column, keyPath: keyPath)
                    }
                    continue
                }
                let keyPath = "\(path).\(member.key)"
                let isText = textColumns.contains(member.key)
                switch member.value.value {
                case .string(let text):
                    cells[member.key] = (text, member.value.line, member.value.column, keyPath)
                case .number(let text) where !isText:
                    cells[member.key] = (text, member.value.line, member.value.column, keyPath)
                case .null where !requiredColumns.contains(member.key):
                    continue  // an optional value left out
                default:
                    problems.add(
                        "expected \(isText ? "a string" : "a string or a number"), found \(member.value.kindDescription)",
                        line: member.value.line, column: member.value.column, keyPath: keyPath)
                }
            }
            for key in requiredColumns where !members.contains(where: { $0.key.lowercased() == key }) {
                problems.add("is missing", line: element.line, column: element.column, keyPath: "\(path).\(key)")
            }
            rows.append(
                Row(
                    line: element.line, cells: cells, reported: problems.count > known, attributes: attributes,
                    element: path, column: element.column))
        }
        return rows
    }

    static func parse(_ row: Row, problems: inout ListProblems) -> Station? {
        var failed = false
        func report(_ column: String, _ message: String) {
            let cell = row.cells[column]
            problems.add(
                message, line: cell?.line ?? row.line, column: cell?.column ?? row.column,
                keyPath: cell?.keyPath ?? column)
            failed = true
        }
        // Each field is parsed on its own, so a row with three mistakes reports three.
        func value<T>(_ column: String, _ parse: (String) throws(IdentityError) -> T) -> T? {
            guard let cell = row.cells[column] else {
                failed = true  // a missing column or key is reported where the row is read
                return nil
            }
            do {
                return try parse(cell.text)
            } catch {
                report(column, "'\(error.input.excerpt())' \(error.problem); allowed: \(error.allowed)")
                return nil
            }
        }
        let name = row.cells["name"]?.text ?? ""
        if row.cells["name"] == nil {
            failed = true
        } else if let problem = nameProblem(name) {
            report("name", problem)
        }
        if let note = row.cells["note"]?.text {
            if let hidden = HiddenCharacters.describeFirst(in: note, allowingTab: true) {
                report(
                    "note",
                    "holds \(hidden); notes may hold tabs but no other control character, line break or invisible character"
                )
            } else if let tooLong = lengthProblem(note, limit: maximumNoteLength, what: "note") {
                report("note", tooLong)
            }
        }
        let uuid = value("uuid") { text throws(IdentityError) in try IdentityParser.uuid(text) }
        let major = value("major") { text throws(IdentityError) in try IdentityParser.uint16(text, field: .major) }
        let minor = value("minor") { text throws(IdentityError) in try IdentityParser.uint16(text, field: .minor) }
        var power = IBeacon.defaultMeasuredPower
        var powerOrigin: MeasuredPowerOrigin?
        if let text = row.cells["power"]?.text, !text.isEmpty {
            power = value("power") { text throws(IdentityError) in try IdentityParser.dBm(text) } ?? power
            powerOrigin = .list
        }
        var address: RandomStaticAddress?
        if let text = row.cells["address"]?.text, !text.isEmpty {
            do { address = try RandomStaticAddress(parsing: text) } catch { report("address", error.description) }
        }
        var attributes: [StationAttribute] = []
        for cell in row.attributes {
            if let problem = attributeValueProblem(cell.text) {
                problems.add(problem, line: cell.line, column: cell.column, keyPath: cell.keyPath)
                failed = true
            }
            attributes.append(StationAttribute(name: cell.name, value: cell.text))
        }
        guard !failed, let uuid, let major, let minor else { return nil }
        let note = row.cells["note"]?.text
        var station = Station(
            name: name, identity: IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: power),
            note: note?.isEmpty == true ? nil : note, address: address, line: row.line, powerOrigin: powerOrigin)
        station.attributes = attributes
        station.element = row.element
        station.column = row.column
        return station
    }

    /// The longest name a station may have, in characters (and four times as many UTF-8 bytes):
    /// enough for any label, and the length of the file names made from it.
    public static let maximumNameLength = 100
    /// The longest note, in characters (and four times as many UTF-8 bytes).
    public static let maximumNoteLength = 1000

    /// What is wrong with `name` as a station's name, in words, or `nil` when it is a good one: the
    /// list policy (docs/untrusted-input.md), also used by `ledger check` on names another program
    /// wrote. A name quoted in the words is made visible; one too long or holding a hidden
    /// character is not quoted at all.
    public static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "is empty; every station needs a name" }
        if let hidden = HiddenCharacters.describeFirst(in: name, allowingTab: false) {
            return
                "holds \(hidden); names may hold no control character, line break or invisible character (bidirectional controls among them)"
        }
        if let tooLong = lengthProblem(name, limit: maximumNameLength, what: "name") {
            return tooLong + " (put the rest in the note)"
        }
        if name.first?.isWhitespace == true || name.last?.isWhitespace == true {
            return "'\(name)' begins or ends with a space; remove it (it would make two names look alike)"
        }
        let scalars = Array(name.unicodeScalars)
        if let index = scalars.indices.dropFirst().first(where: {
            scalars[$0].properties.isWhitespace && scalars[$0 - 1].properties.isWhitespace
        }) {
            return
                "'\(name)' has two spaces in a row at character \(index); use one (two look like one, and a long run of them can push text onto a line of its own)"
        }
        if let first = name.unicodeScalars.first, "=+-@".unicodeScalars.contains(first) {
            return
                "'\(name)' begins with '\(first)', which a spreadsheet opening the registry takes for a formula; begin it with a letter or digit"
        }
        if !name.unicodeScalars.contains(where: {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))
        }) {
            return
                "'\(name)' has no ASCII letter or digit to make a file name from (station files are named in ASCII, which every flasher opens); add one"
        }
        return nil
    }

    /// `is 10000 characters long; a name may have at most 100 characters and 400 bytes` when
    /// `text` has more than `limit` characters or `limit` × 4 UTF-8 bytes (bytes too: one
    /// character may carry any number of combining marks); `nil` when it fits.
    static func lengthProblem(_ text: String, limit: Int, what: String) -> String? {
        let size =
            text.count > limit
            ? "is \(text.count) characters long"
            : text.utf8.count > limit * 4 ? "takes \(text.utf8.count) bytes in UTF-8" : nil
        return size.map { "\($0); a \(what) may have at most \(limit) characters and \(limit * 4) bytes" }
    }

    /// `parsed`: each row with the station it made, in order (several share a line in a JSON list
    /// on one). Names and file names are claimed by every row with a valid name, also one that failed
    /// otherwise (a later row of its name is told now, not once it is mended); identities and
    /// addresses by the stations made.
    static func checkUniqueness(_ parsed: [(row: Row, station: Station?)], problems: inout ListProblems) {
        var names = FirstClaims<String, (name: String, place: String)>()
        var stems = FirstClaims<String, (name: String, place: String)>()
        var identities = FirstClaims<String, (name: String, place: String)>()
        var addresses = FirstClaims<RandomStaticAddress, (name: String, place: String)>()
        for (row, station) in parsed {
            // A station's name passed `nameProblem` when it was parsed; only a failed row's is asked.
            if let nameCell = row.cells["name"], station != nil || nameProblem(nameCell.text) == nil {
                let name = nameCell.text
                let stem = Station.fileStem(for: name)
                let claimant = (name: name, place: row.place)
                let sameName = names.claim(name, by: claimant)
                let sameStem = stems.claim(stem.lowercased(), by: claimant)
                if let earlier = sameName {
                    problems.add(
                        "station '\(name)' is already on \(earlier.place); names must be unique",
                        line: nameCell.line, column: nameCell.column, keyPath: nameCell.keyPath)
                } else if let earlier = sameStem {
                    problems.add(
                        "'\(name)' and '\(earlier.name)' (\(earlier.place)) would share the file name \(stem); rename one",
                        line: nameCell.line, column: nameCell.column, keyPath: nameCell.keyPath)
                }
            }
            guard let station else { continue }
            let claimant = (name: station.name, place: row.place)
            let key = "\(station.identity.uuid.uuidString)/\(station.identity.major)/\(station.identity.minor)"
            if let earlier = identities.claim(key, by: claimant) {
                // Pointed at by its UUID, where the row has one (a JSON list may be one line).
                let cell = row.cells["uuid"]
                problems.add(
                    "station '\(station.name)' has the same UUID, major and minor as '\(earlier.name)' on \(earlier.place); scanners could not tell them apart",
                    line: cell?.line ?? station.line, column: cell?.column ?? station.column,
                    keyPath: cell?.keyPath ?? "")
            }
            if let address = station.address, let earlier = addresses.claim(address, by: claimant) {
                let cell = row.cells["address"]
                problems.add(
                    "station '\(station.name)' has the same address \(address) as '\(earlier.name)' on \(earlier.place); every beacon needs its own",
                    line: cell?.line ?? station.line, column: cell?.column ?? station.column,
                    keyPath: cell?.keyPath ?? "address")
            }
        }
    }
}

/// The first to claim each key (a name, an identity, an address): a later claim is answered
/// with the one that came first, for a message that names both.
struct FirstClaims<Key: Hashable, Claimant> {
    private var owners: [Key: Claimant] = [:]

    /// `claimant`'s claim on `key`: `nil` when it is the first, else the one that was.
    mutating func claim(_ key: Key, by claimant: Claimant) -> Claimant? {
        if let earlier = owners[key] { return earlier }
        owners[key] = claimant
        return nil
    }
}

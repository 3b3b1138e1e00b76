public import StructuredText

/// Sets one station's measured power in a CSV station list and changes nothing else: the power
/// cell's bytes are replaced, every other byte of the file stays as it was. A list without a
/// power column gets one at the end of each row — empty for the other stations, which keeps
/// their power as it was (the board's figure) — and only those row ends change.
public enum ListPowerEdit {
    /// The list with the new power, and what changed.
    public struct Edited: Sendable, Equatable {
        /// The whole new file.
        public var bytes: [UInt8]
        /// A power column was added.
        public var addedColumn: Bool
        /// The station's power cell as it was (trimmed), `nil` when there was no column.
        public var previous: String?
        /// The station's line.
        public var line: Int
    }

    /// `bytes` (a station list as CSV) with `station`'s power set to `power`. A list that is JSON,
    /// or has no row of that name, is refused; `file` names it in errors.
    public static func settingPower(_ power: Int, of station: String, inCSV bytes: [UInt8], file: String)
        throws(DataFileError) -> Edited
    {
        let first = StationListReader.firstSignificantByte(bytes)
        guard first != UInt8(ascii: "["), first != UInt8(ascii: "{") else {
            throw DataFileError(
                file: file, line: 1, column: 1,
                message: "is a JSON list; calibrate --write sets the power column of a CSV list only")
        }
        let rows = try CSVTable.parse(bytes, file: file)
        guard let header = rows.first,
            let nameColumn = header.firstIndex(where: { $0.text.lowercased() == "name" })
        else {
            throw DataFileError(file: file, line: 1, column: 1, message: "has no header row naming a name column")
        }
        let powerColumn = header.firstIndex { $0.text.lowercased() == "power" }
        let matches = rows.dropFirst().filter { nameColumn < $0.count && $0[nameColumn].text == station }
        guard matches.count == 1, let row = matches.first else {
            throw DataFileError(
                file: file, line: 1, column: 1,
                message: matches.isEmpty
                    ? "has no station named '\(station)'"
                    : "has \(matches.count) stations named '\(station)'")
        }
        let text = Array(String(power).utf8)
        var edited = bytes
        // As the list reader reads it: a row may leave out its trailing cells (spreadsheets drop
        // empty ones), which are empty ones; a row with more cells than the header is no row.
        for candidate in rows where candidate.count > header.count {
            throw DataFileError(
                file: file, line: candidate[0].line, column: 1,
                message: "this row has \(candidate.count) fields, the header has \(header.count)")
        }
        let comma = UInt8(ascii: ",")
        if let powerColumn {
            guard powerColumn < row.count else {
                // The cells left out up to the power cell are written out, empty.
                let missing = powerColumn - row.count + 1
                edited.insert(
                    contentsOf: [UInt8](repeating: comma, count: missing) + text,
                    at: row[row.count - 1].bytes.upperBound)
                return Edited(bytes: edited, addedColumn: false, previous: "", line: row[0].line)
            }
            let cell = row[powerColumn]
            edited.replaceSubrange(cell.bytes, with: text)
            return Edited(bytes: edited, addedColumn: false, previous: cell.text, line: row[0].line)
        }
        // Each row gets its cell after its last one (short rows filled out first); from the end,
        // so earlier offsets still hold.
        for candidate in rows.reversed() {
            guard let last = candidate.last else { continue }
            let cell: [UInt8] =
                candidate == header ? Array("power".utf8) : candidate == row ? text : []
            let filler = [UInt8](repeating: comma, count: header.count - candidate.count)
            edited.insert(contentsOf: filler + [comma] + cell, at: last.bytes.upperBound)
        }
        return Edited(bytes: edited, addedColumn: true, previous: nil, line: row[0].line)
    }
}

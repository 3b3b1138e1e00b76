/// One CSV field and where it started.
public struct CSVField: Sendable, Equatable {
    /// The field's text, quotes removed and `""` unescaped.
    public var text: String
    /// 1-based line.
    public var line: Int
    /// 1-based column (in characters of the line).
    public var column: Int
    /// The field's bytes in the file, quotes and surrounding blanks included, up to the comma or
    /// line end after it: what to replace to change this one cell and nothing else.
    public var bytes: Range<Int> = 0..<0

}

/// A CSV file as rows of fields (RFC 4180): comma-separated, fields optionally in double quotes
/// with `""` for a quote, quoted fields may hold commas and line breaks, LF or CRLF line ends.
/// Blank lines are skipped; a UTF-8 byte-order mark at the start (as spreadsheet programs write)
/// is ignored.
public enum CSVTable {
    /// Parses `bytes` (UTF-8) into rows. Errors (an unterminated quote, text after a closing
    /// quote, a quote inside an unquoted field, invalid UTF-8) name line and column; columns count
    /// characters.
    public static func parse(_ bytes: [UInt8], file: String) throws(DataFileError) -> [[CSVField]] {
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), newline: UInt8 = 0x0A, carriageReturn: UInt8 = 0x0D
        var offset = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        // Found first, reported when the scan reaches it: the scan knows its line and column.
        let invalidByte = UTF8Validation.firstInvalidByte(in: bytes, from: offset)
        var rows: [[CSVField]] = []
        var row: [CSVField] = []
        var field: [UInt8] = []
        var fieldLine = 1
        var fieldColumn = 1
        var fieldStart = offset
        var line = 1
        var column = 1
        var inQuotes = false
        var quoted = false
        var afterClosingQuote = false
        var rowHasContent = false

        func endField(_ end: Int) {
            let text = String(decoding: field, as: UTF8.self)
            row.append(
                CSVField(
                    text: quoted ? text : trimmed(text), line: fieldLine, column: fieldColumn,
                    bytes: fieldStart..<end))
            field.removeAll(keepingCapacity: true)
            quoted = false
            afterClosingQuote = false
        }
        func endRow(_ end: Int) {
            if rowHasContent || quoted {
                endField(end)
                rows.append(row)
            }
            row = []
            rowHasContent = false
            field.removeAll(keepingCapacity: true)
            quoted = false
            afterClosingQuote = false
        }
        func error(_ message: String) -> DataFileError {
            DataFileError(file: file, line: line, column: column, message: message)
        }

        while offset < bytes.count {
            if offset == invalidByte { throw error(UTF8Validation.message(bytes[offset])) }
            let byte = bytes[offset]
            offset += 1
            // Columns count characters: UTF-8 continuation bytes do not advance them.
            let advances = byte & 0xC0 != 0x80
            if inQuotes {
                if byte == quote {
                    if offset < bytes.count, bytes[offset] == quote {
                        field.append(quote)
                        offset += 1
                        column += 2
                        continue
                    }
                    inQuotes = false
                    afterClosingQuote = true
                    column += 1
                    continue
                }
                field.append(byte)
                if byte == newline || (byte == carriageReturn && (offset == bytes.count || bytes[offset] != newline)) {
                    line += 1
                    column = 1
                } else if advances {
                    column += 1
                }
                continue
            }
            switch byte {
            case comma:
                endField(offset - 1)
                fieldStart = offset
                rowHasContent = true
                column += 1
                fieldLine = line
                fieldColumn = column
            case newline, carriageReturn:
                let end = offset - 1
                if byte == carriageReturn, offset < bytes.count, bytes[offset] == newline { offset += 1 }
                endRow(end)
                fieldStart = offset
                line += 1
                column = 1
                fieldLine = line
                fieldColumn = 1
            case quote where !afterClosingQuote && field.allSatisfy({ $0 == 0x20 || $0 == 0x09 }):
                inQuotes = true
                quoted = true
                field.removeAll(keepingCapacity: true)
                rowHasContent = true
                column += 1
            default:
                let blank = byte == 0x20 || byte == 0x09
                if afterClosingQuote, !blank {
                    throw error("text after a closing quote; put the whole field in quotes and double any quote inside")
                }
                if byte == quote {
                    throw error("a quote inside an unquoted field; put the field in quotes and write the quote as \"\"")
                }
                if !afterClosingQuote { field.append(byte) }
                if !blank { rowHasContent = true }
                if advances { column += 1 }
            }
        }
        if inQuotes {
            throw DataFileError(
                file: file, line: fieldLine, column: fieldColumn,
                message: "this quoted field is never closed; add the closing quote")
        }
        endRow(bytes.count)
        return rows
    }

    /// `text` without leading and trailing spaces and tabs (how cells are read).
    public static func trimmed(_ text: String) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

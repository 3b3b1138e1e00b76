/// One CSV field and where it started.
public struct CSVField: Sendable, Equatable {
    /// The field's text, quotes removed and `""` unescaped.
    public var text: String
    /// 1-based line.
    public var line: Int
    /// 1-based column (in characters of the line).
    public var column: Int

    /// Creates a field.
    public init(text: String, line: Int, column: Int) {
        self.text = text
        self.line = line
        self.column = column
    }
}

/// A CSV file as rows of fields (RFC 4180): comma-separated, fields optionally in double quotes
/// with `""` for a quote, quoted fields may hold commas and line breaks, LF or CRLF line ends.
/// Blank lines are skipped; a UTF-8 byte-order mark at the start (as spreadsheet programs write)
/// is ignored.
public enum CSVTable {
    /// Parses `text` into rows. Errors (an unterminated quote, text after a closing quote) name
    /// line and column.
    public static func parse(_ bytes: [UInt8], file: String) throws(DataFileError) -> [[CSVField]] {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        var rows: [[CSVField]] = []
        var row: [CSVField] = []
        var field = ""
        var fieldLine = 1
        var fieldColumn = 1
        var line = 1
        var column = 1
        var inQuotes = false
        var quoted = false
        var afterClosingQuote = false
        var rowHasContent = false

        func endField() {
            row.append(CSVField(text: quoted ? field : trimmed(field), line: fieldLine, column: fieldColumn))
            field = ""
            quoted = false
            afterClosingQuote = false
        }

        var iterator = text.makeIterator()
        var pending: Character? = iterator.next()
        while let character = pending {
            pending = iterator.next()
            if inQuotes {
                if character == "\"" {
                    if pending == "\"" {
                        field.append("\"")
                        pending = iterator.next()
                        column += 2
                        continue
                    }
                    inQuotes = false
                    afterClosingQuote = true
                    column += 1
                    continue
                }
                field.append(character)
                if character == "\n" || character == "\r\n" {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
                continue
            }
            switch character {
            case ",":
                endField()
                rowHasContent = true
                column += 1
                fieldLine = line
                fieldColumn = column
            case "\n", "\r\n", "\r":
                if rowHasContent || quoted {
                    endField()
                    rows.append(row)
                }
                row = []
                rowHasContent = false
                field = ""
                quoted = false
                afterClosingQuote = false
                line += 1
                column = 1
                fieldLine = line
                fieldColumn = 1
            case "\"" where field.allSatisfy({ $0 == " " || $0 == "\t" }) && !afterClosingQuote:
                inQuotes = true
                quoted = true
                field = ""
                rowHasContent = true
                column += 1
            default:
                if afterClosingQuote, character != " ", character != "\t" {
                    throw DataFileError(
                        file: file, line: line, column: column,
                        message: "text after a closing quote; put the whole field in quotes and double any quote inside"
                    )
                }
                if character == "\"" {
                    throw DataFileError(
                        file: file, line: line, column: column,
                        message: "a quote inside an unquoted field; put the field in quotes and write the quote as \"\""
                    )
                }
                if !afterClosingQuote { field.append(character) }
                if character != " ", character != "\t" { rowHasContent = true }
                column += 1
            }
        }
        if inQuotes {
            throw DataFileError(
                file: file, line: fieldLine, column: fieldColumn,
                message: "this quoted field is never closed; add the closing quote")
        }
        if rowHasContent || quoted {
            endField()
            rows.append(row)
        }
        return rows
    }

    static func trimmed(_ text: String) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

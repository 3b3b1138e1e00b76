/// The cells of the CSV ccbeacon writes (`ledger export`): one encoder, used for every cell, so no
/// column can forget a case. Text is quoted as RFC 4180 says (a cell holding `,`, `"`, a line
/// break, a carriage return, a `;` or a tab is enclosed in quotes, its quotes doubled), and text a spreadsheet
/// would run as a formula is neutralised as OWASP recommends: a text cell beginning with `=`, `+`,
/// `-`, `@`, a tab or a carriage return gets a leading `'`. Numbers are written as they are, so
/// numeric columns stay numeric (a measured power of -59 is a number, not a formula).
public enum CSVCell {
    /// The characters that make a spreadsheet read a cell as a formula.
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// A text cell.
    public static func text(_ value: String) -> String {
        var cell = value
        if let first = cell.unicodeScalars.first, formulaStarts.contains(first) { cell = "'" + cell }
        // `;` and tab too: a spreadsheet in a locale that separates cells with them would otherwise
        // split the cell, and a formula could begin a piece of it.
        guard
            cell.unicodeScalars.contains(where: {
                $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == ";" || $0 == "\t"
            })
        else {
            return cell
        }
        return "\"" + cell.replacing("\"", with: "\"\"") + "\""
    }

    /// A cell of text that may be a number (an attribute: `-12.5`, `Room 201`): a number as it is
    /// written, so that it reads back the same; any other text as `text` writes it.
    public static func value(_ value: String) -> String {
        Double(value) != nil && !value.contains(where: { $0.isWhitespace }) ? value : text(value)
    }

    /// A cell exactly as given, quoted only where CSV needs it (a comma, a quote, a line break): for
    /// files ccbeacon reads back, which must read back what was written.
    public static func verbatim(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else {
            return value
        }
        return "\"" + value.replacing("\"", with: "\"\"") + "\""
    }

    /// A number cell.
    public static func number(_ value: some BinaryInteger) -> String { String(value) }
}

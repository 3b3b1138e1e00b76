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

    /// Whether a spreadsheet takes `value` for a formula: it begins with one of `formulaStarts`.
    public static func beginsAsFormula(_ value: String) -> Bool {
        value.unicodeScalars.first.map(formulaStarts.contains) ?? false
    }

    /// Whether `value` is a plain decimal number — an optional sign, digits with an optional
    /// fraction, an optional exponent (`-12.5`, `+3`, `1e3`) — which a spreadsheet reads as that
    /// number even though it may begin with `-` or `+` (`nan`, `inf` and hex are not).
    public static func isPlainNumber(_ value: String) -> Bool {
        var scalars = Substring(value).unicodeScalars[...]
        func digits() -> Int {
            let count = scalars.prefix { ("0"..."9").contains($0) }.count
            scalars = scalars.dropFirst(count)
            return count
        }
        if let sign = scalars.first, sign == "-" || sign == "+" { scalars = scalars.dropFirst() }
        var mantissa = digits()
        if scalars.first == "." {
            scalars = scalars.dropFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let e = scalars.first, e == "e" || e == "E" {
            scalars = scalars.dropFirst()
            if let sign = scalars.first, sign == "-" || sign == "+" { scalars = scalars.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return scalars.isEmpty
    }

    /// A cell of text that may be a number (an attribute: `-12.5`, `Room 201`): a plain number as
    /// it is written, so that it reads back the same; any other text as `text` writes it.
    public static func value(_ value: String) -> String { isPlainNumber(value) ? value : text(value) }

    /// A cell exactly as given, quoted only where CSV needs it (a comma, a quote, a line break —
    /// and a semicolon or a tab, which some locales split on): for
    /// files ccbeacon reads back, which must read back what was written.
    public static func verbatim(_ value: String) -> String {
        // Spaces and tabs at either end are kept only inside quotes (a reader trims a bare cell).
        let edges: Set<Unicode.Scalar> = [" ", "\t"]
        guard
            value.unicodeScalars.contains(where: { [",", "\"", "\n", "\r", ";", "\t"].contains($0) })
                || value.unicodeScalars.first.map(edges.contains) == true
                || value.unicodeScalars.last.map(edges.contains) == true
        else {
            return value
        }
        return "\"" + value.replacing("\"", with: "\"\"") + "\""
    }

    /// A number cell.
    public static func number(_ value: some BinaryInteger) -> String { String(value) }
}

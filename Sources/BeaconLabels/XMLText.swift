import StructuredText

/// Text from outside (station names, anything a list or ledger holds) made safe for the SVG
/// ccbeacon writes: the one escaper every text node and attribute value goes through, so no
/// call site can forget a case.
public enum XMLText {
    /// `text` for an XML 1.0 text node or a quoted attribute value: first made visible
    /// (`visible`), then `&`, `<`, `>`, `"` and `'` written as character references, so that
    /// nothing in it can end the element or attribute it stands in, or start another.
    public static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in visible(text).unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` with every character that would not show on a label written as a visible escape
    /// (`VisibleText.escaped`: controls as `\x1b`, line separators, invisible format characters —
    /// the bidirectional controls among them — and non-characters as `\u{202E}`). XML 1.0 forbids
    /// most C0 controls outright, and a text node collapses the rest.
    public static func visible(_ text: String) -> String { VisibleText.escaped(text) }
}

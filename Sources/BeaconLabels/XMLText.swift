import HexText

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

    /// `text` with every character that would not show on a label written as a visible escape:
    /// C0 controls and DEL as `\x1b` (XML 1.0 forbids most C0 controls outright; tab, line feed
    /// and carriage return it allows but a text node collapses them), C1 controls, the line and
    /// paragraph separators, the bidirectional controls (which could make a name read
    /// backwards) and the non-characters U+FFFE and U+FFFF (which XML 1.0 forbids) as `\u{FFFE}`.
    /// A text of visible characters is returned as it is, so applying it twice changes nothing.
    public static func visible(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x20 || value == 0x7F {
                result += "\\x" + HexText.digits(value, width: 2).lowercased()
            } else if (0x80...0x9F).contains(value) || value == 0x2028 || value == 0x2029 || value == 0xFFFE
                || value == 0xFFFF || scalar.properties.isBidiControl
            {
                result += "\\u{" + HexText.digits(value, width: 4) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// Text from outside made visible: every character that would not show, or would act on a
/// terminal or a document instead of being read (`HiddenCharacters`), written as a visible
/// escape. One function, used by every sink that must never pass such characters on (the
/// terminal's output and diagnostics, the labels).
public enum VisibleText {
    /// `text` with C0 controls and DEL as `\x1b`, and every other hidden character
    /// (`HiddenCharacters`: C1 controls, line and paragraph separators, invisible format
    /// characters such as the bidirectional controls, private-use and non-characters) as
    /// `\u{202E}`. A text of visible characters is returned as it is, so applying it twice
    /// changes nothing.
    public static func escaped(_ text: String) -> String {
        escaped(text, keeping: [])
    }

    /// `text` made of lines (each ending in a line feed, which is kept), each escaped.
    public static func escapedLines(_ text: String) -> String {
        escaped(text, keeping: ["\n"])
    }

    /// A document (CSV, JSON, HEX, C, a script) made safe to show on a terminal: escaped as
    /// `escaped` says, keeping line feeds, tabs and a carriage return that ends a line — the
    /// only controls a document's layout needs, none of which can rewrite what was shown.
    public static func escapedDocument(_ text: String) -> String {
        escaped(text, keeping: ["\n", "\t", "\r\n"])
    }

    /// `text.excerpt(limit:)`, escaped: a value of any length quoted short where it is shown.
    public static func excerpt(_ text: String, limit: Int = 40) -> String {
        escaped(text.excerpt(limit: limit))
    }

    /// `text` escaped, with the controls in `keeping` (`"\n"`, `"\t"`, `"\r\n"`: a carriage
    /// return only when a line feed follows it) left as they are.
    static func escaped(_ text: String, keeping: Set<String>) -> String {
        // Most text holds nothing hidden: known in one pass, returned uncopied.
        guard text.unicodeScalars.contains(where: HiddenCharacters.isHidden) else { return text }
        let scalars = Array(text.unicodeScalars)
        let first = scalars.firstIndex(where: HiddenCharacters.isHidden) ?? scalars.count
        var result = String(String.UnicodeScalarView(scalars[..<first]))
        for index in first..<scalars.count {
            let scalar = scalars[index]
            let value = scalar.value
            let kept =
                (value == 0x0A && keeping.contains("\n")) || (value == 0x09 && keeping.contains("\t"))
                || (value == 0x0D && keeping.contains("\r\n") && index + 1 < scalars.count
                    && scalars[index + 1] == "\n")
            if kept || !HiddenCharacters.isHidden(scalar) {
                result.unicodeScalars.append(scalar)
            } else if value < 0x20 || value == 0x7F {
                result += "\\x" + hex(value, width: 2).lowercased()
            } else {
                result += "\\u{" + hex(value, width: 4) + "}"
            }
        }
        return result
    }

    static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

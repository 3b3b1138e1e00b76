/// Text from outside made visible: every character that would not show, or would act on a
/// terminal or a document instead of being read, written as a visible escape. One function,
/// used by every encoder that must never pass such characters on (the terminal's, the labels').
public enum VisibleText {
    /// `text` with C0 controls and DEL as `\x1b`, and C1 controls, the line and paragraph
    /// separators, invisible format characters (category Cf: the bidirectional controls, which
    /// could make a name read backwards, zero-width characters) and the non-characters U+FFFE and
    /// U+FFFF as `\u{202E}`. A text of visible characters is returned as it is, so applying it
    /// twice changes nothing.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x20 || value == 0x7F {
                result += "\\x" + hex(value, width: 2).lowercased()
            } else if needsEscape(scalar) {
                result += "\\u{" + hex(value, width: 4) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` made of lines (each ending in a line feed, which is kept), each escaped.
    public static func escapedLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }
            .joined(separator: "\n")
    }

    /// Whether `scalar` is written as an escape.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
            || value == 0xFFFE || value == 0xFFFF || scalar.properties.generalCategory == .format
    }

    static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

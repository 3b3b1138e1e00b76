/// The one judgement of which characters in text from outside would not show as themselves: the
/// terminal's escaper (`VisibleText`), the JSON writer, the labels, the live status and the
/// station lists' input policy all ask it, so what a list may not hold is exactly what every
/// output escapes.
///
/// The rule is context-free — a character is hidden or not wherever it stands: every control
/// (C0, DEL, C1) and format character (category Cf: the bidirectional controls, zero-width space,
/// joiner and non-joiner, the byte-order mark, tag characters), the line and paragraph
/// separators, every default-ignorable code point (variation selectors, the soft hyphen, the
/// combining grapheme joiner, Hangul fillers), the braille blank U+2800, private-use characters
/// and non-characters. Its known limit: writing that needs a joiner or a selector (an emoji
/// sequence such as 👨‍👩‍👧, the emoji form ❤️, Persian's non-joiner, an Indic half form) is refused
/// in a name and shown escaped elsewhere; look-alikes of other scripts (a Cyrillic "а") pass, as
/// they do in any rule of characters alone.
public enum HiddenCharacters {
    /// Whether `scalar` is hidden (the rule above).
    public static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        // The common case first: printable ASCII is never hidden.
        if value >= 0x20, value < 0x7F { return false }
        if value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029 || value == 0x2800 {
            return true
        }
        let properties = scalar.properties
        return properties.isNoncharacterCodePoint || properties.generalCategory == .privateUse
            || properties.generalCategory == .format || properties.isDefaultIgnorableCodePoint
    }

    /// Whether any character of `text` is hidden.
    public static func any(in text: String) -> Bool {
        text.unicodeScalars.contains(where: isHidden)
    }

    /// The first hidden character of `text`, described with its position (`U+0000 (NUL) at
    /// character 4`); `nil` when there is none: for readers that refuse text from outside holding
    /// one (station names and notes, manifests, board files, records). Such text goes into
    /// ledgers, exports, labels and terminal lines, where these characters cut, break, rewrite or
    /// reorder the line (a right-to-left override makes a name read backwards), or make two texts
    /// look alike. A tab is allowed where `allowingTab` (notes).
    public static func describeFirst(in text: String, allowingTab: Bool) -> String? {
        guard
            let (index, scalar) = text.unicodeScalars.enumerated().first(where: {
                !(allowingTab && $0.element == "\t") && isHidden($0.element)
            })
        else { return nil }
        let value = scalar.value
        let kind: String
        switch scalar.properties.generalCategory {
        case .control: kind = "a control character"
        case .format: kind = "an invisible formatting character"
        case .privateUse: kind = "a private-use character"
        case _ where scalar.properties.isNoncharacterCodePoint: kind = "a non-character"
        case _ where isVariationSelector(value): kind = "a variation selector"
        default: kind = "a character that shows nothing"
        }
        return "U+\(VisibleText.hex(value, width: 4)) (\(names[value] ?? kind)) at character \(index + 1)"
    }

    /// The names `describeFirst` gives the hidden characters a list is most likely to hold.
    static let names: [UInt32: String] = [
        0x00: "NUL", 0x09: "tab", 0x0A: "line feed", 0x0B: "vertical tab", 0x0C: "form feed",
        0x0D: "carriage return", 0x1B: "escape", 0x7F: "delete", 0x85: "next line", 0xAD: "soft hyphen",
        0x34F: "combining grapheme joiner", 0x115F: "Hangul choseong filler", 0x1160: "Hangul jungseong filler",
        0x2028: "line separator", 0x2029: "paragraph separator", 0x200B: "zero-width space",
        0x200C: "zero-width non-joiner", 0x200D: "zero-width joiner", 0x200E: "left-to-right mark",
        0x200F: "right-to-left mark", 0x202A: "left-to-right embedding", 0x202B: "right-to-left embedding",
        0x202C: "pop directional formatting", 0x202D: "left-to-right override", 0x202E: "right-to-left override",
        0x2060: "word joiner", 0x2066: "left-to-right isolate", 0x2067: "right-to-left isolate",
        0x2068: "first strong isolate", 0x2069: "pop directional isolate", 0x2800: "braille blank",
        0x3164: "Hangul filler", 0xFEFF: "zero-width no-break space", 0xFFA0: "halfwidth Hangul filler",
    ]

    /// Whether `value` is a variation selector (U+FE00–U+FE0F, U+E0100–U+E01EF, the Mongolian
    /// free variation selectors), named as such in `describeFirst`.
    static func isVariationSelector(_ value: UInt32) -> Bool {
        (0xFE00...0xFE0F).contains(value) || (0xE0100...0xE01EF).contains(value) || (0x180B...0x180D).contains(value)
            || value == 0x180F
    }
}

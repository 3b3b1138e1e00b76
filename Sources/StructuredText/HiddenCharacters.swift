/// The one judgement of which characters in text from outside would not show as themselves: the
/// terminal's escaper (`VisibleText`), the JSON writer, the labels and the station lists' input
/// policy all ask it, so what a list may not hold is exactly what every output would escape.
///
/// Hidden are: control characters (C0, DEL, C1); the line and paragraph separators; invisible
/// format characters (category Cf — the bidirectional controls, which could make a name read
/// backwards, zero-width spaces, a byte-order mark, tag characters) and the other characters
/// Unicode says show nothing (Default_Ignorable_Code_Point: soft hyphen, the combining grapheme
/// joiner, Hangul fillers); the braille blank U+2800; private-use characters and non-characters.
/// Two exceptions keep real writing intact: the zero-width joiner and non-joiner (U+200D, U+200C)
/// between two visible characters (emoji sequences, Persian, the Indic scripts), and a variation
/// selector right after a visible character (an emoji's presentation). A joiner anywhere else —
/// first, last, beside a space or another invisible character — is hidden, since there it only
/// makes two texts look alike.
public enum HiddenCharacters {
    /// Whether the character at `index` of `scalars` is hidden (the neighbours decide for joiners
    /// and variation selectors).
    public static func isHidden(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        let scalar = scalars[index]
        let value = scalar.value
        // The common case first: printable ASCII is never hidden.
        if value >= 0x20, value < 0x7F { return false }
        if value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029 || value == 0x2800 {
            return true
        }
        let properties = scalar.properties
        if properties.isNoncharacterCodePoint || properties.generalCategory == .privateUse { return true }
        guard properties.generalCategory == .format || properties.isDefaultIgnorableCodePoint else { return false }
        if value == 0x200C || value == 0x200D {
            return
                !(index > 0 && index + 1 < scalars.count && isVisibleBase(scalars[index - 1])
                && isVisibleBase(scalars[index + 1]))
        }
        if isVariationSelector(value) { return !(index > 0 && isVisibleBase(scalars[index - 1])) }
        return true
    }

    /// Whether any character of `text` is hidden.
    public static func any(in text: String) -> Bool {
        firstIndex(in: Array(text.unicodeScalars)) != nil
    }

    /// The index of the first hidden character of `scalars`, if any.
    public static func firstIndex(in scalars: [Unicode.Scalar]) -> Int? {
        scalars.indices.first { isHidden(scalars, at: $0) }
    }

    /// A character a joiner or a variation selector may stand beside: a letter, mark, number,
    /// symbol or punctuation that is itself shown (a variation selector, though invisible, is
    /// part of the emoji before it, so a joiner may follow it).
    static func isVisibleBase(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark,
            .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber, .mathSymbol, .currencySymbol,
            .modifierSymbol, .otherSymbol, .connectorPunctuation, .dashPunctuation, .openPunctuation,
            .closePunctuation, .initialPunctuation, .finalPunctuation, .otherPunctuation:
            break
        default:
            return false
        }
        if scalar.value == 0x2800 || properties.isNoncharacterCodePoint { return false }
        return !properties.isDefaultIgnorableCodePoint || isVariationSelector(scalar.value)
    }

    /// Whether `value` is a variation selector: U+FE00–U+FE0F, U+E0100–U+E01EF or a Mongolian free
    /// variation selector.
    public static func isVariationSelector(_ value: UInt32) -> Bool {
        (0xFE00...0xFE0F).contains(value) || (0xE0100...0xE01EF).contains(value) || (0x180B...0x180D).contains(value)
            || value == 0x180F
    }
}

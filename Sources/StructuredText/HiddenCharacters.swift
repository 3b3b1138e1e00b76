/// The one judgement of which characters in text from outside would not show as themselves: the
/// terminal's escaper (`VisibleText`), the JSON writer, the labels and the station lists' input
/// policy all ask it, so what a list may not hold is exactly what every output would escape.
///
/// Hidden are: control characters (C0, DEL, C1); the line and paragraph separators; invisible
/// format characters (category Cf — the bidirectional controls, which could make a name read
/// backwards, zero-width spaces, a byte-order mark, tag characters) and the other characters
/// Unicode says show nothing (Default_Ignorable_Code_Point: soft hyphen, the combining grapheme
/// joiner, Hangul fillers); the braille blank U+2800; private-use characters and non-characters.
/// Exceptions keep real writing intact, each only where it changes what is shown (anywhere else it
/// would only make two texts look alike): the zero-width joiner and non-joiner (U+200D, U+200C)
/// after a virama (Indic conjuncts, half forms, Malayalam chillu at a word's end) or between a
/// letter and a virama (Bengali ya-phala), between two letters of a joining script (Arabic,
/// Persian, Syriac, N'Ko, Mongolian, Adlam and others) and the joiner after one, and the joiner between two emoji
/// (👨‍👩‍👧, ❤️‍🔥); the emoji presentation selector U+FE0F after an emoji (❤️, ⌚️; a digit, `#`
/// or `*` only before U+20E3), the text one U+FE0E after an emoji shown as emoji by default; the other variation selectors after a character they can vary (an ideograph for
/// U+E0100–U+E01EF, a Mongolian letter for the Mongolian selectors, an ideograph, a non-ASCII
/// mathematical symbol or a Myanmar or Phags-pa letter for U+FE00–U+FE0D).
public enum HiddenCharacters {
    /// Whether the character at `index` of `scalars` is hidden (the neighbours decide for joiners
    /// and variation selectors).
    public static func isHidden(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        let value = scalars[index].value
        guard mayBeHidden(scalars[index]) else { return false }
        if value == 0x200C || value == 0x200D {
            guard index > 0 else { return true }
            // Beside a character that is itself hidden (and escaped), a joiner joins nothing shown;
            // judged so, escaping twice changes nothing. (A selector's judgement looks no further
            // back, so this never recurses.)
            let before = scalars[index - 1]
            if before.properties.isDefaultIgnorableCodePoint,
                !isVariationSelector(before.value) || isHidden(scalars, at: index - 1)
            {
                return true
            }
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            // Before another invisible character (a selector after a joiner is always hidden).
            if let next, next.properties.isDefaultIgnorableCodePoint { return true }
            return !joins(before, next, zeroWidthJoiner: value == 0x200D)
        }
        if isVariationSelector(value) {
            guard index > 0 else { return true }
            return !varies(scalars[index - 1], with: value, next: index + 1 < scalars.count ? scalars[index + 1] : nil)
        }
        return true
    }

    /// Whether a joiner (`zeroWidthJoiner`) or non-joiner between `before` and `after` (`nil` at
    /// the end) changes what is shown: after a virama, before a letter of its script, a space or
    /// the end (an Indic conjunct, half form or chillu, an explicit virama); between a letter and a
    /// virama (Bengali ya-phala); between two letters of a joining script, or for the joiner after
    /// one (a joining form); for the joiner, between two emoji (`before` may be an emoji's
    /// presentation selector or skin tone).
    static func joins(_ before: Unicode.Scalar, _ after: Unicode.Scalar?, zeroWidthJoiner: Bool) -> Bool {
        // The end of a word: the text's end, a space, punctuation, a digit or a symbol (a quote of
        // ours around a name included).
        let afterIsEnd = after.map { !isLetterOrMark($0) || $0.properties.isDefaultIgnorableCodePoint } ?? true
        if before.properties.canonicalCombiningClass == .virama {
            guard let after, !afterIsEnd else { return true }
            return sameBlock(before, after)
        }
        guard !isVariationSelector(before.value) || zeroWidthJoiner else { return false }
        if zeroWidthJoiner, isLetterOrMark(before), before.value > 0x7F, let after,
            after.properties.canonicalCombiningClass == .virama, sameBlock(before, after)
        {
            return true
        }
        if isJoiningScriptLetter(before) {
            if zeroWidthJoiner, afterIsEnd { return true }
            if let after, isJoiningScriptLetter(after) { return true }
        }
        guard zeroWidthJoiner, let after else { return false }
        // The emoji before shows as one (by default, by its selector, or as a skin tone): a joiner
        // between two symbols shown as text (©‍™) joins nothing.
        let emojiBefore =
            before.properties.isEmojiPresentation || before.value == 0xFE0F
            || (0x1F3FB...0x1F3FF).contains(before.value)
        return emojiBefore && after.value > 0x7F && after.properties.isEmoji
    }

    /// Whether two characters lie in one 128-character block (one Indic script).
    static func sameBlock(_ first: Unicode.Scalar, _ second: Unicode.Scalar) -> Bool {
        first.value >> 7 == second.value >> 7
    }

    /// A letter or a mark.
    static func isLetterOrMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark,
            .spacingMark, .enclosingMark:
            return true
        default: return false
        }
    }

    /// A letter or mark of a script whose letters join (Arabic with its supplements and
    /// presentation forms, Syriac, N'Ko, Mandaic, Mongolian, Phags-pa, Manichaean, Psalter
    /// Pahlavi, Hanifi Rohingya, Sogdian, Old Uyghur, Chorasmian, Adlam), where U+200C and U+200D
    /// choose the forms.
    static func isJoiningScriptLetter(_ scalar: Unicode.Scalar) -> Bool {
        joiningScripts.contains { $0.contains(scalar.value) } && isLetterOrMark(scalar)
            && scalar.properties.generalCategory != .enclosingMark
    }

    /// The blocks of the joining scripts `isJoiningScriptLetter` names.
    static let joiningScripts: [ClosedRange<UInt32>] = [
        0x0600...0x077F, 0x07C0...0x07FF, 0x0840...0x08FF, 0x1800...0x18AF, 0xA840...0xA877, 0xFB50...0xFDFF,
        0xFE70...0xFEFF, 0x10AC0...0x10AFF, 0x10B80...0x10BAF, 0x10D00...0x10D3F, 0x10F30...0x10FDF, 0x1E900...0x1E95F,
    ]

    /// Whether the variation selector `selector` after `base` (and before `next`) changes what is
    /// shown.
    static func varies(_ base: Unicode.Scalar, with selector: UInt32, next: Unicode.Scalar?) -> Bool {
        guard isVisibleBase(base) else { return false }
        switch selector {
        case 0xFE0F:
            // After any emoji (keyboards add it to ⌚️, ☕️, ⚽️, which show as emoji anyway); a
            // digit, # or * is an emoji only as a keycap, with U+20E3 after the selector.
            guard base.properties.isEmoji else { return false }
            return base.value > 0x7F || next?.value == 0x20E3
        case 0xFE0E:
            // Text presentation changes only what shows as an emoji by default.
            return base.properties.isEmojiPresentation
        case 0xE0100...0xE01EF: return base.properties.isIdeographic
        case 0x180B...0x180D, 0x180F: return (0x1800...0x18AF).contains(base.value)
        default:
            // The standardized variation sequences: mathematical symbols, ideographs, Myanmar and
            // Phags-pa.
            return (base.properties.generalCategory == .mathSymbol && base.value > 0x7F)
                || base.properties.isIdeographic
                || (0x1000...0x109F).contains(base.value) || (0xA840...0xA877).contains(base.value)
        }
    }

    /// Whether `scalar` is hidden wherever it stands, or may be where its neighbours say so (a
    /// joiner, a variation selector): the judgement without its context, so that text holding no
    /// such character is known visible in one pass, with nothing copied.
    static func mayBeHidden(_ scalar: Unicode.Scalar) -> Bool {
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
        text.unicodeScalars.contains(where: mayBeHidden) && firstIndex(in: Array(text.unicodeScalars)) != nil
    }

    /// The index of the first hidden character of `scalars`, if any.
    public static func firstIndex(in scalars: [Unicode.Scalar]) -> Int? {
        scalars.indices.first { isHidden(scalars, at: $0) }
    }

    /// The first hidden character of `text`, described with its position (`U+0000 (NUL) at
    /// character 4`); `nil` when there is none: for readers that refuse text from outside holding
    /// one (station names and notes, manifests, board files, records). Such text goes into
    /// ledgers, exports, labels and terminal lines, where these characters cut, break, rewrite or
    /// reorder the line (a right-to-left override makes a name read backwards), or make two texts
    /// look alike. A tab is allowed where `allowingTab` (notes).
    public static func describeFirst(in text: String, allowingTab: Bool) -> String? {
        guard text.unicodeScalars.contains(where: { mayBeHidden($0) && !(allowingTab && $0 == "\t") }) else {
            return nil
        }
        let scalars = Array(text.unicodeScalars)
        guard
            let index = scalars.indices.first(where: {
                !(allowingTab && scalars[$0] == "\t") && isHidden(scalars, at: $0)
            })
        else { return nil }
        let scalar = scalars[index]
        let value = scalar.value
        let kind: String
        switch scalar.properties.generalCategory {
        case .control: kind = "a control character"
        case .format: kind = "an invisible formatting character"
        case .privateUse: kind = "a private-use character"
        case _ where scalar.properties.isNoncharacterCodePoint: kind = "a non-character"
        case _ where isVariationSelector(value):
            kind = "a variation selector, allowed only after a visible character"
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
        0x200C: "zero-width non-joiner, allowed only between two visible characters",
        0x200D: "zero-width joiner, allowed only between two visible characters", 0x200E: "left-to-right mark",
        0x200F: "right-to-left mark", 0x202A: "left-to-right embedding", 0x202B: "right-to-left embedding",
        0x202C: "pop directional formatting", 0x202D: "left-to-right override", 0x202E: "right-to-left override",
        0x2060: "word joiner", 0x2066: "left-to-right isolate", 0x2067: "right-to-left isolate",
        0x2068: "first strong isolate", 0x2069: "pop directional isolate", 0x2800: "braille blank",
        0x3164: "Hangul filler", 0xFEFF: "zero-width no-break space", 0xFFA0: "halfwidth Hangul filler",
    ]

    /// A character a variation selector may follow: a letter, mark, number, symbol or punctuation
    /// that is itself shown (not another selector, nor anything else that shows nothing).
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
        return !properties.isDefaultIgnorableCodePoint
    }

    /// Whether `value` is a variation selector: U+FE00–U+FE0F, U+E0100–U+E01EF or a Mongolian free
    /// variation selector.
    public static func isVariationSelector(_ value: UInt32) -> Bool {
        (0xFE00...0xFE0F).contains(value) || (0xE0100...0xE01EF).contains(value) || (0x180B...0x180D).contains(value)
            || value == 0x180F
    }
}

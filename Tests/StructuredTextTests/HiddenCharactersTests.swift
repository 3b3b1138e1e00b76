import Foundation
import Testing

@testable import StructuredText

/// The one judgement of hidden characters (issue 17, made context-free by issue 28): what would
/// not show, or would act on a terminal or document, is hidden wherever it stands — joiners and
/// variation selectors included, whatever their neighbours.
struct HiddenCharactersTests {
    /// Text whose every character shows: letters of many scripts, combining marks, a no-break
    /// space, emoji written without joiners or selectors, markup characters.
    @Test(arguments: [
        "Küche 東京", "Hall\u{00A0}1", "עברית 12", "a*/b</svg>&'\"", "\u{1F600} \u{2764} family", "Ελλάδα",
        "e\u{301}", "क्ष", "അവന്", "می خواهم", "\u{1F3FD}", "1\u{20E3}",
    ])
    func realWritingIsNotHidden(text: String) {
        #expect(!HiddenCharacters.any(in: text), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        #expect(VisibleText.escaped(text) == text)
    }

    /// Each hidden character, where it stands, and how the terminal's escaper shows it: the same
    /// wherever it stands, real writing that needs a joiner or a selector included (the rule's
    /// known limit).
    @Test(arguments: [
        ("a\u{1B}[2J", 1, #"a\x1b[2J"#), ("\u{9B}1m", 0, #"\u{009B}1m"#), ("x\u{202E}y", 1, #"x\u{202E}y"#),
        ("\u{200D}x", 0, #"\u{200D}x"#), ("x\u{200D}", 1, #"x\u{200D}"#), ("a \u{200C}b", 2, #"a \u{200C}b"#),
        ("a\u{200D}\u{200D}b", 1, #"a\u{200D}\u{200D}b"#), ("\u{FE0F}a", 0, #"\u{FE0F}a"#),
        ("x\u{3164}", 1, #"x\u{3164}"#), ("b\u{2800}", 1, #"b\u{2800}"#), ("p\u{E000}", 1, #"p\u{E000}"#),
        ("t\u{E0041}", 1, #"t\u{E0041}"#), ("n" + String(Unicode.Scalar(0xFDD0)!), 1, #"n\u{FDD0}"#),
        ("c\u{34F}", 1, #"c\u{034F}"#),
        ("s\u{AD}h", 1, #"s\u{00AD}h"#), ("l\u{2028}", 1, #"l\u{2028}"#),
        ("z" + String(Unicode.Scalar(0xFFFF)!), 1, #"z\u{FFFF}"#),
        ("h\u{115F}", 1, #"h\u{115F}"#), ("k\u{17B4}", 1, #"k\u{17B4}"#), ("tab\there", 3, #"tab\x09here"#),
        ("a\u{E0100}", 1, #"a\u{E0100}"#), ("\u{1F600}\u{FE0E}", 1, #"😀\u{FE0E}"#),
        // Writing that needs a joiner or selector: refused in names, escaped in output.
        ("👨\u{200D}👩", 1, #"👨\u{200D}👩"#), ("\u{2764}\u{FE0F}", 1, #"❤\u{FE0F}"#),
        ("می\u{200C}خواهم", 2, #"می\u{200C}خواهم"#), ("क्\u{200D}ष", 2, #"क्\u{200D}ष"#),
        ("1\u{FE0F}\u{20E3}", 1, #"1\u{FE0F}⃣"#), ("\u{845B}\u{E0100}", 1, #"葛\u{E0100}"#),
    ])
    func eachHiddenCharacterIsFoundAndEscaped(text: String, index: Int, shown: String) {
        #expect(Array(text.unicodeScalars).firstIndex(where: HiddenCharacters.isHidden) == index)
        #expect(VisibleText.escaped(text) == shown)
        #expect(VisibleText.escaped(shown) == shown, "escaping twice changes nothing")
    }

    /// The rule over every code point: hidden exactly when it is a control or format character,
    /// a line or paragraph separator, default-ignorable, private-use, a non-character or the
    /// braille blank — judged alone, so between any neighbours escaping it gives printable ASCII
    /// (which escaping again leaves alone) and a visible one is kept as it is.
    @Test func theRuleHoldsForEveryCodePointWhereverItStands() {
        var hidden = 0
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let properties = scalar.properties
            let expected =
                [.control, .format, .privateUse, .lineSeparator, .paragraphSeparator].contains(
                    properties.generalCategory)
                || properties.isDefaultIgnorableCodePoint || properties.isNoncharacterCodePoint || value == 0x2800
            #expect(HiddenCharacters.isHidden(scalar) == expected, "U+\(String(value, radix: 16))")
            if expected { hidden += 1 }
            if value % 97 == 0 || expected {
                for (before, after) in [("a", "b"), ("\u{94D}", "\u{915}"), ("\u{1F468}", "\u{1F469}"), ("", "")] {
                    let text = before + String(scalar) + after
                    let escaped = VisibleText.escaped(text)
                    #expect(VisibleText.escaped(escaped) == escaped)
                    if expected {
                        #expect(!escaped.unicodeScalars.contains(scalar))
                    } else {
                        #expect(escaped == text)
                    }
                }
            }
        }
        #expect(hidden > 130_000, "the private-use planes alone hold 131,068")
    }

    /// A document keeps its line feeds, tabs and the carriage returns that end lines; a carriage
    /// return alone (which would overwrite the line on a terminal) is escaped.
    @Test func aDocumentKeepsItsLayoutOnly() {
        #expect(VisibleText.escapedDocument("a,b\r\n\"x\ty\"\n") == "a,b\r\n\"x\ty\"\n")
        #expect(VisibleText.escapedDocument("ok\rFAKE\n") == #"ok\x0dFAKE"# + "\n")
        #expect(VisibleText.escapedDocument("\u{1B}]0;t\u{07}\r") == #"\x1b]0;t\x07\x0d"#)
        #expect(VisibleText.escapedLines("a\tb\n") == #"a\x09b"# + "\n")
    }

    /// A value of any length is quoted short, with its length.
    @Test func anExcerptIsShortAndSaysHowLongTheTextWas() {
        let long = String(repeating: "\u{1B}A", count: 5_000)
        let excerpt = VisibleText.excerpt(long)
        #expect(excerpt.count < 200 && excerpt.hasSuffix("… (10000 characters)"))
        #expect(!excerpt.unicodeScalars.contains("\u{1B}"))
        #expect(VisibleText.excerpt("short") == "short")
        let zalgo = VisibleText.excerpt("Z" + String(repeating: "\u{301}", count: 50_000))
        #expect(zalgo.unicodeScalars.count < 100 && zalgo.hasSuffix("… (50001 code points)"), "\(zalgo)")
    }

    /// The raw excerpt cuts alike and keeps what it keeps as it is: the way out encodes it.
    @Test func aRawExcerptCutsAlikeAndEscapesNothing() {
        let long = String(repeating: "\u{1B}A", count: 5_000)
        #expect(long.excerpt() == String(repeating: "\u{1B}A", count: 20) + "… (10000 characters)")
        #expect(VisibleText.excerpt(long) == VisibleText.escaped(long.excerpt()))
        #expect("a\u{202E}b".excerpt() == "a\u{202E}b")
        #expect(
            ("Z" + String(repeating: "\u{301}", count: 50)).excerpt(limit: 3) == "Z\u{301}\u{301}… (51 code points)")
    }

    /// A message names the first five of what it counts, and `, …` when there are more (one rule
    /// for every message that did so by hand).
    @Test(arguments: [
        (0, ""), (1, "n1"), (5, "n1, n2, n3, n4, n5"), (6, "n1, n2, n3, n4, n5, …"), (40, "n1, n2, n3, n4, n5, …"),
    ])
    func aListExcerptNamesTheFirstFive(count: Int, shown: String) {
        #expect((0..<count).map { "n\($0 + 1)" }.joinedExcerpt() == shown)
    }

    /// The JSON writer escapes every hidden character (surrogate pairs above U+FFFF) and leaves
    /// real writing as it is; what it writes parses back to the same text.
    @Test func theJSONWriterEscapesHiddenCharactersAndKeepsTheText() throws {
        let text = "x\u{202E}\u{E0041}\u{3164}👨\u{200D}👩 می خواهم x\u{200D}"
        let json = JSONValue.array([.string(text)]).compact()
        #expect(json.contains(#"\u202e"#) && json.contains(#"\udb40\udc41"#) && json.contains(#"\u3164"#))
        #expect(json.contains(#"👨\u200d👩"#) && json.contains("می خواهم"), "joiners escaped, writing kept")
        #expect(json.hasSuffix(#"\u200d"]"#), "a trailing joiner is escaped")
        let back = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String])
        #expect(back == [text])
    }
}

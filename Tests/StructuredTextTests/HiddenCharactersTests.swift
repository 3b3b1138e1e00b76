import Foundation
import Testing

@testable import StructuredText

/// The one judgement of hidden characters (issue 17): what would not show, or would act on a
/// terminal or document, is hidden wherever it stands; joiners and variation selectors are hidden
/// only where they do nothing visible (real writing keeps them).
struct HiddenCharactersTests {
    /// Text whose every character shows: letters of many scripts, emoji sequences joined by
    /// U+200D, Persian with a non-joiner, an emoji's presentation selector, a no-break space.
    @Test(arguments: [
        "Küche 東京", "👨\u{200D}👩\u{200D}👧 family", "\u{2764}\u{FE0F}\u{200D}\u{1F525}", "می\u{200C}خواهم",
        "क्\u{200D}ष", "क्\u{200C}ष", "ක්\u{200D}ය", "1\u{FE0F}\u{20E3}", "Hall\u{00A0}1", "עברית 12", "a*/b</svg>&'\"",
        "\u{1F469}\u{200D}\u{2764}\u{FE0F}\u{200D}\u{1F48B}\u{200D}\u{1F468}", "\u{1F9D1}\u{1F3FD}\u{200D}\u{1F4BB}",
        "\u{845B}\u{E0100}", "\u{1F600}\u{FE0E}", "র\u{200D}্য", "അവന്\u{200D}", "അവന്\u{200D} വന്നു", "എന്\u{200C}",
        "ك\u{200D}", "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}", "\u{1F3C3}\u{200D}\u{2640}\u{FE0F}", "#\u{FE0F}\u{20E3}",
        "\u{00A9}\u{FE0F}", "\u{2229}\u{FE00}", "'അവന്\u{200D}'", "കൊച്ചിന്\u{200D}-1", "(അവന്\u{200D})",
        "হঠাত্\u{200D}।", "\u{1E900}\u{200D}\u{1E901}", "Lab ب\u{200D}", "\u{231A}\u{FE0F}", "\u{2615}\u{FE0F} 2",
        "\u{1F600}\u{FE0F}",
    ])
    func realWritingIsNotHidden(text: String) {
        #expect(!HiddenCharacters.any(in: text), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        #expect(VisibleText.escaped(text) == text)
    }

    /// Each hidden character, where it stands, and how the terminal's escaper shows it.
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
        // Look-alikes: joiners and selectors where they change nothing.
        ("a\u{200D}b", 1, #"a\u{200D}b"#), ("a\u{200C}b", 1, #"a\u{200C}b"#), ("a\u{FE0F}", 1, #"a\u{FE0F}"#),
        ("\u{2764}\u{FE0F}\u{FE0F}", 2, #"❤️\u{FE0F}"#), ("1\u{FE0F}", 1, #"1\u{FE0F}"#),
        ("a\u{E0100}", 1, #"a\u{E0100}"#), ("1\u{200D}2", 1, #"1\u{200D}2"#),
        ("Caf\u{E9}\u{FE00}", 4, #"Café\u{FE00}"#), ("a+\u{FE00}b", 2, #"a+\u{FE00}b"#),
        ("\u{00A9}\u{200D}\u{2122}", 1, #"©\u{200D}™"#), ("क\u{200C}\u{94D}ष", 1, #"क\u{200C}्ष"#),
        ("क्\u{200C}A", 2, #"क्\u{200C}A"#), ("\u{00A9}\u{FE0E}", 1, #"©\u{FE0E}"#),
        ("\u{2764}\u{FE0E}", 1, #"❤\u{FE0E}"#), ("\u{1F600}\u{FE00}", 1, #"😀\u{FE00}"#),
        ("\u{2605}\u{FE00}", 1, #"★\u{FE00}"#), ("क्\u{200D}é", 2, #"क्\u{200D}é"#),
        ("\u{0800}\u{200C}\u{0801}", 1, #"ࠀ\u{200C}ࠁ"#),
    ])
    func eachHiddenCharacterIsFoundAndEscaped(text: String, index: Int, shown: String) {
        #expect(HiddenCharacters.firstIndex(in: Array(text.unicodeScalars)) == index)
        #expect(VisibleText.escaped(text) == shown)
        #expect(VisibleText.escaped(shown) == shown, "escaping twice changes nothing")
    }

    /// Escaping twice changes nothing, also where a joiner's neighbour is itself escaped.
    @Test(arguments: [
        "1\r\u{180B}\u{200D}\u{094D}", "x\u{FE0F}\u{200D}😀", "a\u{34F}\u{200D}\u{94D}", "\u{200D}\u{200D}",
        "क्\u{200D}\u{200B}", "a\u{FE0F}\u{FE0F}\u{200D}😀", "\u{FE0F}\u{200D}",
    ])
    func escapingTwiceChangesNothing(text: String) {
        let once = VisibleText.escaped(text)
        #expect(VisibleText.escaped(once) == once, "\(once.unicodeScalars.map { String($0.value, radix: 16) })")
        #expect(!once.unicodeScalars.contains { $0 == "\u{200D}" || $0 == "\u{200C}" || $0 == "\u{FE0F}" })
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

    /// The JSON writer escapes every hidden character (surrogate pairs above U+FFFF) and leaves
    /// real writing as it is; what it writes parses back to the same text.
    @Test func theJSONWriterEscapesHiddenCharactersAndKeepsTheText() throws {
        let text = "x\u{202E}\u{E0041}\u{3164}👨\u{200D}👩 می\u{200C}خواهم x\u{200D}"
        let json = JSONValue.array([.string(text)]).compact()
        #expect(json.contains(#"\u202e"#) && json.contains(#"\udb40\udc41"#) && json.contains(#"\u3164"#))
        #expect(json.contains("👨\u{200D}👩") && json.contains("می\u{200C}خواهم"), "joined writing kept")
        #expect(json.hasSuffix(#"\u200d"]"#), "a trailing joiner is escaped")
        let back = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String])
        #expect(back == [text])
    }
}

import BeaconLabels
import BeaconPayload
import Foundation
import Testing

/// The QR string, the percent-encoding of names and the XML escaper, with the names a list may
/// hold on purpose or by accident.
struct LabelTextTests {
    static let uuid = UUID(uuidString: "7634a485-1732-4b7d-ab44-d505d8a24c60")!
    static let address = try! RandomStaticAddress(parsing: "c7:d5:60:ad:5d:5a")

    static func label(_ name: String, major: UInt16 = 1, minor: UInt16 = 2, address: RandomStaticAddress? = address)
        -> StationLabel
    {
        StationLabel(
            name: name, identity: IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: -59),
            address: address)
    }

    @Test func theDocumentedForm() {
        #expect(
            Self.label("Hall A").qrText
                == "ibeacon:7634A485-1732-4B7D-AB44-D505D8A24C60/1/2?name=Hall%20A&addr=C7:D5:60:AD:5D:5A")
        #expect(
            Self.label("Hall A", major: 0, minor: 65535, address: nil).qrText
                == "ibeacon:7634A485-1732-4B7D-AB44-D505D8A24C60/0/65535?name=Hall%20A")
    }

    /// Each hostile name, and what the QR string must carry for it.
    static let hostile: [(name: String, encoded: String)] = [
        ("a&b=c", "a%26b%3Dc"),
        ("x?y/z", "x%3Fy%2Fz"),
        ("100%", "100%25"),
        ("two  spaces ", "two%20%20spaces%20"),
        ("a+b#c", "a%2Bb%23c"),
        ("</svg><script>", "%3C%2Fsvg%3E%3Cscript%3E"),
        ("\"double\" 'single'", "%22double%22%20%27single%27"),
        ("Küche", "K%C3%BCche"),
        ("東京", "%E6%9D%B1%E4%BA%AC"),
        ("🎉", "%F0%9F%8E%89"),
        ("e\u{301}", "e%CC%81"),
        ("kept-._~AZaz09", "kept-._~AZaz09"),
        ("tab\tnul\u{0}esc\u{1B}", "tab%09nul%00esc%1B"),
        ("&addr=C0:FF:EE:00:00:01", "%26addr%3DC0%3AFF%3AEE%3A00%3A00%3A01"),
    ]

    @Test(arguments: hostile.indices)
    func hostileNamesArePercentEncoded(_ index: Int) throws {
        let (name, encoded) = Self.hostile[index]
        #expect(StationLabel.percentEncoded(name) == encoded)
        let text = Self.label(name).qrText
        #expect(text == "ibeacon:7634A485-1732-4B7D-AB44-D505D8A24C60/1/2?name=\(encoded)&addr=C7:D5:60:AD:5D:5A")
        // Whatever the name, the query has exactly its two parameters and the name comes back.
        let query = try #require(text.split(separator: "?", maxSplits: 1).last)
        let parameters = query.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1) }
        #expect(parameters.map { String($0[0]) } == ["name", "addr"])
        #expect(String(parameters[0][1]).removingPercentEncoding == name)
        // Only unreserved characters and the structure's own stay unencoded: the string is ASCII.
        #expect(text.utf8.allSatisfy { $0 >= 0x21 && $0 < 0x7F })
    }

    /// Random names (any scalar, seeded) decode back to themselves.
    @Test func randomNamesRoundTrip() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        for _ in 0..<500 {
            var name = ""
            for _ in 0..<(1 + next() % 24) {
                let pick = next() % 4
                let value: UInt64 =
                    pick == 0
                    ? 0x20 + next() % 0x5F
                    : pick == 1 ? next() % 0x800 : pick == 2 ? next() % 0x10000 : next() % 0x110000
                if let scalar = Unicode.Scalar(UInt32(value)) { name.unicodeScalars.append(scalar) }
            }
            let encoded = StationLabel.percentEncoded(name)
            #expect(encoded.removingPercentEncoding == name, "\(Array(name.unicodeScalars))")
            #expect(encoded.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~%".contains($0)) })
        }
    }

    @Test func escapingMakesMarkupText() {
        #expect(XMLText.escaped("a&b<c>d\"e'f") == "a&amp;b&lt;c&gt;d&quot;e&apos;f")
        #expect(XMLText.escaped("</svg><script>") == "&lt;/svg&gt;&lt;script&gt;")
        #expect(XMLText.escaped("Küche 東京 🎉") == "Küche 東京 🎉")
        #expect(XMLText.escaped("&amp;") == "&amp;amp;")
    }

    @Test func controlCharactersAreShownNotWritten() {
        #expect(XMLText.visible("esc\u{1B}[31m") == "esc\\x1b[31m")
        #expect(XMLText.visible("a\u{0}b\tc\nd\re\u{7F}") == "a\\x00b\\x09c\\x0ad\\x0de\\x7f")
        #expect(XMLText.visible("next\u{85}line\u{2028}") == "next\\u{0085}line\\u{2028}")
        #expect(XMLText.visible("\u{FFFE}\u{FFFF}") == "\\u{FFFE}\\u{FFFF}")
        #expect(XMLText.visible("abc\u{202E}fed") == "abc\\u{202E}fed")
        #expect(XMLText.visible("plain café") == "plain café")
        #expect(XMLText.escaped("<\u{1B}>") == "&lt;\\x1b&gt;")
    }

    /// Every scalar XML 1.0 forbids is kept out, and a visible text stays as it is.
    @Test func noScalarXMLForbidsSurvives() {
        var all = String.UnicodeScalarView()
        for value in Array(0..<0x3000) + Array(0xFFF0...0x10010) + [0x10FFFF] {
            if let scalar = Unicode.Scalar(UInt32(value)) { all.append(scalar) }
        }
        let text = String(all)
        let escaped = XMLText.escaped(text)
        for scalar in escaped.unicodeScalars {
            let value = scalar.value
            let allowed =
                value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
                || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
            #expect(allowed, "U+\(String(value, radix: 16)) written")
            #expect(value >= 0x20 && value != 0x7F, "a control character written: U+\(String(value, radix: 16))")
            #expect(!"<>\"'".unicodeScalars.contains(scalar))
        }
        #expect(XMLText.visible(XMLText.visible(text)) == XMLText.visible(text))
    }
}

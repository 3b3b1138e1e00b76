import BeaconLabels
import BeaconPayload
import Foundation
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The QR encoder over libqrencode, and the SVG pages read back with an XML parser.
struct LabelDocumentTests {
    @Test func encodesTheSmallestSymbol() throws {
        let code = try QREncoder.encode(Array("ibeacon".utf8))
        #expect(code.version == 1 && code.size == 21)
        // The three finder patterns: a dark 7×7 ring with a light ring inside and a 3×3 core.
        for (top, left) in [(0, 0), (0, 14), (14, 0)] {
            for row in 0..<7 {
                for column in 0..<7 {
                    let ring = max(abs(row - 3), abs(column - 3))
                    #expect(code.isDark(row: top + row, column: left + column) == (ring != 2))
                }
            }
        }
        // The runs cover exactly the dark modules.
        var covered = Set<Int>()
        for run in code.darkRuns {
            for column in run.column..<run.column + run.length { covered.insert(run.row * code.size + column) }
        }
        #expect(covered == Set(code.modules.indices.filter { code.modules[$0] }))
    }

    /// A station's string (about 90 bytes) takes version 5 at level M (84 bytes would fit in
    /// version 5 at most; 106 in version 6).
    @Test func theVersionGrowsWithTheText() throws {
        #expect(try QREncoder.encode([UInt8](repeating: 0x41, count: 84)).version == 5)
        #expect(try QREncoder.encode([UInt8](repeating: 0x41, count: 85)).version == 6)
        let largest = try QREncoder.encode([UInt8](repeating: 0x41, count: QREncoder.capacity))
        #expect(largest.version == 40 && largest.size == 177)
    }

    /// A module just under the minimum is shown under it, never rounded up to it.
    @Test(arguments: [0.2496, 0.2499, 0.24, 0.1234])
    func modulesTooSmallAreShownUnderTheMinimum(millimetres: Double) {
        let text = QREncodingError.modulesTooSmall(version: 7, millimetres: millimetres, minimum: 0.25).description
        #expect(!text.contains("would be 0.25 mm"), "\(text)")
        #expect(text.contains("under the 0.25 mm"), "\(text)")
    }

    @Test func tooMuchIsRefused() {
        #expect(throws: QREncodingError.tooLong(bytes: 2332)) {
            try QREncoder.encode([UInt8](repeating: 0x41, count: 2332))
        }
        #expect(throws: QREncodingError.self) { try QREncoder.encode([]) }
        let label = StationLabel(
            name: String(repeating: "東", count: 800),
            identity: IBeacon(uuid: UUID(), major: 1, minor: 1, measuredPower: -59), address: nil)
        #expect(throws: LabelError.self) { try LabelDocument.pages([label], on: LabelSheet.a4x3x8) }
    }

    static let names = [
        "</svg><svg onload=\"x\">", "a&b=c?d/e%f g", "\"'\"'", "<![CDATA[x]]>", "<!-- -->", "]]>", "&amp;",
        "esc\u{1B}[31mred", "nul\u{0}", "\u{202E}reversed", "Küche 東京 🎉", String(repeating: "W", count: 300),
    ]

    /// Hostile names on two pages: the pages parse, hold only the elements the writer makes, and
    /// every name comes back (as shown: controls visible, long names cut) where it was put.
    @Test func hostileNamesStayText() throws {
        let labels = (0..<30).map { index in
            StationLabel(
                name: Self.names[index % Self.names.count],
                identity: IBeacon(
                    uuid: UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!, major: 1, minor: UInt16(index),
                    measuredPower: -59), address: nil)
        }
        let pages = try LabelDocument.pages(labels, on: LabelSheet.a4x3x8)
        #expect(pages.count == 2)
        var seen: [String] = []
        for (number, page) in pages.enumerated() {
            let reader = SVGReader()
            let parser = XMLParser(data: Data(page.utf8))
            parser.delegate = reader
            #expect(parser.parse(), "page \(number + 1): \(parser.parserError.map { "\($0)" } ?? "")")
            #expect(
                Set(reader.elements).isSubset(of: ["svg", "defs", "clipPath", "rect", "g", "title", "path", "text"]),
                "\(Set(reader.elements))")
            #expect(reader.elements.filter { $0 == "svg" }.count == 1)
            #expect(reader.elements.filter { $0 == "g" }.count == (number == 0 ? 24 : 6))
            #expect(reader.elements.filter { $0 == "path" }.count == (number == 0 ? 24 : 6))
            #expect(!reader.attributes.contains { $0.hasPrefix("on") })
            seen += reader.titles
            for (title, first) in zip(reader.titles, reader.firstLines) {
                let shown = XMLText.visible(title)
                #expect(first == shown || (first.hasSuffix("…") && shown.hasPrefix(first.dropLast())))
            }
        }
        #expect(seen == labels.map { XMLText.visible($0.name) })
    }

    /// What a page holds, as an XML parser reads it.
    final class SVGReader: NSObject, XMLParserDelegate {
        var elements: [String] = []
        var attributes: [String] = []
        var titles: [String] = []
        /// The first `<text>` of each label group: the name as shown.
        var firstLines: [String] = []
        private var text: String?
        private var lineInGroup = 0

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String]
        ) {
            elements.append(name)
            self.attributes += attributes.keys
            if name == "g" { lineInGroup = 0 }
            if name == "title" || name == "text" { text = "" }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text? += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard let value = text else { return }
            if name == "title" { titles.append(value) }
            if name == "text" {
                if lineInGroup == 0 { firstLines.append(value) }
                lineInGroup += 1
            }
            text = nil
        }
    }
}

import BeaconPayload
import Foundation
import Testing

@testable import BeaconLabels

/// Sheets by name, their geometry and their refusals; the layout inside a label; cutting names.
struct LabelSheetTests {
    @Test func a4ThreeByEightCoversThePage() throws {
        let sheet = try LabelSheet.named("a4-3x8", labelSize: nil, margin: nil, gap: nil)
        #expect(sheet.labelsPerPage == 24)
        #expect(sheet.label == Millimetres(width: 70, height: 37.125))
        #expect(sheet.origin(of: 0) == (0, 0))
        #expect(sheet.origin(of: 4) == (70, 37.125))
        let last = sheet.origin(of: 23)
        #expect(last.x + sheet.label.width == 210)
        #expect(abs(last.y + sheet.label.height - 297) < 1e-9)
    }

    @Test func a4ThreeBySevenStartsBelowTheTop() throws {
        let sheet = try LabelSheet.named("a4-3x7", labelSize: nil, margin: nil, gap: nil)
        #expect(sheet.labelsPerPage == 21)
        #expect(sheet.origin(of: 0) == (0, 0.45))
        let last = sheet.origin(of: 20)
        #expect(abs(last.y + 42.3 - 296.55) < 1e-9)
    }

    @Test func aCustomSheetFillsOrCentres() throws {
        let filled = try LabelSheet.named("210x297:3x8", labelSize: nil, margin: nil, gap: nil)
        #expect(filled.label == LabelSheet.a4x3x8.label)
        #expect(filled.origin(of: 23) == LabelSheet.a4x3x8.origin(of: 23))
        // A sheet with gaps (Herma 4103-like): centred across, 15.15 mm down.
        let gapped = try LabelSheet.named("210x297:3x7", labelSize: "63.5x38.1", margin: nil, gap: "3,0")
        #expect(abs(gapped.left - 6.75) < 1e-9 && abs(gapped.top - 15.15) < 1e-9)
        #expect(abs(gapped.origin(of: 2).x - (6.75 + 2 * 66.5)) < 1e-9)
        let placed = try LabelSheet.named("210x297:3x7", labelSize: "63.5x38.1", margin: "15.5,6.75", gap: "3,0")
        #expect(placed.origin(of: 3) == (6.75, 15.5 + 38.1))
        // A margin without a label size keeps it on both sides.
        let margined = try LabelSheet.named("100x50:2x1", labelSize: nil, margin: "5,5", gap: "2,0")
        #expect(margined.label == Millimetres(width: 44, height: 40))
        #expect(margined.summary == "2×1 labels of 44×40 mm on a 100×50 mm page")
    }

    @Test func singleIsOneLabelPerPage() throws {
        let sheet = try LabelSheet.named("single", labelSize: "62x29", margin: nil, gap: nil)
        #expect(sheet.page == Millimetres(width: 62, height: 29) && sheet.labelsPerPage == 1)
        #expect(sheet.summary == "one 62×29 mm label per page")
    }

    static let refused: [(sheet: String, size: String?, margin: String?, gap: String?, says: String)] = [
        ("a4", nil, nil, nil, "--sheet 'a4' is not a sheet"),
        ("a4-3x8", "70x37", nil, nil, "--label-size does not apply to --sheet a4-3x8"),
        ("a4-3x7", nil, "1,1", nil, "--margin does not apply to --sheet a4-3x7"),
        ("single", nil, nil, nil, "--sheet single needs --label-size"),
        ("single", "62x29", nil, "1,1", "--gap does not apply to --sheet single"),
        ("single", "62", nil, nil, "--label-size '62' must be WIDTHxHEIGHT in mm"),
        ("single", "62x-29", nil, nil, "must be WIDTHxHEIGHT"),
        ("single", "1e2x29", nil, nil, "must be WIDTHxHEIGHT"),
        ("single", "infxnan", nil, nil, "must be WIDTHxHEIGHT"),
        ("single", "0x29", nil, nil, "must be WIDTHxHEIGHT"),
        ("single", "1001x29", nil, nil, "must be WIDTHxHEIGHT"),
        ("single", "62.x29", nil, nil, "must be WIDTHxHEIGHT"),
        ("single", "２x29", nil, nil, "must be WIDTHxHEIGHT"),
        // Below the 0.001 mm the SVG is written in: it was refused as "labels of 0×0 mm".
        ("single", "0.0001x0.0001", nil, nil, "--label-size '0.0001x0.0001' must be WIDTHxHEIGHT in mm"),
        ("210x297:3x8", nil, "0.0001,0", nil, "--margin '0.0001,0' must be TOP,LEFT in mm"),
        ("single", "20x10", nil, nil, "labels of 20×10 mm are too small"),
        ("210x297", nil, nil, nil, "is not a sheet"),
        ("210x297:0x8", nil, nil, nil, "--sheet's grid '0x8' must be columns and rows"),
        ("210x297:3x8:1", nil, nil, nil, "is not a sheet"),
        ("210x297:3", nil, nil, nil, "--sheet's grid '3' must be"),
        ("210x297:3x101", nil, nil, nil, "1 to 100 each"),
        ("210x297:3x8", "80x40", nil, nil, "3×8 labels of 80×40 mm need 240×320 mm; the page is 210×297 mm"),
        ("210x297:3x8", "70x40", nil, nil, "3×8 labels of 70×40 mm need 210×320 mm; the page is 210×297 mm"),
        ("210x297:3x8", "70x37", "0,1", nil, "from 1 mm left and 0 mm down need 211×296 mm"),
        ("210x297:3x8", "70x37", "0,1", nil, "the page is 210×297 mm"),
        ("210x297:3x8", nil, "1", nil, "--margin '1' must be TOP,LEFT"),
        ("210x297:3x8", nil, nil, "a,b", "--gap 'a,b' must be ACROSS,DOWN"),
        ("210x297:3x8", nil, "150,0", nil, "leave no room"),
        ("210x297:30x8", nil, nil, nil, "too small"),
    ]

    @Test(arguments: refused.indices)
    func refusedSheets(_ index: Int) {
        let case_ = Self.refused[index]
        #expect(throws: LabelSheetError.self) {
            try LabelSheet.named(case_.sheet, labelSize: case_.size, margin: case_.margin, gap: case_.gap)
        }
        do {
            _ = try LabelSheet.named(case_.sheet, labelSize: case_.size, margin: case_.margin, gap: case_.gap)
        } catch {
            #expect(error.description.contains(case_.says), "\(error.description)")
            // No sheet is measured from a negative corner.
            #expect(!error.description.contains(/\s-[0-9]/), "\(error.description)")
        }
    }

    /// Every layout keeps the code and the text inside the label, apart, and readable.
    @Test(arguments: ["a4-3x8", "a4-3x7", "single:62x29", "single:29x90", "single:50x50", "single:100x150"])
    func layoutsStayInsideTheLabel(_ name: String) throws {
        let parts = name.split(separator: ":").map(String.init)
        let sheet = try LabelSheet.named(parts[0], labelSize: parts.count > 1 ? parts[1] : nil, margin: nil, gap: nil)
        let layout = sheet.layout
        let label = sheet.label
        #expect(layout.code.x >= layout.padding && layout.code.y >= layout.padding)
        #expect(layout.code.x + layout.code.side <= label.width - layout.padding + 1e-9)
        #expect(layout.code.y + layout.code.side <= label.height - layout.padding + 1e-9)
        #expect(layout.text.x + layout.text.width <= label.width - layout.padding + 1e-9)
        #expect(layout.text.y + layout.text.height <= label.height - layout.padding + 1e-9)
        let beside = layout.text.x >= layout.code.x + layout.code.side
        let below = layout.text.y >= layout.code.y + layout.code.side
        #expect(beside || below)
        #expect(layout.code.side >= LabelLayout.smallestCode && layout.fontSize >= LabelLayout.smallestText)
        // The UUID's halves (19 characters) fit the text box at 0.6 em a character.
        #expect(19 * 0.6 * layout.fontSize <= layout.text.width + 1e-9)
        #expect(Double(layout.nameColumns) * 0.6 * layout.nameFontSize <= layout.text.width + 1e-9)
    }

    @Test func namesAreCutToTheirColumns() {
        #expect(TextWidth.fitted("Cafeteria", columns: 15) == "Cafeteria")
        #expect(TextWidth.fitted("A very long station name", columns: 10) == "A very lo…")
        #expect(TextWidth.fitted("0123456789", columns: 10) == "0123456789")
        #expect(TextWidth.fitted("0123456789A", columns: 10) == "012345678…")
        // Wide characters take two columns; a cut never splits a character.
        #expect(TextWidth.fitted("東京駅東京駅", columns: 7) == "東京駅…")
        #expect(TextWidth.fitted("e\u{301}e\u{301}e\u{301}e\u{301}", columns: 3) == "e\u{301}e\u{301}…")
        #expect(TextWidth.columns(Character("🎉")) == 2 && TextWidth.columns(Character("e\u{301}")) == 1)
        // An emoji newer than the C library's tables still takes two columns: the cut never runs
        // past its line.
        #expect(
            TextWidth.fitted(String(repeating: "\u{1FAE8}", count: 20), columns: 10) == String(
                repeating: "\u{1FAE8}", count: 4) + "…")
        for limit in 1...12 {
            let cut = TextWidth.fitted("Küche 東京 café naïve 🎉", columns: limit)
            #expect(cut.reduce(0) { $0 + TextWidth.columns($1) } <= limit)
        }
    }
}

/// A width and a height in millimetres.
public struct Millimetres: Sendable, Equatable, CustomStringConvertible {
    /// Width (mm).
    public var width: Double
    /// Height (mm).
    public var height: Double

    /// `70×37.125` (mm, as few decimals as needed).
    public var description: String { "\(SVGNumber.text(width))×\(SVGNumber.text(height))" }
}

/// Why a sheet cannot be used; each message names the option to change.
public struct LabelSheetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and what is accepted.
    public var description: String

    init(_ description: String) { self.description = description }
}

/// Where labels go on a page: a grid of equal labels (a sheet of die-cut labels), or one label
/// per page (a label printer's roll).
public struct LabelSheet: Sendable, Equatable {
    /// The name it was chosen by (`a4-3x8`, `210x297:3x8`, `single`), for messages.
    public var name: String
    /// The page.
    public var page: Millimetres
    /// Each label.
    public var label: Millimetres
    /// Labels across and down.
    public var columns: Int
    /// Labels down.
    public var rows: Int
    /// The top left corner of the first label, from the page's top left.
    public var left: Double
    /// See `left`.
    public var top: Double
    /// The space between two labels across and down (mm).
    public var gap: Millimetres
    /// Where text and code go inside each label.
    public let layout: LabelLayout

    /// Labels one page holds.
    public var labelsPerPage: Int { columns * rows }

    /// The sheet in words: `3×8 labels of 70×37.125 mm on a 210×297 mm page`, or `one 62×29 mm
    /// label per page`.
    public var summary: String {
        labelsPerPage == 1 && page == label
            ? "one \(label) mm label per page" : "\(columns)×\(rows) labels of \(label) mm on a \(page) mm page"
    }

    /// The top left corner of the label at `place` (0-based, row by row) on its page.
    public func origin(of place: Int) -> (x: Double, y: Double) {
        let column = place % columns
        let row = place / columns
        return (left + Double(column) * (label.width + gap.width), top + Double(row) * (label.height + gap.height))
    }

    /// A checked sheet: every label on the page and big enough for its code and text.
    init(
        name: String, page: Millimetres, label: Millimetres, columns: Int, rows: Int, left: Double, top: Double,
        gap: Millimetres
    ) throws(LabelSheetError) {
        self.name = name
        self.page = page
        self.label = label
        self.columns = columns
        self.rows = rows
        self.left = left
        self.top = top
        self.gap = gap
        // A thousandth of a millimetre of slack: 8 × 37.125 is 297 exactly, but not in every sum.
        let right = left + Double(columns) * label.width + Double(columns - 1) * gap.width
        let bottom = top + Double(rows) * label.height + Double(rows - 1) * gap.height
        guard left >= 0, top >= 0, right <= page.width + 0.001, bottom <= page.height + 0.001 else {
            throw LabelSheetError(
                "\(columns)×\(rows) labels of \(label) mm from \(SVGNumber.text(left)) mm left and \(SVGNumber.text(top)) mm down need \(Millimetres(width: right, height: bottom)) mm; the page is \(page) mm"
            )
        }
        layout = try LabelLayout(label)
    }

    // MARK: The sheets by name

    /// The sheet names `named` knows, for help and messages.
    public static let names = ["a4-3x8", "a4-3x7", "single"]

    /// A4 with 3 × 8 labels of 70 × 37.125 mm that cover the page edge to edge (Herma 4464 and
    /// its look-alikes).
    public static let a4x3x8 = try! LabelSheet(
        name: "a4-3x8", page: a4, label: Millimetres(width: 70, height: 37.125), columns: 3, rows: 8, left: 0, top: 0,
        gap: Millimetres(width: 0, height: 0))

    /// A4 with 3 × 7 labels of 70 × 42.3 mm (Avery Zweckform 3475 and its look-alikes): seven
    /// rows take 296.1 mm, so the grid starts 0.45 mm down.
    public static let a4x3x7 = try! LabelSheet(
        name: "a4-3x7", page: a4, label: Millimetres(width: 70, height: 42.3), columns: 3, rows: 7, left: 0,
        top: 0.45, gap: Millimetres(width: 0, height: 0))

    static let a4 = Millimetres(width: 210, height: 297)

    /// One label per page of exactly the label's size (a label printer).
    public static func single(_ label: Millimetres) throws(LabelSheetError) -> LabelSheet {
        try LabelSheet(
            name: "single", page: label, label: label, columns: 1, rows: 1, left: 0, top: 0,
            gap: Millimetres(width: 0, height: 0))
    }

    /// The sheet `text` names, with the options that shape it (each the text of a command-line
    /// value; `nil` when not given):
    /// - `a4-3x8`, `a4-3x7`: fixed sheets; the other options are refused.
    /// - `single`: one label per page; `labelSize` (`62x29`) is required.
    /// - `WxH:CxR` (`210x297:3x8`): a page of W × H mm holding C × R labels. The labels are
    ///   `labelSize`, or else as large as the page allows; `gap` (`X,Y`, default `0,0`) lies
    ///   between them; `margin` (`TOP,LEFT`) places the first one, or else the grid is centred.
    public static func named(_ text: String, labelSize: String?, margin: String?, gap: String?) throws(LabelSheetError)
        -> LabelSheet
    {
        switch text {
        case "a4-3x8", "a4-3x7":
            if let given = [("--label-size", labelSize), ("--margin", margin), ("--gap", gap)].first(where: {
                $0.1 != nil
            }) {
                throw LabelSheetError(
                    "\(given.0) does not apply to --sheet \(text), whose labels are fixed; give a custom sheet such as --sheet 210x297:3x8 instead"
                )
            }
            return text == "a4-3x8" ? a4x3x8 : a4x3x7
        case "single":
            if let given = [("--margin", margin), ("--gap", gap)].first(where: { $0.1 != nil }) {
                throw LabelSheetError("\(given.0) does not apply to --sheet single (the page is the label)")
            }
            guard let labelSize else {
                throw LabelSheetError(
                    "--sheet single needs --label-size WxH, the label's width and height in mm (e.g. 62x29)")
            }
            return try single(try size(labelSize, option: "--label-size"))
        default:
            return try custom(text, labelSize: labelSize, margin: margin, gap: gap)
        }
    }

    /// A sheet `WxH:CxR` (see `named`).
    static func custom(_ text: String, labelSize: String?, margin: String?, gap: String?) throws(LabelSheetError)
        -> LabelSheet
    {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw LabelSheetError(
                "--sheet '\(text)' is not a sheet; give \(names.joined(separator: ", ")) or PAGE:GRID such as 210x297:3x8 (a page of 210×297 mm holding 3 columns and 8 rows)"
            )
        }
        let page = try size(String(parts[0]), option: "--sheet's page")
        let grid = try pair(
            String(parts[1]), separator: "x", option: "--sheet's grid",
            accepts: "columns and rows joined by x, 1 to 100 each, such as 3x8"
        ) {
            Int($0).flatMap { (1...100).contains($0) ? $0 : nil }
        }
        let (columns, rows) = grid
        let spacing = try gap.map { text throws(LabelSheetError) in
            try pair(
                text, separator: ",", option: "--gap", accepts: "ACROSS,DOWN in mm, such as 3,0 (0, or 0.001 to 1000)"
            ) {
                length($0, allowingZero: true)
            }
        }
        let between = Millimetres(width: spacing?.0 ?? 0, height: spacing?.1 ?? 0)
        let corner = try margin.map { text throws(LabelSheetError) in
            try pair(
                text, separator: ",", option: "--margin",
                accepts: "TOP,LEFT in mm, such as 15.5,6.75 (0, or 0.001 to 1000)"
            ) {
                length($0, allowingZero: true)
            }
        }
        let across = Double(columns - 1) * between.width
        let down = Double(rows - 1) * between.height
        let label: Millimetres
        if let labelSize {
            label = try size(labelSize, option: "--label-size")
        } else {
            // As large as the page allows, with the margin (if given) on both sides.
            let top = corner?.0 ?? 0
            let left = corner?.1 ?? 0
            label = Millimetres(
                width: (page.width - 2 * left - across) / Double(columns),
                height: (page.height - 2 * top - down) / Double(rows))
            guard label.width > 0, label.height > 0 else {
                throw LabelSheetError(
                    "\(columns)×\(rows) labels with --margin and --gap leave no room on a page of \(page) mm")
            }
        }
        // Without a margin the grid is centred: most sheets are cut symmetrically. A grid larger
        // than the page is told by its size (a centred one would start at a negative corner).
        let needed = Millimetres(
            width: Double(columns) * label.width + across, height: Double(rows) * label.height + down)
        if corner == nil, needed.width > page.width + 0.001 || needed.height > page.height + 0.001 {
            throw LabelSheetError("\(columns)×\(rows) labels of \(label) mm need \(needed) mm; the page is \(page) mm")
        }
        let top = corner?.0 ?? (page.height - Double(rows) * label.height - down) / 2
        let left = corner?.1 ?? (page.width - Double(columns) * label.width - across) / 2
        return try LabelSheet(
            name: text, page: page, label: label, columns: columns, rows: rows, left: left, top: top, gap: between)
    }

    /// `WxH` in mm.
    static func size(_ text: String, option: String) throws(LabelSheetError) -> Millimetres {
        let (width, height) = try pair(
            text, separator: "x", option: option,
            accepts: "WIDTHxHEIGHT in mm, such as 62x29 (0.001 to 1000, decimals with a point)"
        ) {
            length($0, allowingZero: false)
        }
        return Millimetres(width: width, height: height)
    }

    /// Two values written `A<separator>B`, each made by `value` (nil: refused); `accepts` says
    /// what is, for the message.
    static func pair<Value>(
        _ text: String, separator: Character, option: String, accepts: String, value: (String) -> Value?
    ) throws(LabelSheetError) -> (Value, Value) {
        let parts = text.split(separator: separator, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, let first = value(parts[0]), let second = value(parts[1]) else {
            throw LabelSheetError("\(option) '\(text)' must be \(accepts)")
        }
        return (first, second)
    }

    /// A length in mm written in decimal with a point (`37.125`), from 0.001 (the SVG is written
    /// to 0.001 mm; 0 too when `allowingZero`) to 1000; nil for anything else (signs, exponents,
    /// `inf`).
    static func length(_ text: String, allowingZero: Bool) -> Double? {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count), pieces.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }),
            pieces.allSatisfy({ $0.allSatisfy(\.isNumber) }), let value = Double(text)
        else { return nil }
        guard value <= 1000, value >= 0.001 || (allowingZero && value == 0) else { return nil }
        return value
    }
}

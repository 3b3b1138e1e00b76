import CTextWidth

/// Where the QR code and the lines of text go inside one label, from its size alone (so every
/// label of a sheet looks the same). All lengths in mm from the label's top left corner.
///
/// A label wider than tall has the code on the left and the text beside it; others have the
/// code on top. The text is six lines in a monospaced font — the name (bold, larger), the UUID
/// over two lines, major, minor and the address — sized so the longest of them (a UUID half,
/// 19 characters) fits the width and all six fit the height.
public struct LabelLayout: Sendable, Equatable {
    /// Space kept clear along the label's edges: printers rarely place a sheet to the
    /// millimetre, and a code cut by the edge does not read.
    public let padding: Double
    /// The square the code is drawn in, quiet zone included: its top left corner and side.
    public let code: (x: Double, y: Double, side: Double)
    /// The box the text is set in.
    public let text: (x: Double, y: Double, width: Double, height: Double)
    /// The size of the five lines after the name (mm, the font's em).
    public let fontSize: Double
    /// The size of the name.
    public var nameFontSize: Double { fontSize * Self.nameScale }

    /// The smallest code side and text size a label may get: below them phones struggle to read
    /// the code, and people the text.
    public static let smallestCode = 10.0
    /// See `smallestCode` (1.2 mm is about 3.4 pt).
    public static let smallestText = 1.2

    /// A character's advance in the monospaced fonts used (DejaVu Sans Mono, Liberation Mono,
    /// and most others), in ems.
    static let advance = 0.6
    /// The name's size against the other lines'.
    static let nameScale = 1.2
    /// A line's height in ems.
    static let lineHeight = 1.25
    /// The longest line besides the name, in characters: a half of the UUID with its hyphen.
    static let widestLine = 19
    /// The whole text's height in the five lines' ems: the name's line and five more.
    static let textHeight = lineHeight * nameScale + 5 * lineHeight

    /// The layout of a label of `size`.
    init(_ size: Millimetres) throws(LabelSheetError) {
        padding = min(2, min(size.width, size.height) * 0.06)
        // Between the code's quiet zone and the text; the quiet zone is white already.
        let gap = padding / 2
        let inner = Millimetres(width: size.width - 2 * padding, height: size.height - 2 * padding)
        if size.width >= size.height * 1.3 {
            let side = min(inner.height, (inner.width - gap) / 2)
            code = (padding, padding + (inner.height - side) / 2, side)
            text = (padding + side + gap, padding, inner.width - side - gap, inner.height)
        } else {
            let side = min(inner.width, (inner.height - gap) * 0.55)
            code = (padding + (inner.width - side) / 2, padding, side)
            text = (padding, padding + side + gap, inner.width, inner.height - side - gap)
        }
        fontSize = min(
            text.width / (Double(Self.widestLine) * Self.advance), text.height / Self.textHeight,
            4.0)  // 4 mm (11 pt) is plenty on a large label
        guard code.side >= Self.smallestCode, fontSize >= Self.smallestText else {
            throw LabelSheetError(
                "labels of \(size) mm are too small for a QR code of at least \(SVGNumber.text(Self.smallestCode)) mm and text of \(SVGNumber.text(Self.smallestText)) mm beside or below it; use larger labels"
            )
        }
    }

    /// The characters of the name that fit on its line (wide characters count two).
    public var nameColumns: Int { Int(text.width / (nameFontSize * Self.advance)) }

    /// Equal when every length is.
    public static func == (lhs: LabelLayout, rhs: LabelLayout) -> Bool {
        lhs.padding == rhs.padding && lhs.code == rhs.code && lhs.text == rhs.text && lhs.fontSize == rhs.fontSize
    }
}

/// How many columns of a monospaced font text takes, and text cut to fit.
public enum TextWidth {
    /// The columns `character` takes, as the C library's `wcwidth` counts them in a UTF-8
    /// locale (Unicode's East Asian Width and emoji presentation: two for wide and full-width
    /// characters and emoji, none for combining marks and other zero-width characters): what a
    /// terminal and a monospaced font draw. One rule for the labels and the live status.
    public static func columns(_ character: Character) -> Int {
        character.unicodeScalars.reduce(0) { $0 + columns($1) }
    }

    /// The columns of one scalar. A character the C library's tables do not know (newer than
    /// them, as the Unicode 15 emoji are to glibc 2.36's; or a control, which every caller has
    /// made visible or blank before) counts two, so that a cut errs wide and never runs past its
    /// line. Without the C.UTF-8 locale every character but ASCII counts two alike.
    public static func columns(_ scalar: Unicode.Scalar) -> Int {
        if scalar.value >= 0x20, scalar.value < 0x7F { return 1 }
        let width = Int(text_width_of(scalar.value))
        return width < 0 ? 2 : width
    }

    /// `text` as it fits in `limit` columns: whole when it does, else cut after the last whole
    /// character that leaves room for an ellipsis, which is appended.
    public static func fitted(_ text: String, columns limit: Int) -> String {
        guard text.reduce(0, { $0 + columns($1) }) > limit else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let width = columns(character)
            guard used + width + 1 <= limit else { break }
            kept.append(character)
            used += width
        }
        return kept + "…"
    }
}

/// Numbers as the SVG is written: at most three decimals (a micrometre), no trailing zeros,
/// never an exponent or a locale's comma.
enum SVGNumber {
    static func text(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        let sign = thousandths < 0 ? "-" : ""
        let whole = abs(thousandths) / 1000
        var fraction = String(abs(thousandths) % 1000)
        guard fraction != "0" else { return sign + String(whole) }
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(sign)\(whole).\(fraction)"
    }
}

import StructuredText

/// A label that could not be made.
public struct LabelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The station (its name as given).
    public var station: String
    /// Why its QR code could not be made.
    public var problem: QREncodingError

    /// One sentence (the name made visible: it may hold anything).
    public var description: String {
        "the QR code of station '\(station.excerpt(limit: 100))' cannot be made: \(problem)"
    }
}

/// Station labels as SVG documents, one per page of a sheet, written here rather than by a
/// library so that every byte of them is ours to check.
///
/// Each page is `width`/`height` in mm with a `viewBox` in mm, so it prints at its real size from
/// any program. Each QR code is one `<path>` (a rectangle per run of dark modules) with
/// `shape-rendering="crispEdges"` and a quiet zone of 4 modules: drawn as one rectangle per
/// module, renderers leave hairline seams between them that decoders trip over. Every label is
/// clipped to its own rectangle, so nothing can spill onto its neighbour whatever font a viewer
/// substitutes. Every piece of text goes through `XMLText.escaped`.
public enum LabelDocument {
    /// The modules of white around a code that the QR standard asks for.
    public static let quietZone = 4
    /// The fonts the text is set in: monospaced, so its width is known before a viewer draws it.
    static let fonts = "DejaVu Sans Mono, Liberation Mono, Menlo, Consolas, monospace"

    /// The pages for `labels` on `sheet`, in order, each filled row by row from the top left;
    /// the last page may have places left empty. All in memory: for a long list, `check` it and
    /// make one `page` at a time.
    public static func pages(_ labels: [StationLabel], on sheet: LabelSheet) throws(LabelError) -> [String] {
        try check(labels, on: sheet)
        let count = pageCount(labels.count, on: sheet)
        var pages: [String] = []
        for number in stride(from: 1, through: count, by: 1) { pages.append(try page(number, of: labels, on: sheet)) }
        return pages
    }

    /// How many pages `labels` labels take on `sheet`.
    public static func pageCount(_ labels: Int, on sheet: LabelSheet) -> Int {
        (labels + sheet.labelsPerPage - 1) / sheet.labelsPerPage
    }

    /// The smallest module (mm) a label's code may have: about three dots of a 300 dpi printer,
    /// and what a phone camera resolves at reading distance. (Measured: codes of 0.18 mm modules
    /// decoded only from 600 dpi renderings, 0.28 mm ones from 300 dpi but not 150.)
    public static let minimumModule = 0.25

    /// Refuses labels whose QR string no QR code holds, or whose code would be too fine on this
    /// sheet's labels to be read, before any page is made, so that a command writes all its
    /// pages or none for that reason.
    public static func check(_ labels: [StationLabel], on sheet: LabelSheet) throws(LabelError) {
        for label in labels {
            guard label.qrText.utf8.count <= QREncoder.capacity else {
                throw LabelError(station: label.name, problem: .tooLong(bytes: label.qrText.utf8.count))
            }
            let code: QRMatrix
            do { code = try QREncoder.encode(Array(label.qrText.utf8)) } catch {
                throw LabelError(station: label.name, problem: error)
            }
            let module = sheet.layout.code.side / Double(code.size + 2 * quietZone)
            guard module >= minimumModule else {
                throw LabelError(
                    station: label.name,
                    problem: .modulesTooSmall(version: code.version, millimetres: module, minimum: minimumModule))
            }
        }
    }

    /// Page `number` (from 1) of `labels` on `sheet`: its codes are made only now, so a long list
    /// never holds more than a page in memory.
    public static func page(_ number: Int, of labels: [StationLabel], on sheet: LabelSheet) throws(LabelError)
        -> String
    {
        let perPage = sheet.labelsPerPage
        let range = (number - 1) * perPage..<min(labels.count, number * perPage)
        var entries: [(StationLabel, QRMatrix)] = []
        for label in labels[range] {
            do { entries.append((label, try QREncoder.encode(Array(label.qrText.utf8)))) } catch {
                throw LabelError(station: label.name, problem: error)
            }
        }
        return page(entries, sheet: sheet, number: number, of: pageCount(labels.count, on: sheet))
    }

    /// One page: the labels in `entries` at the sheet's first places.
    static func page(_ entries: [(StationLabel, QRMatrix)], sheet: LabelSheet, number: Int, of count: Int) -> String {
        let page = sheet.page
        let width = SVGNumber.text(page.width)
        let height = SVGNumber.text(page.height)
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- ccbeacon labels: page \(number) of \(count), sheet \(sheet.name), \(entries.count) label\(entries.count == 1 ? "" : "s") -->
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(width)mm" height="\(height)mm" viewBox="0 0 \(width) \(height)">
            <defs><clipPath id="label"><rect width="\(SVGNumber.text(sheet.label.width))" height="\(SVGNumber.text(sheet.label.height))"/></clipPath></defs>
            <rect width="\(width)" height="\(height)" fill="#fff"/>

            """
        for (place, (label, code)) in entries.enumerated() {
            let origin = sheet.origin(of: place)
            svg += element(label, code: code, layout: sheet.layout, x: origin.x, y: origin.y)
        }
        return svg + "</svg>\n"
    }

    /// One label as a group at (`x`, `y`), clipped to the label.
    static func element(_ label: StationLabel, code: QRMatrix, layout: LabelLayout, x: Double, y: Double) -> String {
        let n = SVGNumber.text
        var lines: [(text: String, size: Double, bold: Bool)] = []
        // Cut as shown (controls made visible first), so an escape is never split.
        lines.append(
            (TextWidth.fitted(XMLText.visible(label.name), columns: layout.nameColumns), layout.nameFontSize, true))
        let uuid = label.identity.uuid.uuidString.uppercased()
        let split = uuid.index(uuid.startIndex, offsetBy: 19)
        lines.append((String(uuid[..<split]), layout.fontSize, false))
        lines.append((String(uuid[split...]), layout.fontSize, false))
        lines.append(("major \(label.identity.major)", layout.fontSize, false))
        lines.append(("minor \(label.identity.minor)", layout.fontSize, false))
        if let address = label.address { lines.append((address.description, layout.fontSize, false)) }
        var group = """
            <g transform="translate(\(n(x)) \(n(y)))" clip-path="url(#label)">
            <title>\(XMLText.escaped(label.name))</title>
            \(path(code, layout: layout))

            """
        // The text block is centred in its box; each line's baseline one em below its top.
        var top =
            layout.text.y
            + (layout.text.height - LabelLayout.textHeight * layout.fontSize) / 2
        for line in lines {
            let baseline = top + line.size
            group +=
                "<text x=\"\(n(layout.text.x))\" y=\"\(n(baseline))\" font-family=\"\(XMLText.escaped(fonts))\" font-size=\"\(n(line.size))\"\(line.bold ? " font-weight=\"bold\"" : "")>\(XMLText.escaped(line.text))</text>\n"
            top += line.size * LabelLayout.lineHeight
        }
        return group + "</g>\n"
    }

    /// The code as one path in module units, scaled into the layout's square with the quiet
    /// zone around it.
    static func path(_ code: QRMatrix, layout: LabelLayout) -> String {
        let module = layout.code.side / Double(code.size + 2 * quietZone)
        var d = ""
        for run in code.darkRuns {
            d += "M\(run.column + quietZone) \(run.row + quietZone)h\(run.length)v1h-\(run.length)z"
        }
        let n = SVGNumber.text
        return
            "<path transform=\"translate(\(n(layout.code.x)) \(n(layout.code.y))) scale(\(scale(module)))\" shape-rendering=\"crispEdges\" fill=\"#000\" d=\"\(d)\"/>"
    }

    /// A module's size with six decimals: three would move the far edge of a 53-module code by
    /// up to 0.03 mm.
    static func scale(_ value: Double) -> String {
        let millionths = Int((value * 1_000_000).rounded())
        let fraction = String(millionths % 1_000_000)
        return "\(millionths / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }
}

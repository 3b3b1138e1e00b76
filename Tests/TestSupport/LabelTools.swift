import Foundation

/// Debian's rsvg-convert and zbarimg, the independent renderer and decoder of the labels.
public enum LabelTools {
    /// librsvg's renderer (package librsvg2-bin).
    public static let rsvgConvert = "/usr/bin/rsvg-convert"
    /// zbar's decoder (package zbar-tools).
    public static let zbarimg = "/usr/bin/zbarimg"
    /// Whether both are installed.
    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: rsvgConvert)
            && FileManager.default.isExecutableFile(atPath: zbarimg)
    }

    /// The scales each page is rendered at: a screen width without a background (the page's own
    /// white must do), and 150 and 300 dpi on white, as printers and scanners see it.
    public static let scales: [[String]] = [
        ["-w", "1000"], ["-d", "150", "-p", "150", "-b", "white"], ["-d", "300", "-p", "300", "-b", "white"],
    ]

    /// A renderer or decoder that failed.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed, with its output.
        public let description: String
    }

    /// What zbarimg decodes in `svg` rendered at `scale`: one string per code found.
    public static func decode(_ svg: String, scale: [String], in folder: TemporaryFolder) throws -> [String] {
        let png = svg + "." + scale.joined().replacingOccurrences(of: "-", with: "") + ".png"
        let render = try ChildProcess.run(rsvgConvert, scale + [svg, "-o", png], in: folder.url, timeout: 60)
        guard render.status == 0 else { throw Failure(description: "rsvg-convert \(scale) \(svg): \(render.errors)") }
        defer { try? FileManager.default.removeItem(atPath: png) }
        // zbarimg exits 4 when an image holds no code it can read; the caller's check sees that.
        let read = try ChildProcess.run(zbarimg, ["-q", "--raw", png], in: folder.url, timeout: 60)
        guard read.status == 0 || read.status == 4 else {
            throw Failure(description: "zbarimg \(png): \(read.errors)")
        }
        return read.output.split(separator: "\n").map(String.init)
    }

    /// Every string decoded on `svg` over all `scales` together.
    public static func decodeAll(_ svg: String, in folder: TemporaryFolder) throws -> Set<String> {
        var found = Set<String>()
        for scale in scales { found.formUnion(try decode(svg, scale: scale, in: folder)) }
        return found
    }
}

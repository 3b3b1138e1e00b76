public import FirmwareTemplate
import Storage
public import TargetData
import TemplateFiles

/// The checkout's own `boards/` and `firmware-templates/`, loaded as ccbeacon loads them, so tests
/// use the shipped chip facts and templates rather than copies of them.
public enum BundledData {
    /// `boards/` (chips.json and every board).
    public static func boards() throws -> BoardCatalog {
        let directory = SharedFixtures.checkout.appendingPathComponent("boards").path
        let files = try Files.list(directory).map { (name: $0, bytes: try Files.read(directory + "/" + $0)) }
        return try BoardCatalog.load(files: files, directory: directory)
    }

    /// The chip called `name` in `boards/chips.json`.
    public static func chip(_ name: String) throws -> Chip {
        guard let chip = try boards().chip(named: name) else { throw MissingChip(name: name) }
        return chip
    }

    /// The bundled template called `name`.
    public static func template(_ name: String = "cc2541-ibeacon") throws -> StationTemplate {
        try TemplateFolder.load(
            SharedFixtures.checkout.appendingPathComponent("firmware-templates/\(name)").path,
            catalog: try boards())
    }

    /// `boards/chips.json` has no chip of that name.
    public struct MissingChip: Error {
        /// The name asked for.
        public var name: String
    }
}

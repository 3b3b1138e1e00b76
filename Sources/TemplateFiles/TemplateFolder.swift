public import FirmwareTemplate
import Storage
public import TargetData

/// A template as a folder on disk: `template.json` and the image it names. The file reading lives
/// here (Linux: `Storage`), apart from `StationTemplate`, which only checks and patches the bytes
/// it is given wherever they come from.
public enum TemplateFolder {
    /// Loads `directory/template.json` and its image, and checks them (see
    /// `StationTemplate.init(manifest:…)`).
    public static func load(_ directory: String, catalog: BoardCatalog) throws(TemplateError) -> StationTemplate {
        let manifestPath = Files.join(directory, "template.json")
        let manifestBytes: [UInt8]
        do { manifestBytes = try Files.read(manifestPath) } catch { throw .file(error.description) }
        let manifest: TemplateManifest
        do { manifest = try TemplateManifest.read(manifestBytes, file: manifestPath) } catch { throw .manifest(error) }
        let imagePath = Files.join(directory, manifest.image)
        // An image name that leads back to the manifest (a link) is that file, not an image that
        // changed.
        if PathIdentity.same(imagePath, manifestPath) {
            throw .imageIsManifest(imagePath: imagePath, manifestPath: manifestPath)
        }
        let imageBytes: [UInt8]
        do { imageBytes = try Files.read(imagePath) } catch { throw .file(error.description) }
        return try StationTemplate(
            manifest: manifest, imageBytes: imageBytes, imagePath: imagePath, directory: directory, catalog: catalog)
    }
}

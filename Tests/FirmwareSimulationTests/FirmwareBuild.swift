import Foundation
import TestSupport

/// The reference firmware built once per test run from `firmware-templates/cc2541-ibeacon` with
/// its own Makefile, in a scratch folder: the two shipped images, the bench (sniff) template and
/// the `-DSIM` builds.
struct FirmwareBuild: Sendable {
    static let source = SharedFixtures.checkout.appendingPathComponent("firmware-templates/cc2541-ibeacon")
    static let prewhitenedSource = SharedFixtures.checkout.appendingPathComponent(
        "firmware-templates/cc2541-ibeacon-prewhitened")

    static let sdcc = ["/usr/bin/sdcc", "/usr/local/bin/sdcc"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let s51 = ["/usr/bin/s51", "/usr/local/bin/s51"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The SDCC version the committed images were built with (Debian 12's package).
    static let pinnedSDCCVersion = "4.2.0"

    /// Whether the installed SDCC is that version, so its output must equal the committed images.
    static let hasPinnedSDCC: Bool = {
        guard let sdcc, let result = try? ChildProcess.run(sdcc, ["--version"], in: URL(fileURLWithPath: "/"))
        else { return false }
        return result.output.contains(" \(pinnedSDCCVersion) ")
    }()

    /// Whether SDCC and make (for building) are installed.
    static var canBuild: Bool { sdcc != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/make") }
    /// Whether SDCC and the s51 simulator (Debian `sdcc-ucsim`) are installed.
    static var canSimulate: Bool { canBuild && s51 != nil }

    /// The build, made on first use; `nil` with the reason when `make` failed.
    static let shared: Result<FirmwareBuild, BuildFailure> = {
        do { return .success(try FirmwareBuild()) } catch let failure as BuildFailure {
            return .failure(failure)
        } catch {
            return .failure(BuildFailure(message: "\(error)"))
        }
    }()

    /// Why the build failed.
    struct BuildFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The scratch folder holding `src/`, `Makefile` and everything built.
    let directory: URL

    private init() throws {
        directory = try TemporaryFolder(prefix: "firmware").url
        try FileManager.default.copyItem(
            at: Self.source.appendingPathComponent("src"), to: directory.appendingPathComponent("src"))
        for file in ["Makefile", "template.json"] {
            try FileManager.default.copyItem(
                at: Self.source.appendingPathComponent(file), to: directory.appendingPathComponent(file))
        }
        let make = try ChildProcess.run(
            "/usr/bin/make", ["PREWHITENED_IMAGE=prewhitened.hex", "all", "sim", "sniff-template"], in: directory,
            timeout: 300)
        guard make.status == 0 else {
            throw BuildFailure(message: "make failed (\(make.status)):\n\(make.output)\n\(make.errors)")
        }
    }

    /// A file of the build.
    func url(_ path: String) -> URL { directory.appendingPathComponent(path) }

    /// The shipped image (`image.hex`) as built here.
    var image: URL { url("image.hex") }
    /// The shipped fallback image as built here.
    var prewhitenedImage: URL { url("prewhitened.hex") }
    /// The `-DSIM` build of the standard firmware.
    var simulationImage: URL { url("build/sim/beacon.ihx") }
    /// The `-DSIM -DPREWHITENED` build.
    var prewhitenedSimulationImage: URL { url("build/prewhitened-sim/beacon.ihx") }
    /// The `-DSIM -DSNIFF` build.
    var sniffSimulationImage: URL { url("build/sniff-sim/beacon.ihx") }
    /// The bench template `make sniff-template` makes.
    var sniffTemplate: URL { url("build/sniff-template") }

    /// The linker map of a variant (`standard`, `prewhitened`, `sim`, `prewhitened-sim`).
    func map(_ variant: String) throws -> LinkerMap {
        try LinkerMap(text: String(decoding: try Data(contentsOf: url("build/\(variant)/beacon.map")), as: UTF8.self))
    }

    /// The build, or a test failure that says why there is none.
    static func require() throws -> FirmwareBuild {
        try shared.get()
    }
}

/// The parts of an SDCC (sdld) linker map the static checks need.
struct LinkerMap {
    /// Global symbols and their addresses (`_main`, `_advertising_pdu`, …).
    var symbols: [String: Int] = [:]
    /// Areas with their start address and size in bytes (`CSEG`, `PMENTRY`, …).
    var areas: [String: (start: Int, size: Int)] = [:]
    /// The end (exclusive) of the code the linker placed (relocatable code areas).
    var relocatableCodeEnd = 0

    init(text: String) throws {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // "     C:   00007F00  _advertising_pdu                   beacon"
            if fields.count >= 3, fields[0].count == 2, fields[0].hasSuffix(":"), let value = Int(fields[1], radix: 16),
                fields[2].hasPrefix("_")
            {
                symbols[String(fields[2])] = value
            }
            // "CSEG                                00000087    00000627 =        1575. bytes (REL,CON,CODE)"
            if fields.count >= 4, fields[3] == "=", let start = Int(fields[1], radix: 16),
                let size = Int(fields[2], radix: 16), line.contains("bytes")
            {
                areas[String(fields[0])] = (start, size)
                if line.contains("(REL,"), line.contains("CODE") {
                    relocatableCodeEnd = max(relocatableCodeEnd, start + size)
                }
            }
        }
    }
}

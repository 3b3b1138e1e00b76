public import BeaconPayload
import Checksums
public import IntelHex
public import StructuredText
public import TargetData

/// An advertising setting a template may carry (see `StationSettings`).
public enum StationSetting: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// The advertiser address.
    case address
    /// The advertising interval.
    case interval
    /// The radio output power.
    case txPower

    /// The setting in words: "an advertiser address".
    public var description: String {
        switch self {
        case .address: return "an advertiser address"
        case .interval: return "an advertising interval"
        case .txPower: return "a TX power"
        }
    }
}

/// Why a template cannot be used, with what to do about it.
public enum TemplateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No template of that name in the searched folders.
    case notFound(name: String, searched: [String])
    /// `template.json` is malformed.
    case manifest(DataFileError)
    /// A file could not be read: what the file system said (`cannot read 'PATH': REASON`).
    case file(String)
    /// The image is not valid Intel HEX.
    case image(HexReadError)
    /// The image's name leads to the manifest itself (a link to template.json).
    case imageIsManifest(imagePath: String, manifestPath: String)
    /// The image file's SHA-256 differs from the manifest's.
    case imageChanged(path: String, expected: String, actual: String)
    /// The manifest names a chip `boards/chips.json` does not know.
    case unknownChip(name: String, known: [String])
    /// The image does not hold all bytes of a field.
    case fieldNotInImage(field: String, address: Int)
    /// The image holds other bytes than the placeholder at a field.
    case placeholderMismatch(field: String, address: Int, expected: [UInt8], found: [UInt8])
    /// A field lies in flash the stack or the chip uses for itself.
    case reservedArea(field: String, address: Int, use: String)
    /// A field or the image lies beyond the chip's flash.
    case beyondFlash(what: String, address: Int, flashSize: Int)
    /// The manifest says OAD but the image's header does not check out.
    case oadHeaderInvalid(address: Int)
    /// A setting was given for a template without the field for it.
    case settingNotSupported(setting: StationSetting, template: String)
    /// The TX power is not one of the chip's steps.
    case txPowerNotAStep(dBm: Int, chip: String, steps: [Int])

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .notFound(let name, let searched):
            return
                "no template '\(name)' (searched: \(searched.isEmpty ? "nothing" : searched.joined(separator: ", ")))"
        case .manifest(let error): return error.description
        case .file(let reason): return reason
        case .image(let error): return error.description
        case .imageIsManifest(let imagePath, let manifestPath):
            return "\(imagePath) is \(manifestPath) itself (a link to it), not a firmware image"
        case .imageChanged(let path, let expected, let actual):
            return
                "\(path) has changed since the template was made: its sha256 is \(actual), template.json says \(expected)"
        case .unknownChip(let name, let known):
            return "chip '\(name)' is not in boards/chips.json (known: \(known.joined(separator: ", ")))"
        case .fieldNotInImage(let field, let address):
            return "field '\(field)' at \(hex(address)) is not (wholly) in the image"
        case .placeholderMismatch(let field, let address, let expected, let found):
            return
                "the image does not hold field '\(field)''s placeholder at \(hex(address)): expected \(expected.map(hex2).joined(separator: " ")), found \(found.map(hex2).joined(separator: " "))"
        case .reservedArea(let field, let address, let use):
            return "field '\(field)' at \(hex(address)) lies in \(use); patching it there is refused"
        case .beyondFlash(let what, let address, let flashSize):
            return "\(what) at \(hex(address)) lies beyond the chip's \(flashSize / 1024) KiB of flash"
        case .oadHeaderInvalid(let address):
            return "template.json declares an OAD header at \(hex(address)) but the image's CRC does not match it"
        case .settingNotSupported(let setting, let template):
            return "template '\(template)' has no field for \(setting)"
        case .txPowerNotAStep(let dBm, let chip, let steps):
            return steps.isEmpty
                ? "boards/chips.json gives no TX power steps for the \(chip), so a TX power of \(dBm) dBm cannot be mapped"
                : "\(dBm) dBm is not a TX power step of the \(chip); its steps are \(steps.map(String.init).joined(separator: ", ")) dBm"
        }
    }

}

/// A station's image: the template with one identity patched in.
public struct StationImage: Sendable {
    /// The patched HEX file (text and memory).
    public var file: IntelHexFile
    /// The identity it carries.
    public var identity: IBeacon
    /// Address of the patched iBeacon field.
    public var payloadAddress: Int
    /// Lines of the template that were rewritten.
    public var rewrittenLines: [Int]
    /// The settings fields' values in this image.
    public var settings: FoundSettings
}

/// The result of checking an image against an expected identity.
public struct VerificationReport: Sendable, Equatable {
    /// True when the image carries exactly the expected identity (and nothing else differs).
    public var passed: Bool { problems.isEmpty }
    /// Address of the iBeacon field checked.
    public var address: Int
    /// The identity found there, if the bytes decode.
    public var found: IBeacon?
    /// Every difference, one line each.
    public var problems: [String]
    /// Notes that do not fail the check.
    public var notes: [String]
}

/// A template ready for use: manifest, chip, parsed image, all checked against each other.
public struct StationTemplate: Sendable {
    // Immutable: `init` establishes that every field is in the image with its placeholder, which
    // is what lets `stationImage` patch without a failure path.

    /// The manifest.
    public let manifest: TemplateManifest
    /// The folder it was loaded from.
    public let directory: String
    /// The chip facts.
    public let chip: Chip
    /// The template image.
    public let image: IntelHexFile
    /// The OAD header, for OAD templates.
    public let oadHeader: OADHeader?

    /// The iBeacon field.
    public var beaconField: PatchField { manifest.beaconField! }

    /// The files the template was loaded from (its manifest and image), which no output may replace.
    public var files: [String] {
        let folder = directory.hasSuffix("/") ? directory : directory + "/"
        return [folder + "template.json", folder + manifest.image]
    }

    /// Checks a manifest against its image: the image's SHA-256, a known chip, the image inside the
    /// chip's flash, every field wholly in the image, outside reserved flash and holding exactly its
    /// placeholder, and a valid OAD header where one is declared.
    public init(
        manifest: TemplateManifest, imageBytes: [UInt8], imagePath: String, directory: String, catalog: BoardCatalog
    ) throws(TemplateError) {
        let digest = SHA256.hexDigest(imageBytes)
        guard digest == manifest.imageSHA256 else {
            throw .imageChanged(path: imagePath, expected: manifest.imageSHA256, actual: digest)
        }
        guard let chip = catalog.chip(named: manifest.chip) else {
            throw .unknownChip(name: manifest.chip, known: catalog.chips.map(\.name))
        }
        let image: IntelHexFile
        do { image = try IntelHexFile(text: imageBytes, fileName: imagePath) } catch { throw .image(error) }
        if let end = image.memory.endAddress, end > chip.flashSize {
            throw .beyondFlash(what: "image data", address: end - 1, flashSize: chip.flashSize)
        }
        for field in manifest.fields {
            guard field.range.upperBound <= chip.flashSize else {
                throw .beyondFlash(
                    what: "field '\(field.name)'", address: field.address, flashSize: chip.flashSize)
            }
            if let use = field.range.lazy.compactMap({ chip.reservedUse(of: $0) }).first {
                throw .reservedArea(field: field.name, address: field.address, use: use)
            }
            guard let bytes = image.memory.contiguousBytes(in: field.range) else {
                throw .fieldNotInImage(field: field.name, address: field.address)
            }
            guard bytes == field.placeholder else {
                throw .placeholderMismatch(
                    field: field.name, address: field.address, expected: field.placeholder, found: bytes)
            }
        }
        var oadHeader: OADHeader?
        if let oad = manifest.oad {
            guard let header = OADHeader.read(image.memory, at: oad.headerAddress, layout: oad.layout),
                header.computeCRC(image.memory) == header.crc0
            else { throw .oadHeaderInvalid(address: oad.headerAddress) }
            oadHeader = header
        }
        self.manifest = manifest
        self.directory = directory
        self.chip = chip
        self.image = image
        self.oadHeader = oadHeader
    }

    /// The bytes the iBeacon field holds for `identity`: the template's own header bytes (its Flags
    /// value included) followed by the identity.
    public func fieldBytes(for identity: IBeacon) -> [UInt8] {
        let field = beaconField
        return Array(field.placeholder[0..<field.kind.identityOffset]) + identity.payload
    }

    /// The template with `identity` patched in, line-preserving, with a fresh OAD CRC if it has one;
    /// a template with an advertiser-address field gets the address derived from the identity.
    public func stationImage(for identity: IBeacon) -> StationImage {
        makeStationImage(for: identity, settings: StationSettings())
    }

    /// The template with `identity` and `settings` (checked by `check` for this template) patched in.
    public func stationImage(for identity: IBeacon, settings: CheckedSettings) -> StationImage {
        precondition(settings.templateName == manifest.name, "settings checked for another template")
        return makeStationImage(for: identity, settings: settings.settings)
    }

    func makeStationImage(for identity: IBeacon, settings: StationSettings) -> StationImage {
        let field = beaconField
        // Every field's bytes were checked to be in the image, so no patch can miss a record.
        let patched = try! image.patchingRecords(
            [MemoryPatch(address: field.address, bytes: fieldBytes(for: identity))]
                + settingsPatches(for: identity, settings: settings))
        var file = patched.file
        var lines = patched.rewrittenLines
        if let oadHeader {
            let crc = try! file.patchingRecords(oadHeader.crcPatches(for: file.memory))
            file = crc.file
            lines = Array(Set(lines + crc.rewrittenLines)).sorted()
        }
        return StationImage(
            file: file, identity: identity, payloadAddress: field.address, rewrittenLines: lines,
            settings: foundSettings(in: file.memory))
    }

    /// Checks that `memory` is this template carrying `expected` (power ignored when `nil`): the
    /// field's header bytes as in the template, the identity, the settings `settings` names (the
    /// others only checked to be valid, and listed in the notes), every other byte as in the
    /// template, and a valid OAD CRC where the template has one.
    public func verify(
        _ memory: MemoryImage, expected: IBeacon, checkPower: Bool, settings: StationSettings = StationSettings()
    ) -> VerificationReport {
        let field = beaconField
        var problems: [String] = []
        var notes: [String] = []
        var found: IBeacon?
        if let bytes = memory.contiguousBytes(in: field.range) {
            let header = Array(bytes[0..<field.kind.identityOffset])
            if header != Array(field.placeholder[0..<field.kind.identityOffset]) {
                problems.append(
                    "the advertising data header at \(hex(field.address)) is \(header.map(hex2).joined(separator: " ")), the template has \(field.placeholder[0..<field.kind.identityOffset].map(hex2).joined(separator: " "))"
                )
            }
            found = IBeacon(payload: bytes[field.kind.identityOffset...])
            if let found {
                problems += Self.differences(found: found, expected: expected, checkPower: checkPower)
                if !checkPower { notes.append("power not checked (the image has \(found.measuredPower) dBm)") }
            }
        } else {
            problems.append("the image holds no complete iBeacon field at \(hex(field.address))")
        }
        let foundValues = foundSettings(in: memory)
        problems += settingsProblems(foundValues, expected: settings)
        notes += describe(foundValues)
        var expectedMemory = image.memory
        try? expectedMemory.write(fieldBytes(for: found ?? expected), at: field.address)
        // The settings fields hold what was found; their checks are the lines above.
        for settingsField in manifest.fields where !settingsField.kind.isBeaconField {
            if let bytes = memory.contiguousBytes(in: settingsField.range) {
                try? expectedMemory.write(bytes, at: settingsField.address)
            }
        }
        if let oadHeader {
            for patch in oadHeader.crcPatches(for: expectedMemory) {
                try? expectedMemory.write(patch.bytes, at: patch.address)
            }
        }
        if let difference = Self.firstDifference(memory, expectedMemory, ignoring: field.range) {
            problems.append(
                "the image differs from template '\(manifest.name)' outside the payload: \(difference)")
        }
        if let oadHeader, let header = OADHeader.read(memory, at: oadHeader.address, layout: oadHeader.layout),
            header.computeCRC(memory) != header.crc0
        {
            problems.append(
                "the OAD header's CRC at \(hex(oadHeader.address)) does not match the image; the boot manager will reject it"
            )
        }
        return VerificationReport(address: field.address, found: found, problems: problems, notes: notes)
    }

    /// One line per field that differs.
    public static func differences(found: IBeacon, expected: IBeacon, checkPower: Bool) -> [String] {
        var lines: [String] = []
        if found.uuid != expected.uuid {
            lines.append("uuid: expected \(expected.uuid.uuidString), found \(found.uuid.uuidString)")
        }
        if found.major != expected.major { lines.append("major: expected \(expected.major), found \(found.major)") }
        if found.minor != expected.minor { lines.append("minor: expected \(expected.minor), found \(found.minor)") }
        if checkPower, found.measuredPower != expected.measuredPower {
            lines.append("power: expected \(expected.measuredPower) dBm, found \(found.measuredPower) dBm")
        }
        return lines
    }

    /// Where two images differ (outside `ignoring`), described; `nil` when they agree.
    static func firstDifference(_ a: MemoryImage, _ b: MemoryImage, ignoring: Range<Int>) -> String? {
        var count = 0
        var first: Int?
        for piece in a.pieces(togetherWith: b) {
            let left = a.bytes(in: piece, fill: 0xFF)
            let right = b.bytes(in: piece, fill: 0xFF)
            for offset in 0..<left.count
            where left[offset] != right[offset] && !ignoring.contains(piece.lowerBound + offset) {
                count += 1
                if first == nil { first = piece.lowerBound + offset }
            }
        }
        guard let first else { return nil }
        return "\(count) byte\(count == 1 ? "" : "s"), the first at \(hex(first))"
    }
}

import Checksums
public import IntelHex
public import TargetData

/// A beacon block found while importing, and why it cannot be the template's field (if it cannot).
public struct ImportCandidate: Sendable, Equatable {
    /// The block.
    public var beacon: FoundBeacon
    /// Why it is refused, or `nil` when it is eligible.
    public var refusal: String?
}

/// Why an image cannot become a template.
public enum ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The image holds no contiguous iBeacon block at all.
    case noBlock
    /// Every iBeacon block lies in flash the chip or stack reserves.
    case onlyRefused([ImportCandidate])
    /// More than one eligible block; the user must choose.
    case ambiguous([ImportCandidate])
    /// `--address` names no block.
    case noBlockAtAddress(Int, [ImportCandidate])
    /// `--address` names a refused block.
    case refusedAtAddress(ImportCandidate)
    /// The image does not fit the chip.
    case beyondFlash(end: Int, chip: String, flashSize: Int)

    /// Plain-words reason, with the candidates listed where there are any (`lines`).
    public var description: String { lines.joined(separator: "\n") }

    /// The reason as lines: the first says what is wrong, the others (indented) list the blocks.
    public var lines: [String] {
        switch self {
        case .noBlock:
            return [
                "no iBeacon advertising block in the image (02 01 xx 1A FF 4C 00 02 15 + 21 bytes, or 1A FF 4C 00 02 15 + 21 bytes, in one contiguous run)"
            ]
        case .onlyRefused(let candidates):
            return ["every iBeacon block found lies where it cannot be patched:"] + Self.list(candidates)
        case .ambiguous(let candidates):
            return ["\(candidates.filter { $0.refusal == nil }.count) iBeacon blocks found; one must be chosen:"]
                + Self.list(candidates)
        case .noBlockAtAddress(let address, let candidates):
            return ["no iBeacon block starts at \(hex(address)); the blocks found are:"] + Self.list(candidates)
        case .refusedAtAddress(let candidate):
            return ["the block at \(hex(candidate.beacon.address)) cannot be used: \(candidate.refusal ?? "")"]
        case .beyondFlash(let end, let chip, let flashSize):
            return ["the image reaches \(hex(end - 1)), beyond the \(flashSize / 1024) KiB of a \(chip)"]
        }
    }

    static func list(_ candidates: [ImportCandidate]) -> [String] {
        candidates.map { candidate in
            "  \(hex(candidate.beacon.address)): \(candidate.beacon.summary)"
                + (candidate.refusal.map { " — refused: \($0)" } ?? "")
        }
    }
}

/// Turning a firmware image into a template.
public enum TemplateImport {
    /// Every iBeacon block of `memory`, each marked eligible or refused for `chip`.
    public static func candidates(in memory: MemoryImage, chip: Chip) -> [ImportCandidate] {
        PayloadFinder.find(memory).filter(\.isIBeacon).map { beacon in
            let range = beacon.address..<(beacon.address + beacon.length)
            let refusal: String? =
                range.upperBound > chip.flashSize
                ? "beyond the chip's flash"
                : range.lazy.compactMap { chip.reservedUse(of: $0) }.first.map { "it lies in \($0)" }
            return ImportCandidate(beacon: beacon, refusal: refusal)
        }
    }

    /// The block to patch: the only eligible one, or the one starting at `address`.
    public static func chooseBlock(in memory: MemoryImage, chip: Chip, address: Int?) throws(ImportError) -> (
        chosen: FoundBeacon, candidates: [ImportCandidate]
    ) {
        if let end = memory.endAddress, end > chip.flashSize {
            throw .beyondFlash(end: end, chip: chip.name, flashSize: chip.flashSize)
        }
        let candidates = candidates(in: memory, chip: chip)
        if let address {
            guard let candidate = candidates.first(where: { $0.beacon.address == address }) else {
                throw candidates.isEmpty ? .noBlock : .noBlockAtAddress(address, candidates)
            }
            guard candidate.refusal == nil else { throw .refusedAtAddress(candidate) }
            return (candidate.beacon, candidates)
        }
        let eligible = candidates.filter { $0.refusal == nil }
        switch eligible.count {
        case 1: return (eligible[0].beacon, candidates)
        case 0: throw candidates.isEmpty ? .noBlock : .onlyRefused(candidates)
        default: throw .ambiguous(candidates)
        }
    }

    /// The manifest for a template whose image file is `imageBytes`, patched at `beacon`.
    public static func manifest(
        name: String, description: String, chip: Chip, imageFileName: String, imageBytes: [UInt8],
        beacon: FoundBeacon, memory: MemoryImage
    ) -> TemplateManifest {
        let kind: PatchField.Kind =
            if case .iBeaconManufacturerData = beacon.layout { .iBeaconManufacturerData } else {
                .iBeaconAdvertisingData
            }
        let placeholder = memory.contiguousBytes(in: beacon.address..<(beacon.address + kind.length)) ?? []
        let oad = OADHeader.validHeader(in: memory).map { OADSpec(headerAddress: $0.address, layout: $0.layout) }
        return TemplateManifest(
            name: name, description: description, chip: chip.name, image: imageFileName,
            imageSHA256: SHA256.hexDigest(imageBytes), payloadFormat: .ibeacon,
            fields: [
                PatchField(name: "advertisingData", kind: kind, address: beacon.address, placeholder: placeholder)
            ],
            oad: oad)
    }

    /// The HEX text to store for a `.bin` import: every 2 KiB page that is entirely 0xFF is left
    /// out (after a chip erase it reads the same), so a full-flash dump does not make the template
    /// write the NV and lock pages.
    public static func hexText(forBinary memory: MemoryImage, pageSize: Int) -> [UInt8] {
        var trimmed = MemoryImage()
        for segment in memory.segments {
            var page = segment.start - segment.start % pageSize
            while page < segment.end {
                let range = max(page, segment.start)..<min(page + pageSize, segment.end)
                let bytes = Array(
                    segment.bytes[(range.lowerBound - segment.start)..<(range.upperBound - segment.start)])
                if bytes.contains(where: { $0 != 0xFF }) { try? trimmed.write(bytes, at: range.lowerBound) }
                page += pageSize
            }
        }
        return HexWriter(recordLength: 16, lineEnding: .lf).text(for: trimmed)
    }
}

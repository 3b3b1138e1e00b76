public import IntelHex
public import TargetData

/// The flash bytes that make an image one particular station — what a burn must read back byte
/// for byte before it may call the chip verified (a CRC over the rest can be fooled; a byte
/// comparison of these cannot).
public enum IdentityBytes {
    /// Where the ranges came from.
    public enum Source: Sendable, Equatable {
        /// The image is a station of the template called `name`, made for `chip` (the one chip it
        /// runs on): its fields and OAD header.
        case template(name: String, chip: Chip)
        /// Found by scanning the image: this many beacon payloads, and an OAD header if one matched.
        case scanned(payloads: Int, oadHeader: Bool)
        /// Nothing in the image looks like an identity.
        case none
    }

    /// The OAD header's length in flash.
    static let oadHeaderLength = 16

    /// The identity ranges of `memory`: those of the first template `memory` is a station of,
    /// else every beacon payload the scanner finds plus a matching OAD header.
    public static func locate(in memory: MemoryImage, templates: [StationTemplate]) -> (
        ranges: [Range<Int>], source: Source
    ) {
        if let template = templates.first(where: { $0.isStation(memory) }) {
            return (template.identityRanges, .template(name: template.manifest.name, chip: template.chip))
        }
        let payloads = PayloadFinder.find(memory).map { $0.address..<($0.address + $0.length) }
        let header = OADHeader.detect(in: memory).map { [$0.address..<($0.address + oadHeaderLength)] } ?? []
        guard !payloads.isEmpty || !header.isEmpty else { return ([], .none) }
        return (payloads + header, .scanned(payloads: payloads.count, oadHeader: !header.isEmpty))
    }
}

extension StationTemplate {
    /// Every field the manifest declares (payload block, address, settings) and the OAD header.
    public var identityRanges: [Range<Int>] {
        manifest.fields.map(\.range)
            + (manifest.oad.map { [$0.headerAddress..<($0.headerAddress + IdentityBytes.oadHeaderLength)] } ?? [])
    }

    /// True when `memory` is a station image of this template: data at exactly the template's
    /// addresses, equal to the template everywhere but in its fields and OAD header.
    public func isStation(_ memory: MemoryImage) -> Bool {
        let own = image.memory
        guard memory.segments.map(\.range) == own.segments.map(\.range) else { return false }
        let masked = identityRanges
        for (station, template) in zip(memory.segments, own.segments) {
            var bytes = station.bytes
            for range in masked where range.overlaps(station.range) {
                let start = max(range.lowerBound, station.start)
                let end = min(range.upperBound, station.end)
                for address in start..<end { bytes[address - station.start] = template.bytes[address - station.start] }
            }
            if bytes != template.bytes { return false }
        }
        return true
    }
}

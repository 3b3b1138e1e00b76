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

    /// True when `memory` is a station image of this template: its code is the template's
    /// (`hasCode`) and its beacon field holds more than erased flash.
    public func isStation(_ memory: MemoryImage) -> Bool {
        // A station carries an identity: its beacon field holds more than erased flash.
        guard let field = manifest.beaconField,
            memory.bytes(in: field.range, fill: 0xFF).contains(where: { $0 != 0xFF })
        else { return false }
        return hasCode(of: memory)
    }

    /// True when `memory` holds this template's code: on an erased chip the two leave the same
    /// flash, the template's fields and OAD header aside (whatever the layout: a HEX of other
    /// records, a flat `.bin` with 0xFF between, a byte range a HEX leaves out that the template has
    /// as 0xFF).
    public func hasCode(of memory: MemoryImage) -> Bool {
        let own = image.memory
        guard !memory.segments.isEmpty else { return false }
        for piece in own.pieces(togetherWith: memory) {
            let template = own.bytes(in: piece, fill: 0xFF)
            var station = memory.bytes(in: piece, fill: 0xFF)
            for field in identityRanges {
                for address in field.clamped(to: piece) {
                    station[address - piece.lowerBound] = template[address - piece.lowerBound]
                }
            }
            if station != template { return false }
        }
        return true
    }
}

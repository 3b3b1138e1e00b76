import Checksums
public import IntelHex

/// The OAD image header TI's CC254x boot image manager (BIM) checks, and how to recompute its CRC.
///
/// Layout (little-endian, 16 bytes): crc0, crc1 (shadow), version, length in 4-byte words, user
/// ID (4), reserved (4). The CRC is CRC-16/UMTS over the image in logical order after its first 4
/// bytes, with 0xFF wherever the image holds nothing (beacon-formats.md §4; proven on the real OAD
/// images of the corpus by the tests).
public struct OADHeader: Sendable, Equatable {
    /// How the image's bytes are laid out in flash.
    public enum Layout: String, Sendable, Equatable {
        /// The image is one run starting at the header (OAD .bin files, Image B).
        case contiguous
        /// TI's Image A beside a BIM: pages 1–7, then the rest ending at the top of page 124.
        case bimImageA = "bim-image-a"
    }

    /// Flash address of the header.
    public var address: Int
    /// Which layout the CRC walks.
    public var layout: Layout
    /// The stored CRC.
    public var crc0: UInt16
    /// The shadow CRC (0xFFFF until the BIM has checked the image once).
    public var crc1: UInt16
    /// Image version (LSB 0 = Image A, 1 = Image B).
    public var version: UInt16
    /// Image length in 4-byte words.
    public var lengthWords: Int
    /// User ID bytes.
    public var userID: [UInt8]

    /// Where each candidate header address puts the header, in the order they are tried.
    static let candidates: [(address: Int, layout: Layout)] = [
        (0x0800, .bimImageA), (0x4000, .contiguous), (0x0000, .contiguous),
    ]

    /// The header at `address` read as `layout`, if 16 header bytes are there and plausible.
    public static func read(_ memory: MemoryImage, at address: Int, layout: Layout) -> OADHeader? {
        guard let bytes = memory.contiguousBytes(in: address..<(address + 16)) else { return nil }
        func word(_ offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8 }
        let lengthWords = Int(word(6))
        guard lengthWords > 1, lengthWords * 4 <= 0x40000 else { return nil }
        return OADHeader(
            address: address, layout: layout, crc0: word(0), crc1: word(2), version: word(4), lengthWords: lengthWords,
            userID: Array(bytes[8..<12]))
    }

    /// The OAD header found by its structure alone, whatever its CRC: a stored CRC that is set
    /// (neither 0x0000 nor 0xFFFF), a shadow CRC that is unset or equal to it, a length that fits
    /// the flash in its layout, and the 4 reserved bytes erased (0xFF), as TI's image header
    /// leaves them. On the 40 images of the corpus this finds exactly the headers whose CRC
    /// matches. `crcMatches(_:)` tells whether the image still agrees with it.
    public static func detect(in memory: MemoryImage) -> OADHeader? {
        candidates.lazy.compactMap { structural(memory, at: $0.address, layout: $0.layout) }.first
    }

    /// The first header whose stored CRC matches the image (what a BIM would boot), if any.
    public static func validHeader(in memory: MemoryImage) -> OADHeader? {
        candidates.lazy.compactMap { structural(memory, at: $0.address, layout: $0.layout) }.first {
            $0.crcMatches(memory)
        }
    }

    static func structural(_ memory: MemoryImage, at address: Int, layout: Layout) -> OADHeader? {
        guard let header = read(memory, at: address, layout: layout),
            header.crc0 != 0x0000, header.crc0 != 0xFFFF, header.crc1 == 0xFFFF || header.crc1 == header.crc0,
            memory.contiguousBytes(in: (address + 12)..<(address + 16)) == [0xFF, 0xFF, 0xFF, 0xFF],
            header.fitsFlash
        else { return nil }
        return header
    }

    /// Whether the length fits a 256 KiB flash in the header's layout.
    var fitsFlash: Bool {
        let total = lengthWords * 4
        switch layout {
        case .contiguous: return address + total <= 0x40000
        case .bimImageA: return total <= (0x4000 - address) + (0x3E800 - 0x4000)
        }
    }

    /// Whether the stored CRC is the image's.
    public func crcMatches(_ memory: MemoryImage) -> Bool { computeCRC(memory) == crc0 }

    /// The flash ranges the CRC covers, in the order the BIM walks them (bytes 0–3 excluded).
    public var crcRanges: [Range<Int>] {
        let total = lengthWords * 4
        switch layout {
        case .contiguous:
            return [(address + 4)..<(address + total)]
        case .bimImageA:
            let firstPart = 0x4000 - address  // pages 1–7
            guard total > firstPart else { return [(address + 4)..<(address + total)] }
            let rest = total - firstPart
            return [(address + 4)..<0x4000, (0x3E800 - rest)..<0x3E800]
        }
    }

    /// CRC-16/UMTS of the image as the BIM computes it.
    public func computeCRC(_ memory: MemoryImage) -> UInt16 {
        crcRanges.reduce(UInt16(0)) { crc, range in CRC16UMTS.update(crc, memory.bytes(in: range, fill: 0xFF)) }
    }

    /// The patches that make the header valid for `memory`: crc0 recomputed, crc1 back to 0xFFFF
    /// so the BIM checks the image on first boot.
    public func crcPatches(for memory: MemoryImage) -> [MemoryPatch] {
        let crc = computeCRC(memory)
        return [MemoryPatch(address: address, bytes: [UInt8(crc & 0xFF), UInt8(crc >> 8), 0xFF, 0xFF])]
    }

    /// `Image A` / `Image B`.
    public var imageName: String { version & 1 == 0 ? "Image A" : "Image B" }
}

public import IntelHex

/// Flash corruptions the chip's CRC cannot see, computed from the CRC's definition — to prove
/// that "verified" never rests on the CRC alone for the bytes that make a station.
///
/// The CC254x CRC unit computes CRC-16 with polynomial 0x8005 (x¹⁶+x¹⁵+x²+1), initial value 0xFFFF,
/// MSB first, per verified chunk. A CRC is affine: flipping a set of bits changes it by the XOR of
/// the changes each bit makes alone (its syndrome). So four bits whose syndromes XOR to zero leave
/// the CRC unchanged. (Fewer cannot: 0x8005 has the factor x+1, which catches every odd number
/// of flipped bits, and no two bits of a 1 KiB chunk share a syndrome.)
public enum CRCCollisions {
    /// One corrupted bit: the byte's address and the bit's mask.
    public struct Bit: Sendable, Hashable, CustomStringConvertible {
        /// Flash address.
        public var address: Int
        /// The bit within the byte (one bit set).
        public var mask: UInt8

        /// A bit.
        public init(address: Int, mask: UInt8) {
            self.address = address
            self.mask = mask
        }

        /// `0x7F13:0x20`.
        public var description: String {
            "0x\(String(address, radix: 16, uppercase: true)):0x\(String(mask, radix: 16, uppercase: true))"
        }
    }

    /// CRC-16/0x8005 with initial value 0xFFFF over `bytes`, bit by bit as the definition says.
    public static func crc(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for byte in bytes {
            for bit in (0..<8).reversed() {
                let incoming = UInt16((byte >> UInt8(bit)) & 1)
                let top = (crc >> 15) & 1
                crc <<= 1
                if top ^ incoming == 1 { crc ^= 0x8005 }
            }
        }
        return crc
    }

    /// Up to `count` disjoint sets of four bits inside `window`, each bit 1 in `memory` (so a
    /// stuck-at-zero cell clears it), whose clearing leaves the CRC of `chunk` unchanged.
    public static func stuckAtZero(in memory: MemoryImage, chunk: Range<Int>, window: Range<Int>, count: Int)
        -> [[Bit]]
    {
        let original = memory.bytes(in: chunk, fill: 0xFF)
        let base = crc(original)
        var bits: [(bit: Bit, syndrome: UInt16)] = []
        for address in window.clamped(to: chunk) {
            let byte = original[address - chunk.lowerBound]
            for shift in 0..<8 where byte & (1 << shift) != 0 {
                var changed = original
                changed[address - chunk.lowerBound] ^= 1 << shift
                bits.append((Bit(address: address, mask: 1 << shift), crc(changed) ^ base))
            }
        }
        // Meet in the middle: two disjoint pairs with the same XOR cancel out.
        var pairs: [UInt16: (Int, Int)] = [:]
        var found: [[Bit]] = []
        var used = Set<Int>()
        for second in bits.indices {
            for first in 0..<second {
                let key = bits[first].syndrome ^ bits[second].syndrome
                if let (a, b) = pairs[key], ![a, b].contains(first), ![a, b].contains(second),
                    used.isDisjoint(with: [a, b, first, second])
                {
                    found.append([a, b, first, second].map { bits[$0].bit })
                    used.formUnion([a, b, first, second])
                    if found.count == count { return found }
                } else if pairs[key] == nil {
                    pairs[key] = (first, second)
                }
            }
        }
        return found
    }

    /// The stuck-at-zero masks of a set of bits, merged per byte (as the emulator takes them).
    public static func masks(_ bits: [Bit]) -> [Int: UInt8] {
        bits.reduce(into: [:]) { $0[$1.address, default: 0] |= $1.mask }
    }
}

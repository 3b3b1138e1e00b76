import CSHA256

/// SHA-256 (FIPS 180-4), for naming firmware images by content. Written here because the toolchain
/// on Linux offers none without full Foundation or an outside package.
public struct SHA256: Sendable {
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0
    /// Whether blocks go through the processor's SHA instructions (`CSHA256`) rather than the
    /// Swift rounds below; both give the same digest, the tests check it.
    let accelerated: Bool

    /// Whether this processor has the SHA instructions, asked once.
    static let hardwareAcceleration = ccbeacon_sha256_accelerated() != 0

    /// A fresh hash.
    public init() { self.init(accelerated: Self.hardwareAcceleration) }

    /// A fresh hash that uses the SHA instructions only when `accelerated` (and they exist).
    init(accelerated: Bool) {
        self.accelerated = accelerated && Self.hardwareAcceleration
        buffer.reserveCapacity(64)
    }

    /// The digest of `bytes` in one call.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of `bytes` as 64 lower-case hex digits, the form `sha256sum` prints.
    public static func hexDigest(_ bytes: [UInt8]) -> String {
        hash(bytes).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    /// Adds bytes.
    public mutating func update(_ bytes: [UInt8]) {
        length &+= UInt64(bytes.count)
        var offset = 0
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, bytes.count)
            buffer.append(contentsOf: bytes[0..<take])
            offset = take
            if buffer.count == 64 {
                buffer.withUnsafeBufferPointer { compress($0.baseAddress!, blocks: 1) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        let blocks = (bytes.count - offset) / 64
        if blocks > 0 {
            bytes.withUnsafeBufferPointer { pointer in compress(pointer.baseAddress! + offset, blocks: blocks) }
            offset += blocks * 64
        }
        if offset < bytes.count { buffer.append(contentsOf: bytes[offset...]) }
    }

    /// The 32-byte digest.
    public mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var padding: [UInt8] = [0x80]
        let padded = (buffer.count + 1) % 64
        padding += [UInt8](repeating: 0, count: padded <= 56 ? 56 - padded : 120 - padded)
        for shift in stride(from: 56, through: 0, by: -8) {
            padding.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        let savedLength = length
        update(padding)
        length = savedLength
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32($0))) } }
    }

    /// Runs the compression function over `blocks` consecutive 64-byte blocks. The working state
    /// stays in locals across blocks, the schedule is a 16-word ring on the stack, and the round
    /// constants are read through a pointer: no allocation or bounds check per block.
    private mutating func compress(_ start: UnsafePointer<UInt8>, blocks: Int) {
        if accelerated {
            state.withUnsafeMutableBufferPointer { state in
                Self.roundConstants.withUnsafeBufferPointer { constants in
                    ccbeacon_sha256_compress_accelerated(state.baseAddress!, start, blocks, constants.baseAddress!)
                }
            }
            return
        }
        var (h0, h1, h2, h3) = (state[0], state[1], state[2], state[3])
        var (h4, h5, h6, h7) = (state[4], state[5], state[6], state[7])
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { w in
            Self.roundConstants.withUnsafeBufferPointer { k in
                for blockIndex in 0..<blocks {
                    let block = start + 64 * blockIndex
                    var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                    for i in 0..<64 {
                        let word: UInt32
                        if i < 16 {
                            word =
                                UInt32(block[4 * i]) << 24 | UInt32(block[4 * i + 1]) << 16
                                | UInt32(block[4 * i + 2]) << 8 | UInt32(block[4 * i + 3])
                        } else {
                            let w15 = w[(i - 15) & 15]
                            let w2 = w[(i - 2) & 15]
                            let s0 = rotate(w15, 7) ^ rotate(w15, 18) ^ (w15 >> 3)
                            let s1 = rotate(w2, 17) ^ rotate(w2, 19) ^ (w2 >> 10)
                            word = w[i & 15] &+ s0 &+ w[(i - 7) & 15] &+ s1
                        }
                        w[i & 15] = word
                        let t1 =
                            h &+ (rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[i] &+ word
                        let t2 = (rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                        h = g
                        g = f
                        f = e
                        e = d &+ t1
                        d = c
                        c = b
                        b = a
                        a = t1 &+ t2
                    }
                    h0 &+= a
                    h1 &+= b
                    h2 &+= c
                    h3 &+= d
                    h4 &+= e
                    h5 &+= f
                    h6 &+= g
                    h7 &+= h
                }
            }
        }
        state = [h0, h1, h2, h3, h4, h5, h6, h7]
    }

}

/// CRC-16/UMTS (also called BUYPASS): polynomial 0x8005, initial value 0, not reflected, no final
/// XOR. It is what the CC2541's random-number generator computes when bytes are written to RNDH
/// after seeding RNDL with 0, and so what TI's boot image manager checks OAD images with.
public enum CRC16UMTS {
    private static let table: [UInt16] = (0..<256).map { index -> UInt16 in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x8005 : crc << 1 }
        return crc
    }

    /// Continues `crc` over `bytes`.
    public static func update(_ crc: UInt16, _ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc = crc
        for byte in bytes { crc = (crc << 8) ^ table[Int(UInt8(crc >> 8) ^ byte)] }
        return crc
    }

    /// The CRC of `bytes` from the initial value 0.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 { update(0, bytes) }
}

@inline(__always) private func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
    (value >> count) | (value << (32 - count))
}

/// Why an advertising PDU could not be built.
public enum AirPacketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The advertising data does not fit a legacy advertising PDU.
    case advertisingDataTooLong(Int)
    /// The channel is not one of the three advertising channels.
    case notAnAdvertisingChannel(Int)
    /// A device address has six bytes.
    case addressLength(Int)

    /// What went wrong, in words for the command line.
    public var description: String {
        switch self {
        case .advertisingDataTooLong(let count):
            "advertising data is \(count) bytes; a legacy advertising PDU carries at most 31"
        case .notAnAdvertisingChannel(let channel):
            "channel \(channel) is not an advertising channel; use 37, 38 or 39"
        case .addressLength(let count):
            "a device address has 6 bytes, not \(count)"
        }
    }
}

/// A BLE link-layer ADV_NONCONN_IND packet as it goes on air (LE 1M, legacy advertising): the PDU
/// (header, advertiser address, advertising data), its CRC-24 and the whitened bytes per channel.
///
/// This is the model the stack-free firmware is checked against (stackfree-ble.md §4): the radio
/// computes CRC and whitening in hardware, so the tests need an independent, bit-exact reference.
/// All byte arrays are in air order, each byte sent least significant bit first.
public struct AdvertisingAirPacket: Sendable, Equatable {
    /// The advertising access address, 0x8E89BED6.
    public static let accessAddress: UInt32 = 0x8E89_BED6
    /// The advertising channels, in the order an advertising event uses them.
    public static let channels = [37, 38, 39]
    /// PDU type ADV_NONCONN_IND.
    static let nonConnectableType: UInt8 = 0b0010
    /// The TxAdd bit of the header: the advertiser address is random (static).
    static let randomAddressBit: UInt8 = 0x40

    /// Advertiser address as written (most significant byte first, `C0:FF:EE:12:34:56`).
    public var address: [UInt8]
    /// Whether the address is random (TxAdd = 1) rather than public.
    public var addressIsRandom: Bool
    /// The advertising data (at most 31 bytes).
    public var advertisingData: [UInt8]

    /// Creates a packet; `address` is six bytes, most significant first.
    public init(address: [UInt8], addressIsRandom: Bool, advertisingData: [UInt8]) throws(AirPacketError) {
        guard address.count == 6 else { throw .addressLength(address.count) }
        guard advertisingData.count <= 31 else { throw .advertisingDataTooLong(advertisingData.count) }
        self.address = address
        self.addressIsRandom = addressIsRandom
        self.advertisingData = advertisingData
    }

    /// Header, address (least significant byte first, as sent) and advertising data.
    public var pdu: [UInt8] {
        let header = Self.nonConnectableType | (addressIsRandom ? Self.randomAddressBit : 0)
        return [header, UInt8(6 + advertisingData.count)] + address.reversed() + advertisingData
    }

    /// The CRC-24 of the PDU, three bytes in air order.
    public var crc: [UInt8] { Self.crc24(pdu) }

    /// PDU and CRC whitened for `channel` (37, 38 or 39): the bits that go on air after the
    /// preamble and access address.
    public func whitened(channel: Int) throws(AirPacketError) -> [UInt8] {
        guard Self.channels.contains(channel) else { throw .notAnAdvertisingChannel(channel) }
        return Self.whiten(pdu + crc, channel: channel)
    }

    /// BLE CRC-24 (polynomial x²⁴+x¹⁰+x⁹+x⁶+x⁴+x³+x+1, preset 0x555555) over `bytes` taken least
    /// significant bit first; the result is in air order. The register is kept bit-reversed so that
    /// shifting right walks it in the order the bits go on air.
    public static func crc24(_ bytes: [UInt8], preset: UInt32 = 0x55_5555) -> [UInt8] {
        let reversedPolynomial: UInt32 = 0xDA_6000  // 0x00065B with its 24 bits reversed
        var register = reverse24(preset)
        for byte in bytes {
            for bit in 0..<8 {
                let feedback = (register ^ UInt32(byte >> bit)) & 1
                register >>= 1
                if feedback == 1 { register ^= reversedPolynomial }
            }
        }
        return [UInt8(register & 0xFF), UInt8((register >> 8) & 0xFF), UInt8(register >> 16)]
    }

    /// Data whitening with the PN7 sequence x⁷+x⁴+1 seeded from the channel index: position 0 is
    /// 1 and positions 1…6 hold the channel index, most significant bit first.
    public static func whiten(_ bytes: [UInt8], channel: Int) -> [UInt8] {
        var positions = [UInt8](repeating: 0, count: 7)
        positions[0] = 1
        for index in 1...6 { positions[index] = UInt8((channel >> (6 - index)) & 1) }
        return bytes.map { byte in
            var result = byte
            for bit in 0..<8 {
                let output = positions[6]
                result ^= output << bit
                positions = [
                    output, positions[0], positions[1], positions[2], positions[3] ^ output, positions[4], positions[5],
                ]
            }
            return result
        }
    }

    static func reverse24(_ value: UInt32) -> UInt32 {
        (0..<24).reduce(UInt32(0)) { reversed, bit in reversed | (((value >> bit) & 1) << (23 - bit)) }
    }
}

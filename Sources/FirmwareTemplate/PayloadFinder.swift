public import BeaconPayload
import HexText
public import IntelHex

/// A beacon payload found in a memory image.
public struct FoundBeacon: Sendable, Equatable {
    /// The layouts the scanner recognises.
    public enum Layout: Sendable, Equatable {
        /// Flags AD + iBeacon manufacturer AD, 30 bytes (`02 01 xx 1A FF 4C 00 02 15` + 21).
        case iBeaconAdvertisingData(flags: UInt8)
        /// The iBeacon manufacturer AD alone, 27 bytes (`1A FF 4C 00 02 15` + 21).
        case iBeaconManufacturerData
        /// An AltBeacon manufacturer AD, 28 bytes.
        case altBeacon
        /// Eddystone service data (UID or URL frame).
        case eddystone
    }

    /// Address of the first byte of the block.
    public var address: Int
    /// Block length in bytes.
    public var length: Int
    /// Which layout.
    public var layout: Layout
    /// The iBeacon identity, for iBeacon layouts.
    public var iBeacon: IBeacon?
    /// A one-line description of what was decoded.
    public var summary: String

    /// Address of the 21 identity bytes, for iBeacon layouts.
    public var identityAddress: Int? {
        switch layout {
        case .iBeaconAdvertisingData: return address + 9
        case .iBeaconManufacturerData: return address + 6
        default: return nil
        }
    }

    /// True for the two iBeacon layouts, which a template can patch.
    public var isIBeacon: Bool { iBeacon != nil }
}

/// Finds beacon payloads in the bytes a chip will hold (in an image; the on-air scanner is
/// `BeaconScan`). It searches the memory image, never the
/// HEX text, because IAR images split payloads across records; a pattern never matches across a
/// gap.
public enum PayloadFinder {
    static let iBeaconPrefix: [UInt8] = [0x4C, 0x00, 0x02, 0x15]

    /// Every iBeacon, AltBeacon and Eddystone block in `memory`, by address.
    public static func find(_ memory: MemoryImage) -> [FoundBeacon] {
        var found: [FoundBeacon] = []
        for hit in memory.addresses(of: iBeaconPrefix) {
            // `1A FF` before the company ID makes it a manufacturer AD; 21 bytes must follow.
            let start = hit - 2
            guard start >= 0, let ad = memory.contiguousBytes(in: start..<(hit + 4 + IBeacon.payloadLength)),
                ad[0] == 0x1A, ad[1] == 0xFF, let identity = IBeacon(payload: ad[6...])
            else { continue }
            if start >= 3, let flags = memory.contiguousBytes(in: (start - 3)..<start), flags[0] == 0x02,
                flags[1] == 0x01
            {
                found.append(
                    FoundBeacon(
                        address: start - 3, length: 30, layout: .iBeaconAdvertisingData(flags: flags[2]),
                        iBeacon: identity, summary: "iBeacon \(identity) (flags 0x\(hex2(flags[2])))"))
            } else {
                found.append(
                    FoundBeacon(
                        address: start, length: 27, layout: .iBeaconManufacturerData, iBeacon: identity,
                        summary: "iBeacon \(identity) (manufacturer AD only, no Flags AD before it)"))
            }
        }
        for hit in memory.addresses(of: AltBeacon.beaconCode) {
            let start = hit - 4
            guard start >= 0, let ad = memory.contiguousBytes(in: start..<(start + 28)), ad[0] == 0x1B, ad[1] == 0xFF,
                let beacon = try? AltBeacon(advertisingData: ad)
            else { continue }
            found.append(
                FoundBeacon(address: start, length: 28, layout: .altBeacon, iBeacon: nil, summary: beacon.description))
        }
        for hit in memory.addresses(of: [0x16] + Eddystone.serviceUUID) {
            let start = hit - 1
            guard start >= 0, let lengthByte = memory[start], (5...23).contains(lengthByte),
                let ad = memory.contiguousBytes(in: start..<(start + 1 + Int(lengthByte)))
            else { continue }
            let summary: String
            if let uid = try? EddystoneUID(advertisingData: ad) {
                summary = uid.description
            } else if let url = try? EddystoneURL(advertisingData: ad) {
                summary = url.description
            } else {
                continue
            }
            found.append(
                FoundBeacon(address: start, length: ad.count, layout: .eddystone, iBeacon: nil, summary: summary))
        }
        return found.sorted { $0.address < $1.address }
    }
}

extension PayloadFinder {
    /// Checks an image without a template: it must hold exactly one iBeacon block, carrying
    /// `expected` (power ignored unless `checkPower`).
    public static func verify(_ memory: MemoryImage, expected: IBeacon, checkPower: Bool) -> VerificationReport {
        let blocks = find(memory).filter(\.isIBeacon)
        guard blocks.count == 1, let block = blocks.first, let found = block.iBeacon else {
            let problem =
                blocks.isEmpty
                ? "the image holds no iBeacon block"
                : "the image holds \(blocks.count) iBeacon blocks (at \(blocks.map { hex($0.address) }.joined(separator: ", "))); give a template to say which one counts"
            return VerificationReport(address: blocks.first?.address ?? 0, found: nil, problems: [problem], notes: [])
        }
        return VerificationReport(
            address: block.address, found: found,
            problems: StationTemplate.differences(found: found, expected: expected, checkPower: checkPower),
            notes: checkPower ? [] : ["power not checked (the image has \(found.measuredPower) dBm)"])
    }
}

func hex2(_ byte: UInt8) -> String { HexText.byte(byte) }
func hex(_ value: Int) -> String { HexText.address(value) }

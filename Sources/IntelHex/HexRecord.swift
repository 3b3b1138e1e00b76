import HexText

/// The six Intel HEX record types.
public enum RecordType: UInt8, Sendable, Equatable, CaseIterable {
    /// 00: data bytes at an address.
    case data = 0
    /// 01: end of file.
    case endOfFile = 1
    /// 02: extended segment address (base = value × 16; offsets wrap inside the 64 KiB segment).
    case extendedSegmentAddress = 2
    /// 03: start segment address (CS:IP).
    case startSegmentAddress = 3
    /// 04: extended linear address (upper 16 bits of every following address).
    case extendedLinearAddress = 4
    /// 05: start linear address (EIP).
    case startLinearAddress = 5

    /// The fixed payload length of the non-data types; `nil` for data.
    var fixedPayloadLength: Int? {
        switch self {
        case .data: return nil
        case .endOfFile: return 0
        case .extendedSegmentAddress, .extendedLinearAddress: return 2
        case .startSegmentAddress, .startLinearAddress: return 4
        }
    }
}

/// The execution start address a HEX file carries (record 03 or 05).
public enum StartAddress: Sendable, Equatable, CustomStringConvertible {
    /// 03: 8086-style CS:IP.
    case segment(codeSegment: UInt16, instructionPointer: UInt16)
    /// 05: a 32-bit linear address (EIP).
    case linear(UInt32)

    /// `CS:IP 0000:010A` or `EIP 0x0000011D`.
    public var description: String {
        switch self {
        case .segment(let cs, let ip):
            return "CS:IP \(hexDigits(Int(cs), width: 4)):\(hexDigits(Int(ip), width: 4))"
        case .linear(let eip):
            return "EIP 0x\(hexDigits(Int(eip), width: 8))"
        }
    }
}

/// One record as it stands in the file: its type, where its text is, and where its payload is.
public struct HexRecord: Sendable, Equatable {
    /// The record type.
    public var type: RecordType
    /// 1-based line number.
    public var line: Int
    /// Offset of the record's `:` in the file's bytes.
    public var textOffset: Int
    /// The 16-bit address field as written.
    public var addressField: UInt16
    /// Where the record's decoded payload sits in `IntelHexFile.payloadStore`.
    public var payloadRange: Range<Int>

    /// Number of payload bytes (the record's byte count).
    public var byteCount: Int { payloadRange.count }
}

/// Where a data record's bytes land in memory. A record normally lands in one run; under an 02
/// segment address a record that runs past offset 0xFFFF wraps and lands in two.
struct Placement: Sendable, Equatable {
    /// Absolute address of the first byte of this run.
    var address: Int
    /// Index into `IntelHexFile.records`.
    var recordIndex: Int
    /// Index of the run's first byte within the record's payload.
    var payloadOffset: Int
    /// Number of bytes in this run.
    var length: Int

    var end: Int { address + length }
}

func hexDigits(_ value: Int, width: Int) -> String { HexText.digits(value, width: width) }

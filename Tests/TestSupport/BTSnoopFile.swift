/// Builds btsnoop captures byte by byte (test-services.md), so the reader is checked against the
/// format, and — where Debian's btmon is installed — against btmon's own reading of them. The
/// scan and calibrate command tests build their captures with it too.
public enum BTSnoopFile {
    /// The first record's timestamp (microseconds since 0000-01-01).
    public static let timestamp: UInt64 = 0x00E0_3AB4_4A67_6000  // in 2023

    /// `value` as 4 big-endian bytes, as btsnoop writes its numbers.
    public static func u32(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }

    /// A capture of `datalink` holding `packets` (flags, bytes).
    public static func file(datalink: UInt32 = 1002, _ packets: [(flags: UInt32, bytes: [UInt8])]) -> [UInt8] {
        var bytes = Array("btsnoop".utf8) + [0] + u32(1) + u32(datalink)
        for (index, packet) in packets.enumerated() {
            let stamp = timestamp + UInt64(index) * 1000
            bytes += u32(UInt32(packet.bytes.count)) + u32(UInt32(packet.bytes.count)) + u32(packet.flags) + u32(0)
            bytes += u32(UInt32(stamp >> 32)) + u32(UInt32(stamp & 0xFFFF_FFFF))
            bytes += packet.bytes
        }
        return bytes
    }

    /// An LE Advertising Report event (parameters only): one report.
    public static func legacyReport(type: UInt8 = 0x03, address: [UInt8], data: [UInt8], rssi: Int8) -> [UInt8] {
        [0x02, 0x01, type, 0x01] + address.reversed() + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
    }

    /// An LE Extended Advertising Report event (parameters only): one report.
    public static func extendedReport(address: [UInt8], data: [UInt8], rssi: Int8) -> [UInt8] {
        [0x0D, 0x01, 0x10, 0x00, 0x01] + address.reversed() + [0x01, 0x00, 0xFF, 0x7F, UInt8(bitPattern: rssi)]
            + [0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 6) + [UInt8(data.count)] + data
    }

    /// An HCI event packet as the monitor datalink carries it: code, length, parameters.
    public static func monitorEvent(_ parameters: [UInt8], code: UInt8 = 0x3E) -> [UInt8] {
        [code, UInt8(parameters.count)] + parameters
    }

    /// An HCI event packet as the UART datalink carries it: type 0x04, code, length, parameters.
    public static func uartEvent(_ parameters: [UInt8], code: UInt8 = 0x3E) -> [UInt8] {
        [0x04, code, UInt8(parameters.count)] + parameters
    }
}

import HexText

/// One advertisement a controller heard: from an LE Advertising Report (legacy, subevent 0x02) or
/// an LE Extended Advertising Report (subevent 0x0D) of an LE Meta event (0x3E).
public struct AdvertisingReport: Sendable, Equatable {
    /// The event type: legacy 0x00–0x04 (0x03 ADV_NONCONN_IND); extended, the 16-bit properties.
    public var eventType: UInt16
    /// Whether the report came from an extended report.
    public var extended: Bool
    /// Address type (0x00 public, 0x01 random, …).
    public var addressType: UInt8
    /// The advertiser's address, most significant byte first (as printed).
    public var address: [UInt8]
    /// The advertising data.
    public var data: [UInt8]
    /// RSSI in dBm (127: not available).
    public var rssi: Int8
    /// The capture record it came from (for messages).
    public var record: Int
    /// The controller that heard it (see `BTSnoopCapture.Event.controller`).
    public var controller: Int = 0

    /// The address written `XX:XX:XX:XX:XX:XX`.
    public var addressText: String { HexText.colonSeparated(address) }

    /// Whether `data` is the whole advertising data: an extended report's Data Status (bits 5–6
    /// of its event type) says 01 when more data comes in another report and 10 when the rest was
    /// cut off; a legacy report is always whole.
    public var dataComplete: Bool { !extended || (eventType >> 5) & 0x3 == 0 }

    /// The PDU type as the Core specification names it (`ADV_NONCONN_IND`, what a beacon sends);
    /// an extended report of a non-legacy PDU is `extended (0xPPPP)` with its properties.
    public var eventName: String {
        let legacy: UInt16
        if extended {
            // Properties: bit 4 legacy PDU, then bits 0 connectable, 1 scannable, 2 directed, 3
            // scan response; the Data Status (bits 5–6) is said apart.
            let properties = eventType & 0x1F
            let status = ["", ", data incomplete", ", data truncated", ", data status 3"][Int(eventType >> 5) & 0x3]
            guard properties & 0x10 != 0 else {
                return "extended (0x\(HexText.digits(properties, width: 4))\(status))"
            }
            switch eventType & 0x0F {
            case 0x3: legacy = 0x00
            case 0x5: legacy = 0x01
            case 0x2: legacy = 0x02
            case 0x0: legacy = 0x03
            case 0xA, 0xB: legacy = 0x04
            default: return "legacy (0x\(HexText.digits(eventType, width: 4)))"
            }
        } else {
            legacy = eventType
        }
        switch legacy {
        case 0x00: return "ADV_IND"
        case 0x01: return "ADV_DIRECT_IND"
        case 0x02: return "ADV_SCAN_IND"
        case 0x03: return "ADV_NONCONN_IND"
        case 0x04: return "SCAN_RSP"
        default: return "event type 0x\(HexText.byte(UInt8(truncatingIfNeeded: legacy)))"
        }
    }

    /// Every advertising report of a btsnoop capture read from `file`, in capture order (of the
    /// records it holds whole: see `BTSnoopCapture.cutShort`).
    public static func reports(in capture: BTSnoopCapture, file: String) throws(CaptureError) -> [AdvertisingReport] {
        var reports: [AdvertisingReport] = []
        for event in capture.events {
            reports += try Self.reports(in: event, file: file)
        }
        return reports
    }

    /// The reports of one HCI event, or none when it is no advertising report. A report that does
    /// not fit its event is an error: a capture is only believed whole.
    public static func reports(in event: BTSnoopCapture.Event, file: String) throws(CaptureError)
        -> [AdvertisingReport]
    {
        guard event.code == 0x3E, let subevent = event.parameters.first else { return [] }
        var reader = ReportReader(
            bytes: event.parameters, offset: 1, base: event.parametersOffset, record: event.record, file: file)
        var reports: [AdvertisingReport]
        switch subevent {
        case 0x02: reports = try reader.legacyReports()
        case 0x0D: reports = try reader.extendedReports()
        default: return []
        }
        // A capture is only believed whole: bytes after the reports it counts are not ignored.
        guard reader.offset == event.parameters.count else {
            throw CaptureError(
                file: file, offset: event.parametersOffset + reader.offset,
                problem:
                    "record \(event.record): \(event.parameters.count - reader.offset) byte(s) after the \(reports.count) report(s) the event counts"
            )
        }
        for index in reports.indices { reports[index].controller = event.controller }
        return reports
    }
}

/// Reads report fields in order, each bounds-checked.
struct ReportReader {
    let bytes: [UInt8]
    var offset: Int
    /// The file offset of `bytes[0]`.
    let base: Int
    let record: Int
    let file: String

    mutating func take(_ count: Int, _ what: String) throws(CaptureError) -> ArraySlice<UInt8> {
        guard count <= bytes.count - offset else {
            throw CaptureError(
                file: file, offset: base + offset,
                problem: "record \(record): the advertising report ends before its \(what) (\(count) bytes)")
        }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    mutating func byte(_ what: String) throws(CaptureError) -> UInt8 { try take(1, what).first! }

    /// Legacy reports, each one contiguous (as controllers send them and BlueZ reads them):
    /// event type, address type, address (LSB first), data length, data, RSSI.
    mutating func legacyReports() throws(CaptureError) -> [AdvertisingReport] {
        let count = Int(try byte("number of reports"))
        var reports: [AdvertisingReport] = []
        for _ in 0..<count {
            let eventType = try byte("event type")
            let addressType = try byte("address type")
            let address = Array(try take(6, "address").reversed())
            let length = Int(try byte("data length"))
            guard length <= 31 else {
                throw CaptureError(
                    file: file, offset: base + offset - 1,
                    problem: "record \(record): a legacy advertising report of \(length) data bytes (at most 31)")
            }
            let data = Array(try take(length, "data"))
            let rssi = Int8(bitPattern: try byte("RSSI"))
            reports.append(
                AdvertisingReport(
                    eventType: UInt16(eventType), extended: false, addressType: addressType, address: address,
                    data: data, rssi: rssi, record: record))
        }
        return reports
    }

    /// Extended reports (Core spec Vol 4 Part E §7.7.65.13): event type (2), address type,
    /// address, primary PHY, secondary PHY, SID, TX power, RSSI, periodic interval (2), direct
    /// address type, direct address (6), data length, data.
    mutating func extendedReports() throws(CaptureError) -> [AdvertisingReport] {
        let count = Int(try byte("number of reports"))
        var reports: [AdvertisingReport] = []
        for _ in 0..<count {
            let type = try take(2, "event type")
            let eventType = UInt16(type[type.startIndex]) | UInt16(type[type.startIndex + 1]) << 8
            let addressType = try byte("address type")
            let address = Array(try take(6, "address").reversed())
            _ = try take(4, "PHYs, SID and TX power")
            let rssi = Int8(bitPattern: try byte("RSSI"))
            _ = try take(9, "periodic interval and direct address")
            let length = Int(try byte("data length"))
            let data = Array(try take(length, "data"))
            reports.append(
                AdvertisingReport(
                    eventType: eventType, extended: true, addressType: addressType, address: address, data: data,
                    rssi: rssi, record: record))
        }
        return reports
    }
}

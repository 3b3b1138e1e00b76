/// Writes a memory image as Intel HEX.
///
/// Layout: data records of `recordLength` bytes aligned to multiples of `recordLength` (so a
/// segment starting at an odd address gets one short record first); no data record ever crosses a
/// 64 KiB boundary; when any byte lies at or above 64 KiB, an 04 record precedes the first record
/// of every 64 KiB page (page 0 included), otherwise no 04 record is written (plain I8HEX). The
/// start address, if any, is written as 03 or 05 just before the end-of-file record.
public struct HexWriter: Sendable {
    /// Line terminator for every record.
    public enum LineEnding: String, Sendable, CaseIterable {
        /// `\n`
        case lf
        /// `\r\n`, as IAR and objcopy write.
        case crlf

        var bytes: [UInt8] { self == .lf ? [0x0A] : [0x0D, 0x0A] }
    }

    /// Data bytes per record, 1–255.
    public var recordLength: Int
    /// Line terminator.
    public var lineEnding: LineEnding
    /// Write hex digits in lower case.
    public var lowercase: Bool

    /// Creates a writer. `recordLength` is clamped to 1–255.
    public init(recordLength: Int = 16, lineEnding: LineEnding = .lf, lowercase: Bool = false) {
        self.recordLength = min(max(recordLength, 1), 255)
        self.lineEnding = lineEnding
        self.lowercase = lowercase
    }

    /// The HEX text for `image`, with `startAddress` kept if given.
    public func text(for image: MemoryImage, startAddress: StartAddress? = nil) -> [UInt8] {
        var output: [UInt8] = []
        let recordCount = image.byteCount / recordLength + image.segments.count * 2 + 4
        output.reserveCapacity(recordCount * (11 + 2 * recordLength + 2))
        let usesPages = (image.endAddress ?? 0) > 0x10000
        var currentPage = -1
        for segment in image.segments {
            var address = segment.start
            while address < segment.end {
                let page = address >> 16
                if usesPages, page != currentPage {
                    appendRecord(type: 4, address: 0, payload: [UInt8(page >> 8), UInt8(page & 0xFF)], to: &output)
                    currentPage = page
                }
                let nextAligned = (address / recordLength + 1) * recordLength
                let nextPage = (page + 1) << 16
                let end = min(segment.end, nextAligned, nextPage)
                appendRecord(
                    type: 0, address: UInt16(address & 0xFFFF),
                    payload: segment.bytes[(address - segment.start)..<(end - segment.start)], to: &output)
                address = end
            }
        }
        switch startAddress {
        case .segment(let cs, let ip):
            appendRecord(
                type: 3, address: 0,
                payload: [UInt8(cs >> 8), UInt8(cs & 0xFF), UInt8(ip >> 8), UInt8(ip & 0xFF)], to: &output)
        case .linear(let eip):
            appendRecord(
                type: 5, address: 0,
                payload: [UInt8(eip >> 24), UInt8((eip >> 16) & 0xFF), UInt8((eip >> 8) & 0xFF), UInt8(eip & 0xFF)],
                to: &output)
        case nil:
            break
        }
        appendRecord(type: 1, address: 0, payload: [], to: &output)
        return output
    }

    private func appendRecord(type: UInt8, address: UInt16, payload: some Collection<UInt8>, to output: inout [UInt8]) {
        let count = UInt8(payload.count)
        let high = UInt8(address >> 8)
        let low = UInt8(address & 0xFF)
        var sum = count &+ high &+ low &+ type
        output.append(0x3A)
        HexDigits.append(count, to: &output, lowercase: lowercase)
        HexDigits.append(high, to: &output, lowercase: lowercase)
        HexDigits.append(low, to: &output, lowercase: lowercase)
        HexDigits.append(type, to: &output, lowercase: lowercase)
        for byte in payload {
            sum &+= byte
            HexDigits.append(byte, to: &output, lowercase: lowercase)
        }
        HexDigits.append(0 &- sum, to: &output, lowercase: lowercase)
        output.append(contentsOf: lineEnding.bytes)
    }
}

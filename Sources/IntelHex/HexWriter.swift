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
    ///
    /// Written straight into the array's storage, sized once from an upper bound on the records:
    /// one 2-byte store per data byte (from a table of digit pairs) and a running checksum, with
    /// no per-byte append and no bounds checks in the inner loop.
    public func text(for image: MemoryImage, startAddress: StartAddress? = nil) -> [UInt8] {
        let usesPages = (image.endAddress ?? 0) > 0x10000
        let lineEndingBytes = lineEnding.bytes
        // Records: per segment at most one per `recordLength` bytes plus a short first one, plus
        // one more per 64 KiB boundary; an 04 record per page a segment touches; start and end.
        // Payload digits: the data, 2 bytes per 04 record, 4 for a start record.
        var records = 2
        var pageRecords = 0
        for segment in image.segments {
            let pages = (segment.end - 1) >> 16 - segment.start >> 16 + 1
            records += segment.bytes.count / recordLength + 1 + pages
            if usesPages { pageRecords += pages }
        }
        let capacity =
            2 * (image.byteCount + 2 * pageRecords + 4) + (records + pageRecords) * (11 + lineEndingBytes.count)
        let pairs = lowercase ? HexDigits.lowerPairs : HexDigits.upperPairs
        return pairs.withUnsafeBufferPointer { pairs in
            [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                var output = RecordOutput(buffer: buffer, pairs: pairs, lineEnding: lineEndingBytes)
                var currentPage = -1
                for segment in image.segments {
                    segment.bytes.withUnsafeBufferPointer { bytes in
                        var address = segment.start
                        while address < segment.end {
                            let page = address >> 16
                            if usesPages, page != currentPage {
                                output.record(type: 4, address: 0, payload: [UInt8(page >> 8), UInt8(page & 0xFF)])
                                currentPage = page
                            }
                            let nextAligned = (address / recordLength + 1) * recordLength
                            let end = min(segment.end, nextAligned, (page + 1) << 16)
                            output.record(
                                type: 0, address: UInt16(address & 0xFFFF),
                                payload: UnsafeBufferPointer(
                                    rebasing: bytes[(address - segment.start)..<(end - segment.start)]))
                            address = end
                        }
                    }
                }
                switch startAddress {
                case .segment(let cs, let ip):
                    output.record(
                        type: 3, address: 0,
                        payload: [UInt8(cs >> 8), UInt8(cs & 0xFF), UInt8(ip >> 8), UInt8(ip & 0xFF)])
                case .linear(let eip):
                    output.record(
                        type: 5, address: 0,
                        payload: [
                            UInt8(eip >> 24), UInt8((eip >> 16) & 0xFF), UInt8((eip >> 8) & 0xFF), UInt8(eip & 0xFF),
                        ])
                case nil:
                    break
                }
                output.record(type: 1, address: 0, payload: [])
                count = output.written
            }
        }
    }
}

/// Writes records into memory sized by the caller.
private struct RecordOutput {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    let pairs: UnsafeBufferPointer<UInt16>
    let lineEnding: [UInt8]
    var written = 0

    init(buffer: UnsafeMutableBufferPointer<UInt8>, pairs: UnsafeBufferPointer<UInt16>, lineEnding: [UInt8]) {
        base = buffer.baseAddress!
        capacity = buffer.count
        self.pairs = pairs
        self.lineEnding = lineEnding
    }

    mutating func byte(_ value: UInt8) {
        UnsafeMutableRawPointer(base + written).storeBytes(of: pairs[Int(value)], as: UInt16.self)
        written += 2
    }

    mutating func record(type: UInt8, address: UInt16, payload: UnsafeBufferPointer<UInt8>) {
        let count = UInt8(payload.count)
        let high = UInt8(address >> 8)
        let low = UInt8(address & 0xFF)
        var sum = count &+ high &+ low &+ type
        // Checked once per record, before it is written: never a byte past the storage.
        precondition(
            written + 11 + 2 * payload.count + lineEnding.count <= capacity, "HexWriter's record bound was too small")
        base[written] = 0x3A
        written += 1
        byte(count)
        byte(high)
        byte(low)
        byte(type)
        for value in payload {
            sum &+= value
            byte(value)
        }
        byte(0 &- sum)
        for character in lineEnding {
            base[written] = character
            written += 1
        }
    }

    mutating func record(type: UInt8, address: UInt16, payload: [UInt8]) {
        payload.withUnsafeBufferPointer { record(type: type, address: address, payload: $0) }
    }
}

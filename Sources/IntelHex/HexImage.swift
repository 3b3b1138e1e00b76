/// An Intel HEX file read for its memory and start address only: what converting, inspecting,
/// verifying and flashing need. Same rules and same errors as `IntelHexFile`, which also keeps the
/// text and a table of every record so that it can patch lines.
///
/// It keeps neither. Records in address order (what toolchains write) are decoded straight into
/// the image's segments, so the data is held once, beside the text the caller read. Only a file
/// whose records go back in address or overlap is handed to `IntelHexFile`, whose sort and
/// byte-by-byte overlap check need the table.
public struct HexImage: Sendable {
    /// The memory the data records describe.
    public let memory: MemoryImage
    /// The execution start address (03 or 05), if the file has one.
    public let startAddress: StartAddress?
    /// Whether the records were out of address order or overlapped, so that the record table
    /// was built after all.
    let neededRecordTable: Bool

    /// Parses `text` (the raw bytes of a HEX file). Throws the first problem, with its location.
    public init(text: [UInt8], fileName: String? = nil) throws(HexReadError) {
        if let (memory, start) = try Self.readInOrder(text, fileName: fileName) {
            (self.memory, startAddress, neededRecordTable) = (memory, start, false)
        } else {
            // Done with the in-order attempt (returned, so its partial image is freed) before the
            // table is built.
            let file = try IntelHexFile(text: text, fileName: fileName)
            (memory, startAddress, neededRecordTable) = (file.memory, file.startAddress, true)
        }
    }

    /// The image of a file whose data records come in address order without overlaps; `nil` as
    /// soon as one does not.
    private static func readInOrder(_ text: [UInt8], fileName: String?) throws(HexReadError) -> (
        MemoryImage, StartAddress?
    )? {
        var parser = Parser(text: text, fileName: fileName, sink: SegmentSink(textCount: text.count))
        try parser.parse()
        guard !parser.stopped else { return nil }
        return (parser.sink.image(), parser.startAddress)
    }
}

/// Builds segments from data records in address order: the scanner decodes each record onto the
/// end of `payloads`, which is the segment being built, so no byte is copied afterwards.
private struct SegmentSink: RecordSink {
    /// The bytes of the segment being built (and, briefly, the payload of the record being read).
    var payloads: [UInt8] = []
    private var segmentStart = 0
    private var segments: [MemoryImage.Segment] = []

    init(textCount: Int) {
        // Two digits per byte: no file holds more data than half its text, so the first segment
        // (usually the only large one) never has to grow, which would copy it.
        payloads.reserveCapacity(textCount / 2)
    }

    mutating func place(address: Int, recordIndex: Int, payloadStart: Int, payloadOffset: Int, length: Int) -> Bool {
        // A record split by an 02 segment wrap lands in two places; leave it to the table.
        guard payloadOffset == 0, length == payloads.count - payloadStart else { return false }
        if payloadStart == 0 {  // the first data of the file
            segmentStart = address
            return true
        }
        let end = segmentStart + payloadStart
        if address == end { return true }
        guard address > end else { return false }  // back in address, or an overlap
        // A gap: this record's bytes start the next segment; the finished one keeps its buffer.
        let record = Array(payloads[payloadStart...])
        payloads.removeSubrange(payloadStart...)
        segments.append(MemoryImage.Segment(start: segmentStart, bytes: payloads))
        payloads = record
        segmentStart = address
        return true
    }

    mutating func finish(_ record: HexRecord) {
        // Address and start records carry no memory bytes; the scanner has read their payload.
        if record.type != .data { payloads.removeSubrange(record.payloadRange) }
    }

    /// The segments, sorted, disjoint and not touching by construction.
    func image() -> MemoryImage {
        MemoryImage(
            normalizedSegments: payloads.isEmpty ? segments : segments + [.init(start: segmentStart, bytes: payloads)])
    }
}

/// A parsed Intel HEX file: its exact text, its records, and the memory image they describe.
///
/// Reading rules (see docs/intel-hex.md for the user-facing version):
/// - Record types 00–05, digits in either case, LF or CRLF line endings, records in any order.
///   The address field of 01–05 is ignored, as the specification says (Python's intelhex and
///   srec_cat refuse one that is not 0000; it says nothing they could disagree on).
/// - Blank lines (empty, or only spaces, tabs and a carriage return) are allowed anywhere and kept;
///   spaces and tabs after a record's checksum are ignored.
/// - 04 sets the upper 16 bits of following addresses; data under 04 is linear, so a record may run
///   across a 64 KiB boundary (bytes past 4 GiB are an error). 02 sets a segment base; as the
///   specification says, offsets under 02 wrap inside the 64 KiB segment. The latest 02 or 04 applies.
/// - Two records may hold the same address only if they agree on the byte (identical overlap);
///   different bytes are a conflict. Two start records (03/05) must be identical.
/// - Exactly one end-of-file record, after which only blank lines may follow.
public struct IntelHexFile: Sendable {
    /// The file name used in error locations.
    public let fileName: String?
    /// The file's bytes exactly as read (or as patched).
    public internal(set) var text: [UInt8]
    /// Every record in file order.
    public let records: [HexRecord]
    /// The memory the data records describe.
    public internal(set) var memory: MemoryImage
    /// The execution start address (03 or 05), if the file has one.
    public let startAddress: StartAddress?
    /// Decoded payloads of all records, back to back; `HexRecord.payloadRange` indexes it.
    public internal(set) var payloadStore: [UInt8]
    /// Where each data record's bytes land, sorted by address.
    let placements: [Placement]

    /// Parses `text` (the raw bytes of a HEX file). Throws the first problem, with its location.
    public init(text: [UInt8], fileName: String? = nil) throws(HexReadError) {
        var parser = Parser(text: text, fileName: fileName, sink: RecordTable(textCount: text.count))
        try parser.parse()
        let table = parser.sink
        self.fileName = fileName
        self.text = text
        self.records = table.records
        self.startAddress = parser.startAddress
        self.payloadStore = table.payloads
        var placements = table.placements
        if !table.placementsSorted {
            placements.sort { ($0.address, $0.recordIndex) < ($1.address, $1.recordIndex) }
        }
        self.placements = placements
        self.memory = try Self.buildMemory(
            placements: placements, records: table.records, payloads: table.payloads, fileName: fileName)
    }

    /// Parses a HEX file given as a string.
    public init(string: String, fileName: String? = nil) throws(HexReadError) {
        try self.init(text: Array(string.utf8), fileName: fileName)
    }

    /// The decoded payload of `record`.
    public func payload(of record: HexRecord) -> ArraySlice<UInt8> {
        payloadStore[record.payloadRange]
    }

    /// Sweeps the sorted placements into segments, checking every overlap byte by byte.
    private static func buildMemory(
        placements: [Placement], records: [HexRecord], payloads: [UInt8], fileName: String?
    ) throws(HexReadError) -> MemoryImage {
        var segments: [MemoryImage.Segment] = []
        var currentStart = 0
        var current: [UInt8] = []
        for (index, placement) in placements.enumerated() {
            let payloadStart = records[placement.recordIndex].payloadRange.lowerBound + placement.payloadOffset
            let incoming = payloads[payloadStart..<(payloadStart + placement.length)]
            let currentEnd = currentStart + current.count
            if !current.isEmpty, placement.address <= currentEnd {
                let overlapEnd = min(placement.end, currentEnd)
                var address = placement.address
                while address < overlapEnd {
                    let existing = current[address - currentStart]
                    let byte = incoming[incoming.startIndex + (address - placement.address)]
                    if existing != byte {
                        throw conflict(
                            at: address, placementIndex: index, placements: placements, records: records,
                            payloads: payloads, fileName: fileName)
                    }
                    address += 1
                }
                if placement.end > currentEnd {
                    current.append(contentsOf: incoming[(incoming.startIndex + (currentEnd - placement.address))...])
                }
            } else {
                if !current.isEmpty { segments.append(.init(start: currentStart, bytes: current)) }
                currentStart = placement.address
                current = Array(incoming)
            }
        }
        if !current.isEmpty { segments.append(.init(start: currentStart, bytes: current)) }
        return MemoryImage(normalizedSegments: segments)
    }

    /// Builds the conflict error, blaming the record that comes later in the file.
    private static func conflict(
        at address: Int, placementIndex: Int, placements: [Placement], records: [HexRecord], payloads: [UInt8],
        fileName: String?
    ) -> HexReadError {
        func byte(_ placement: Placement) -> (line: Int, byte: UInt8, column: Int) {
            let record = records[placement.recordIndex]
            let indexInRecord = placement.payloadOffset + (address - placement.address)
            return (record.line, payloads[record.payloadRange.lowerBound + indexInRecord], 10 + 2 * indexInRecord)
        }
        let here = byte(placements[placementIndex])
        // The byte already in the image came from an earlier placement covering the address.
        var earlier = placementIndex - 1
        while earlier >= 0, !(placements[earlier].address <= address && address < placements[earlier].end) {
            earlier -= 1
        }
        let there = byte(placements[max(earlier, 0)])
        let (later, first) = here.line >= there.line ? (here, there) : (there, here)
        return HexReadError(
            location: SourceLocation(file: fileName, line: later.line, column: later.column),
            problem: .conflictingData(address: address, byte: later.byte, otherByte: first.byte, otherLine: first.line))
    }
}

/// What the record scanner hands its records to: `RecordTable` keeps every record for
/// line-preserving patches; `HexImage`'s sink keeps only the memory.
protocol RecordSink {
    /// The scanner appends each record's decoded payload here; the sink decides what stays.
    var payloads: [UInt8] { get set }
    /// A data record's bytes `payloads[payloadStart + payloadOffset ..< … + length]` land at
    /// `address`. Returns `false` when the sink cannot take them; the scanner then stops.
    mutating func place(address: Int, recordIndex: Int, payloadStart: Int, payloadOffset: Int, length: Int) -> Bool
    /// `record` is read and checked; its payload is `payloads[record.payloadRange]`.
    mutating func finish(_ record: HexRecord)
}

/// Every record, its payload and where its bytes land: what `IntelHexFile` needs to patch lines.
struct RecordTable: RecordSink {
    var payloads: [UInt8] = []
    var records: [HexRecord] = []
    var placements: [Placement] = []
    var placementsSorted = true
    private var lastPlacementAddress = -1

    init(textCount: Int) {
        // IAR images hold about 16 payload bytes per 44 characters of text.
        payloads.reserveCapacity(textCount / 2)
        records.reserveCapacity(textCount / 40)
        placements.reserveCapacity(textCount / 40)
    }

    mutating func place(address: Int, recordIndex: Int, payloadStart: Int, payloadOffset: Int, length: Int) -> Bool {
        if address < lastPlacementAddress { placementsSorted = false }
        lastPlacementAddress = address
        placements.append(
            Placement(address: address, recordIndex: recordIndex, payloadOffset: payloadOffset, length: length))
        return true
    }

    mutating func finish(_ record: HexRecord) { records.append(record) }
}

/// The record scanner. Works on raw bytes with unchecked indexing in the hot loop; every index is
/// bounded by the line's length, which is established before any digit is read.
struct Parser<Sink: RecordSink> {
    let text: [UInt8]
    let fileName: String?
    var sink: Sink
    var recordCount = 0
    var startAddress: StartAddress?
    var startAddressLine = 0
    /// Set when the sink refused a data record; the scan stopped there without a verdict.
    var stopped = false

    init(text: [UInt8], fileName: String?, sink: Sink) {
        self.text = text
        self.fileName = fileName
        self.sink = sink
    }

    func error(line: Int, column: Int, _ problem: HexReadProblem) -> HexReadError {
        HexReadError(location: SourceLocation(file: fileName, line: line, column: column), problem: problem)
    }

    /// Parses the text, handing each record to the sink.
    mutating func parse() throws(HexReadError) {
        // A local reference to the text (no copy): the scan reads it through a pointer while
        // `self` (the sink) is mutated.
        let text = self.text
        let nibbles = HexDigits.nibbleValue
        // Scratch for one record's payload (at most 255 bytes), decoded before it is appended.
        let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 256)
        defer { scratch.deallocate() }
        try text.withUnsafeBufferPointer { (characters) throws(HexReadError) in
            try nibbles.withUnsafeBufferPointer { (table) throws(HexReadError) in
                try parse(characters, nibbles: table, scratch: scratch)
            }
        }
    }

    /// The scan. The hot path per record: take the line end its byte count implies, decode count,
    /// address and type, then the payload into `scratch` and onto the end of `sink.payloads` in
    /// one copy, summing as it goes; the slower checks that name a column run only once something
    /// is wrong.
    private mutating func parse(
        _ text: UnsafeBufferPointer<UInt8>, nibbles: UnsafeBufferPointer<UInt8>,
        scratch: UnsafeMutableBufferPointer<UInt8>
    ) throws(HexReadError) {
        let count = text.count
        if count >= 3, text[0] == 0xEF, text[1] == 0xBB, text[2] == 0xBF {
            throw error(line: 1, column: 1, .byteOrderMark)
        }
        var position = 0
        var line = 0
        var endOfFileLine: Int?
        var upperLinear = 0
        var segmentBase: Int?  // non-nil while an 02 record is in force
        // A line whose end was guessed from its byte count and turned out to hold something
        // other than hex digits is read again with a scan for its real end, which decides
        // where the error is.
        var scanLine = false
        while position < count {
            line += 1
            let lineStart = position
            var contentEnd: Int
            var guessed = false
            if !scanLine, let end = Self.guessedLineEnd(text, at: lineStart, nibbles: nibbles) {
                (contentEnd, position, guessed) = (end.content, end.next, true)
            } else {
                scanLine = false
                var lineEnd = position
                while lineEnd < count, text[lineEnd] != 0x0A { lineEnd += 1 }
                position = lineEnd < count ? lineEnd + 1 : count
                contentEnd = lineEnd
                while contentEnd > lineStart {
                    let last = text[contentEnd - 1]
                    guard last == 0x0D || last == 0x20 || last == 0x09 else { break }
                    contentEnd -= 1
                }
            }
            if contentEnd == lineStart { continue }  // blank line
            // A Ctrl-Z alone on the file's last line: the end-of-file mark DOS tools appended.
            if endOfFileLine != nil, contentEnd - lineStart == 1, text[lineStart] == 0x1A,
                text[position...].allSatisfy({ [0x0A, 0x0D, 0x20, 0x09].contains($0) })
            {
                break
            }
            if let endOfFileLine {
                throw error(line: line, column: 1, .dataAfterEndOfFile(endOfFileLine: endOfFileLine))
            }
            guard text[lineStart] == 0x3A else {
                throw error(line: line, column: 1, .missingColon(found: text[lineStart]))
            }

            let length = contentEnd - lineStart
            if length < 11 {
                try checkDigits(from: lineStart + 1, to: contentEnd, lineStart: lineStart, line: line)
                throw error(
                    line: line, column: length + 1,
                    .truncated(declaredDataBytes: nil, expectedCharacters: 11, foundCharacters: length))
            }
            let countHigh = nibbles[Int(text[lineStart + 1])]
            let countLow = nibbles[Int(text[lineStart + 2])]
            guard (countHigh | countLow) & 0xF0 == 0, case let byteCount = countHigh << 4 | countLow else {
                throw badDigit(from: lineStart + 1, to: lineStart + 3, lineStart: lineStart, line: line)
            }
            let expectedLength = 11 + 2 * Int(byteCount)
            if length != expectedLength {
                if length > expectedLength {
                    // A whole record with something after it: that is what is wrong, not a digit.
                    try checkDigits(
                        from: lineStart + 1, to: lineStart + expectedLength, lineStart: lineStart, line: line)
                    var after = lineStart + expectedLength
                    while text[after] == 0x20 || text[after] == 0x09 { after += 1 }  // content ends in neither
                    // A digit right after the record is a byte count too small; after a blank, or
                    // any other character, it is something after the record.
                    if nibbles[Int(text[after])] > 0x0F || after > lineStart + expectedLength {
                        throw error(line: line, column: after - lineStart + 1, .textAfterRecord(found: text[after]))
                    }
                }
                try checkDigits(from: lineStart + 1, to: contentEnd, lineStart: lineStart, line: line)
                if length < expectedLength {
                    throw error(
                        line: line, column: length + 1,
                        .truncated(
                            declaredDataBytes: Int(byteCount), expectedCharacters: expectedLength,
                            foundCharacters: length))
                }
                throw error(
                    line: line, column: expectedLength + 1,
                    .byteCountMismatch(
                        declaredDataBytes: Int(byteCount), expectedCharacters: expectedLength, foundCharacters: length))
            }

            // Decode every byte after the colon: count, address (2), type, payload, checksum.
            let payloadStart = sink.payloads.count
            var sum = UInt8(0)
            var header = (UInt8(0), UInt8(0), UInt8(0))
            var decodedAll = true
            // Each pair of digits through the nibble table (0xFF for a non-digit), checked once
            // for the whole record by OR-ing the nibbles.
            func pair(_ offset: Int) -> UInt16 {
                UInt16(nibbles[Int(text[offset])]) << 8 | UInt16(nibbles[Int(text[offset + 1])])
            }
            let headerPairs = (pair(lineStart + 3), pair(lineStart + 5), pair(lineStart + 7), pair(contentEnd - 2))
            if (headerPairs.0 | headerPairs.1 | headerPairs.2 | headerPairs.3) & 0xF0F0 != 0 {
                decodedAll = false
            } else {
                func value(_ pair: UInt16) -> UInt8 { UInt8(truncatingIfNeeded: pair >> 4) | UInt8(pair & 0x0F) }
                header = (value(headerPairs.0), value(headerPairs.1), value(headerPairs.2))
                sum = byteCount &+ header.0 &+ header.1 &+ header.2 &+ value(headerPairs.3)
                let payloadCount = Int(byteCount)
                if payloadCount > 0 {
                    // Decoded into scratch, then appended in one copy (the array's capacity is
                    // reserved for the whole file, so it never grows here).
                    var offset = lineStart + 9
                    var bad = UInt8(0)
                    for index in 0..<payloadCount {
                        let high = nibbles[Int(text[offset])]
                        let low = nibbles[Int(text[offset + 1])]
                        bad |= high | low
                        let value = high << 4 | low
                        sum &+= value
                        scratch[index] = value
                        offset += 2
                    }
                    if bad & 0xF0 != 0 {
                        decodedAll = false
                    } else {
                        sink.payloads.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<payloadCount]))
                    }
                }
            }
            if !decodedAll, guessed {
                // Read the line again with its real end.
                sink.payloads.removeSubrange(payloadStart...)
                (position, line, scanLine) = (lineStart, line - 1, true)
                continue
            }
            if !decodedAll {
                throw badDigit(from: lineStart + 1, to: contentEnd, lineStart: lineStart, line: line)
            }
            let checksumColumn = length - 1
            if sum != 0 {
                let found = decodeByte(at: contentEnd - 2) ?? 0
                throw error(line: line, column: checksumColumn, .badChecksum(found: found, expected: found &- sum))
            }
            let addressField = UInt16(header.0) << 8 | UInt16(header.1)
            guard let type = RecordType(rawValue: header.2) else {
                throw error(line: line, column: 8, .unknownRecordType(header.2))
            }
            if let fixed = type.fixedPayloadLength, fixed != Int(byteCount) {
                throw error(
                    line: line, column: 2,
                    .wrongPayloadLength(recordType: header.2, expected: fixed, found: Int(byteCount)))
            }
            let record = HexRecord(
                type: type, line: line, textOffset: lineStart, addressField: addressField,
                payloadRange: payloadStart..<sink.payloads.count)
            let recordIndex = recordCount
            recordCount += 1

            switch type {
            case .data:
                guard byteCount > 0 else { break }
                // Where the bytes land: one run, or two when an 02 segment wraps at 64 KiB.
                var first = (address: 0, payloadOffset: 0, length: Int(byteCount))
                var second: (address: Int, payloadOffset: Int, length: Int)?
                if let base = segmentBase {
                    let firstRun = min(Int(byteCount), 0x10000 - Int(addressField))
                    first = (base + Int(addressField), 0, firstRun)
                    if firstRun < Int(byteCount) { second = (base, firstRun, Int(byteCount) - firstRun) }
                } else {
                    let address = upperLinear << 16 + Int(addressField)
                    if address + Int(byteCount) > MemoryImage.addressLimit {
                        throw error(
                            line: line, column: 10 + 2 * (MemoryImage.addressLimit - address),
                            .addressBeyond4GiB(address: MemoryImage.addressLimit))
                    }
                    first.address = address
                }
                func place(_ run: (address: Int, payloadOffset: Int, length: Int)) -> Bool {
                    sink.place(
                        address: run.address, recordIndex: recordIndex, payloadStart: payloadStart,
                        payloadOffset: run.payloadOffset, length: run.length)
                }
                guard place(first), second.map(place) ?? true else {
                    stopped = true
                    return
                }
            case .endOfFile:
                endOfFileLine = line
            case .extendedSegmentAddress:
                segmentBase = Int(sink.payloads[payloadStart]) << 12 | Int(sink.payloads[payloadStart + 1]) << 4
            case .extendedLinearAddress:
                segmentBase = nil
                upperLinear = Int(sink.payloads[payloadStart]) << 8 | Int(sink.payloads[payloadStart + 1])
            case .startSegmentAddress, .startLinearAddress:
                let p = sink.payloads[payloadStart..<(payloadStart + 4)].map { UInt32($0) }
                let start: StartAddress =
                    type == .startLinearAddress
                    ? .linear(p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3])
                    : .segment(codeSegment: UInt16(p[0] << 8 | p[1]), instructionPointer: UInt16(p[2] << 8 | p[3]))
                if let existing = startAddress, existing != start {
                    throw error(
                        line: line, column: 10,
                        .conflictingStartAddress(start: start, otherStart: existing, otherLine: startAddressLine))
                }
                if startAddress == nil { startAddressLine = line }
                startAddress = start
            }
            sink.finish(record)
        }
        if endOfFileLine == nil {
            throw error(line: max(line, 1), column: 1, .missingEndOfFile)
        }
    }

    /// Where a line that holds one well-formed record ends, told by its byte count: the end of
    /// its content and where the next line starts. Nil unless the line starts with `:` and two hex
    /// digits and the record's last character is followed by `\n`, `\r\n`, `\r` at the end of the
    /// text, or the end itself; the caller then scans for the line end. (Whether everything
    /// between is hex digits is for the decoding to find.)
    static func guessedLineEnd(
        _ text: UnsafeBufferPointer<UInt8>, at start: Int, nibbles: UnsafeBufferPointer<UInt8>
    ) -> (content: Int, next: Int)? {
        let count = text.count
        guard start + 3 <= count, text[start] == 0x3A else { return nil }
        let high = nibbles[Int(text[start + 1])]
        let low = nibbles[Int(text[start + 2])]
        guard (high | low) & 0xF0 == 0 else { return nil }
        let end = start + 11 + 2 * Int(high << 4 | low)
        if end == count { return (end, end) }
        guard end < count else { return nil }
        if text[end] == 0x0A { return (end, end + 1) }
        guard text[end] == 0x0D else { return nil }
        if end + 1 == count { return (end, end + 1) }
        return text[end + 1] == 0x0A ? (end, end + 2) : nil
    }

    func decodeByte(at offset: Int) -> UInt8? {
        let high = HexDigits.nibbleValue[Int(text[offset])]
        let low = HexDigits.nibbleValue[Int(text[offset + 1])]
        guard (high | low) & 0xF0 == 0 else { return nil }
        return high << 4 | low
    }

    /// Throws at the first non-digit in `from..<to`.
    func checkDigits(from: Int, to: Int, lineStart: Int, line: Int) throws(HexReadError) {
        for offset in from..<to where !HexDigits.isDigit(text[offset]) {
            throw error(line: line, column: offset - lineStart + 1, .badDigit(found: text[offset]))
        }
    }

    /// The error for the first non-digit in `from..<to`, which the caller knows exists.
    func badDigit(from: Int, to: Int, lineStart: Int, line: Int) -> HexReadError {
        let offset = (from..<to).first { !HexDigits.isDigit(text[$0]) } ?? from
        return error(line: line, column: offset - lineStart + 1, .badDigit(found: text[offset]))
    }
}

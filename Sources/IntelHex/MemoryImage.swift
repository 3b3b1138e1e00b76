/// A sparse byte image of a 32-bit address space: sorted, non-overlapping, non-adjacent segments.
///
/// Addresses are `Int`s in `0..<MemoryImage.addressLimit`; ranges are half-open. Adjacent writes
/// merge into one segment, so two images with the same bytes at the same addresses compare equal
/// however they were built.
public struct MemoryImage: Sendable, Equatable {
    /// One past the highest address an Intel HEX file can hold (4 GiB).
    public static let addressLimit = 0x1_0000_0000

    /// A run of consecutive bytes starting at `start`.
    public struct Segment: Sendable, Equatable {
        /// Address of the first byte.
        public var start: Int
        /// The bytes, `bytes[i]` at `start + i`.
        public var bytes: [UInt8]
        /// One past the last address.
        public var end: Int { start + bytes.count }
        /// The addresses this segment covers.
        public var range: Range<Int> { start..<end }

        /// Creates a segment.
        public init(start: Int, bytes: [UInt8]) {
            self.start = start
            self.bytes = bytes
        }
    }

    /// The segments in address order; never empty segments, never overlapping or touching.
    public private(set) var segments: [Segment]

    /// An empty image.
    public init() { segments = [] }

    /// An image holding `bytes` at `address` (a `.bin` file loaded at a base address).
    public init(bytes: [UInt8], at address: Int) throws(MemoryImageError) {
        segments = []
        try write(bytes, at: address)
    }

    /// Builds an image from segments that are already sorted, disjoint and not touching.
    /// Used by the HEX reader, which establishes that order itself.
    init(normalizedSegments: [Segment]) {
        segments = normalizedSegments
    }

    /// True when the image holds no bytes.
    public var isEmpty: Bool { segments.isEmpty }

    /// Number of bytes held (gaps excluded).
    public var byteCount: Int { segments.reduce(0) { $0 + $1.bytes.count } }

    /// Lowest address holding a byte.
    public var lowestAddress: Int? { segments.first?.start }

    /// One past the highest address holding a byte.
    public var endAddress: Int? { segments.last?.end }

    /// The byte at `address`, or `nil` where the image has none.
    public subscript(address: Int) -> UInt8? {
        guard let index = segmentIndex(containing: address) else { return nil }
        let segment = segments[index]
        return segment.bytes[address - segment.start]
    }

    /// The bytes in `range`, or `nil` if any address in it holds no byte.
    public func contiguousBytes(in range: Range<Int>) -> [UInt8]? {
        if range.isEmpty { return [] }
        guard let index = segmentIndex(containing: range.lowerBound) else { return nil }
        let segment = segments[index]
        guard range.upperBound <= segment.end else { return nil }
        return Array(segment.bytes[(range.lowerBound - segment.start)..<(range.upperBound - segment.start)])
    }

    /// The bytes in `range` with `fill` wherever the image holds nothing (a `.bin` export).
    public func bytes(in range: Range<Int>, fill: UInt8 = 0xFF) -> [UInt8] {
        var result = [UInt8](repeating: fill, count: range.count)
        var index = firstSegmentIndex(endingAfter: range.lowerBound)
        while index < segments.count, segments[index].start < range.upperBound {
            let segment = segments[index]
            let from = max(segment.start, range.lowerBound)
            let to = min(segment.end, range.upperBound)
            result.withUnsafeMutableBufferPointer { out in
                segment.bytes.withUnsafeBufferPointer { source in
                    for address in from..<to {
                        out[address - range.lowerBound] = source[address - segment.start]
                    }
                }
            }
            index += 1
        }
        return result
    }

    /// Writes `bytes` at `address`, replacing what was there and merging with touching segments.
    public mutating func write(_ bytes: [UInt8], at address: Int) throws(MemoryImageError) {
        guard address >= 0, address + bytes.count <= Self.addressLimit else {
            throw .beyondAddressSpace(address: address, count: bytes.count)
        }
        if bytes.isEmpty { return }
        let end = address + bytes.count
        // Every segment from `first` up to (not including) `last` overlaps or touches the new bytes.
        let first = firstSegmentIndex(endingAtOrAfter: address)
        var last = first
        while last < segments.count, segments[last].start <= end { last += 1 }
        if first == last {
            segments.insert(Segment(start: address, bytes: bytes), at: first)
            return
        }
        let mergedStart = min(address, segments[first].start)
        let mergedEnd = max(end, segments[last - 1].end)
        var merged = [UInt8](repeating: 0, count: mergedEnd - mergedStart)
        for index in first..<last {
            let segment = segments[index]
            merged.replaceSubrange(
                (segment.start - mergedStart)..<(segment.end - mergedStart), with: segment.bytes)
        }
        merged.replaceSubrange((address - mergedStart)..<(end - mergedStart), with: bytes)
        segments.replaceSubrange(first..<last, with: [Segment(start: mergedStart, bytes: merged)])
    }

    /// Fills every address in `range` that holds no byte with `value`; existing bytes are kept.
    public mutating func fillGaps(in range: Range<Int>, with value: UInt8) throws(MemoryImageError) {
        guard range.lowerBound >= 0, range.upperBound <= Self.addressLimit else {
            throw .beyondAddressSpace(address: range.lowerBound, count: range.count)
        }
        for gap in gaps(in: range) {
            try write([UInt8](repeating: value, count: gap.count), at: gap.lowerBound)
        }
    }

    /// The empty stretches of `range`.
    public func gaps(in range: Range<Int>) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var cursor = range.lowerBound
        var index = firstSegmentIndex(endingAfter: range.lowerBound)
        while index < segments.count, segments[index].start < range.upperBound, cursor < range.upperBound {
            let segment = segments[index]
            if segment.start > cursor { result.append(cursor..<segment.start) }
            cursor = max(cursor, segment.end)
            index += 1
        }
        if cursor < range.upperBound { result.append(cursor..<range.upperBound) }
        return result
    }

    /// The ranges where this image or `other` holds a byte, merged and ascending: outside them
    /// both read as erased flash, so only inside can two images differ. (Walking from the lowest
    /// address to the highest instead took a minute, or 4 GiB of memory, for two bytes 4 GiB apart.)
    public func spans(togetherWith other: MemoryImage) -> [Range<Int>] {
        Self.merged((segments + other.segments).map(\.range))
    }

    /// `ranges` without the empty ones, overlapping and touching ranges made one, ascending.
    public static func merged(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        for range in ranges.filter({ !$0.isEmpty }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }

    /// `spans(togetherWith:)` cut into pieces of at most `size` bytes, so that each can be read out
    /// of both images without holding either whole.
    public func pieces(togetherWith other: MemoryImage, size: Int = 0x10000) -> [Range<Int>] {
        spans(togetherWith: other).flatMap { span in
            stride(from: span.lowerBound, to: span.upperBound, by: size).map { $0..<min($0 + size, span.upperBound) }
        }
    }

    /// The part of the image inside `range`.
    public func cropped(to range: Range<Int>) -> MemoryImage {
        var result: [Segment] = []
        var index = firstSegmentIndex(endingAfter: range.lowerBound)
        while index < segments.count, segments[index].start < range.upperBound {
            let segment = segments[index]
            let from = max(segment.start, range.lowerBound)
            let to = min(segment.end, range.upperBound)
            result.append(
                Segment(start: from, bytes: Array(segment.bytes[(from - segment.start)..<(to - segment.start)])))
            index += 1
        }
        return MemoryImage(normalizedSegments: result)
    }

    /// The image without the bytes inside `range` (a gap there).
    public func removing(_ range: Range<Int>) -> MemoryImage {
        guard !range.isEmpty else { return self }
        let before = cropped(to: Int.min..<range.lowerBound)
        let after = cropped(to: range.upperBound..<Int.max)
        return MemoryImage(normalizedSegments: before.segments + after.segments)
    }

    /// Start addresses of every occurrence of `pattern`, searched within each segment (a pattern
    /// never matches across a gap, because a gap is not bytes the chip will hold).
    public func addresses(of pattern: [UInt8]) -> [Int] {
        guard let firstByte = pattern.first else { return [] }
        var result: [Int] = []
        for segment in segments where segment.bytes.count >= pattern.count {
            segment.bytes.withUnsafeBufferPointer { bytes in
                pattern.withUnsafeBufferPointer { wanted in
                    var offset = 0
                    let lastStart = bytes.count - wanted.count
                    while offset <= lastStart {
                        if bytes[offset] == firstByte {
                            var matched = 1
                            while matched < wanted.count, bytes[offset + matched] == wanted[matched] { matched += 1 }
                            if matched == wanted.count { result.append(segment.start + offset) }
                        }
                        offset += 1
                    }
                }
            }
        }
        return result
    }

    // MARK: - Index helpers (binary searches over the sorted segments)

    func segmentIndex(containing address: Int) -> Int? {
        let index = firstSegmentIndex(endingAfter: address)
        guard index < segments.count, segments[index].start <= address else { return nil }
        return index
    }

    /// Index of the first segment whose end is greater than `address`.
    func firstSegmentIndex(endingAfter address: Int) -> Int {
        var low = 0
        var high = segments.count
        while low < high {
            let middle = (low + high) / 2
            if segments[middle].end > address { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Index of the first segment whose end is at or after `address` (so it touches or overlaps).
    func firstSegmentIndex(endingAtOrAfter address: Int) -> Int {
        firstSegmentIndex(endingAfter: address - 1)
    }
}

/// A memory-image operation that cannot be done.
public enum MemoryImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Bytes would land outside `0..<4 GiB`.
    case beyondAddressSpace(address: Int, count: Int)

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .beyondAddressSpace(let address, let count):
            return
                "\(count) byte\(count == 1 ? "" : "s") at address \(hex32(max(address, 0))) do not fit below 4 GiB (0xFFFFFFFF is the last address)"
        }
    }
}

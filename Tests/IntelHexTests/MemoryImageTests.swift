import Testing

@testable import IntelHex

struct MemoryImageTests {
    @Test func writesMergeWithTouchingAndOverlappingSegments() throws {
        var image = MemoryImage()
        try image.write([1, 2], at: 10)
        try image.write([5, 6], at: 20)
        #expect(image.segments.count == 2)
        try image.write([3, 4], at: 12)  // touches the first
        #expect(image.segments.map(\.range) == [10..<14, 20..<22])
        try image.write([9, 9, 9, 9, 9, 9, 9, 9], at: 13)  // bridges both
        #expect(image.segments.map(\.range) == [10..<22])
        #expect(image.segments[0].bytes == [1, 2, 3, 9, 9, 9, 9, 9, 9, 9, 9, 6])
        try image.write([7], at: 0)
        #expect(image.segments.map(\.range) == [0..<1, 10..<22])
        #expect(image.byteCount == 13)
        #expect(image.lowestAddress == 0)
        #expect(image.endAddress == 22)
    }

    /// Where either of two images holds a byte, merged: touching and overlapping ranges are one,
    /// a gap stays a gap (however wide), and pieces cut a span without crossing a gap.
    @Test func spansOfTwoImagesAreWhereEitherHoldsAByte() throws {
        var a = try MemoryImage(bytes: [1, 2, 3, 4], at: 0x10)
        try a.write([5, 6], at: 0x20)
        try a.write([7], at: 0xF000_0000)
        var b = try MemoryImage(bytes: [9, 9], at: 0x14)
        try b.write([8, 8, 8, 8], at: 0x1E)
        #expect(a.spans(togetherWith: b) == [0x10..<0x16, 0x1E..<0x22, 0xF000_0000..<0xF000_0001])
        #expect(a.spans(togetherWith: b) == b.spans(togetherWith: a))
        #expect(a.spans(togetherWith: MemoryImage()) == a.segments.map(\.range))
        #expect(MemoryImage().spans(togetherWith: MemoryImage()).isEmpty)
        #expect(
            a.pieces(togetherWith: b, size: 4) == [
                0x10..<0x14, 0x14..<0x16, 0x1E..<0x22, 0xF000_0000..<0xF000_0001,
            ])
    }

    @Test func readsBytesAndGaps() throws {
        var image = MemoryImage()
        try image.write([1, 2, 3], at: 4)
        try image.write([8], at: 10)
        #expect(image[4] == 1)
        #expect(image[7] == nil)
        #expect(image[3] == nil)
        #expect(image.contiguousBytes(in: 4..<7) == [1, 2, 3])
        #expect(image.contiguousBytes(in: 4..<8) == nil)
        #expect(image.contiguousBytes(in: 5..<5) == [])
        #expect(image.bytes(in: 2..<12) == [0xFF, 0xFF, 1, 2, 3, 0xFF, 0xFF, 0xFF, 8, 0xFF])
        #expect(image.bytes(in: 2..<12, fill: 0) == [0, 0, 1, 2, 3, 0, 0, 0, 8, 0])
        #expect(image.gaps(in: 0..<12) == [0..<4, 7..<10, 11..<12])
        #expect(image.gaps(in: 4..<7) == [])
    }

    @Test func fillsOnlyGaps() throws {
        var image = try MemoryImage(bytes: [1, 2], at: 2)
        try image.fillGaps(in: 0..<6, with: 0xEE)
        #expect(image.segments.count == 1)
        #expect(image.segments[0].start == 0)
        #expect(image.segments[0].bytes == [0xEE, 0xEE, 1, 2, 0xEE, 0xEE])
    }

    @Test func cropsAndFindsPatternsWithinSegments() throws {
        var image = try MemoryImage(bytes: [0x4C, 0x00, 0x02, 0x15, 0x4C], at: 0x100)
        try image.write([0x00, 0x02, 0x15], at: 0x106)  // the pattern split by a gap must not match
        #expect(image.addresses(of: [0x4C, 0x00, 0x02, 0x15]) == [0x100])
        #expect(image.addresses(of: [0x02, 0x15]) == [0x102, 0x107])
        let cropped = image.cropped(to: 0x102..<0x107)
        #expect(cropped.segments.map(\.range) == [0x102..<0x105, 0x106..<0x107])
    }

    /// Removing a range leaves a gap there: a segment across it is cut in two, one inside it goes,
    /// and an empty range or one outside the image changes nothing.
    @Test(arguments: [
        (0x102..<0x104, [0x100..<0x102, 0x104..<0x105, 0x106..<0x109]),
        (0x100..<0x109, []),
        (0x105..<0x106, [0x100..<0x105, 0x106..<0x109]),
        (0x104..<0x107, [0x100..<0x104, 0x107..<0x109]),
        (0x103..<0x103, [0x100..<0x105, 0x106..<0x109]),
        (0x200..<0x300, [0x100..<0x105, 0x106..<0x109]),
    ])
    func removesARange(range: Range<Int>, left: [Range<Int>]) throws {
        var image = try MemoryImage(bytes: [1, 2, 3, 4, 5], at: 0x100)
        try image.write([6, 7, 8], at: 0x106)
        let removed = image.removing(range)
        #expect(removed.segments.map(\.range) == left)
        for address in 0x100..<0x109 {
            #expect(removed[address] == (range.contains(address) ? nil : image[address]))
        }
    }

    @Test func refusesBytesBeyond4GiB() {
        var image = MemoryImage()
        #expect(throws: MemoryImageError.beyondAddressSpace(address: 0xFFFF_FFFF, count: 2)) {
            try image.write([1, 2], at: 0xFFFF_FFFF)
        }
        #expect(throws: MemoryImageError.self) { try image.write([1], at: -1) }
        #expect(image.isEmpty)
    }

    @Test func binaryExportAndImport() throws {
        var image = try MemoryImage(bytes: [1, 2], at: 0x10)
        try image.write([3], at: 0x14)
        #expect(try image.binary() == [1, 2, 0xFF, 0xFF, 3])
        #expect(try image.binary(range: 0x0E..<0x12, fill: 0) == [0, 0, 1, 2])
        #expect(throws: BinaryExportError.emptyImage) { try MemoryImage().binary() }
        #expect(throws: BinaryExportError.invalidRange(5..<5)) { try image.binary(range: 5..<5) }
        #expect(throws: BinaryExportError.tooLarge(size: 0x100, limit: 0x10)) {
            try image.binary(range: 0..<0x100, sizeLimit: 0x10)
        }
        let reloaded = try MemoryImage(bytes: try image.binary(), at: 0x10)
        #expect(reloaded.bytes(in: 0x10..<0x15) == image.bytes(in: 0x10..<0x15))
    }
}

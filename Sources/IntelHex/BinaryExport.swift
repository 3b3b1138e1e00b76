/// A `.bin` export that cannot be made.
public enum BinaryExportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No range was given and the image holds no bytes to take one from.
    case emptyImage
    /// The range is empty, negative or beyond 4 GiB.
    case invalidRange(Range<Int>)
    /// The export would be larger than the limit (usually a stray byte far from the rest).
    case tooLarge(size: Int, limit: Int)

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .emptyImage:
            return "the image holds no data, so there is no address range to export; give one"
        case .invalidRange(let range):
            return
                "the range \(hex32(range.lowerBound)):\(hex32(range.upperBound)) is empty or outside 0x00000000:0x100000000"
        case .tooLarge(let size, let limit):
            return
                "the binary would be \(size) bytes, more than the limit of \(limit) bytes; the image probably has data far apart, choose a range"
        }
    }
}

extension MemoryImage {
    /// Largest `.bin` produced without an explicit larger limit: 64 MiB, far above any CC254x flash.
    public static let defaultBinarySizeLimit = 64 << 20

    /// The bytes of `range` (default: lowest to highest address held) with `fill` in the gaps.
    public func binary(
        range requested: Range<Int>? = nil, fill: UInt8 = 0xFF, sizeLimit: Int = MemoryImage.defaultBinarySizeLimit
    ) throws(BinaryExportError) -> [UInt8] {
        let range: Range<Int>
        if let requested {
            range = requested
        } else {
            guard let low = lowestAddress, let end = endAddress else { throw .emptyImage }
            range = low..<end
        }
        guard range.lowerBound >= 0, range.upperBound <= MemoryImage.addressLimit, !range.isEmpty else {
            throw .invalidRange(range)
        }
        guard range.count <= sizeLimit else { throw .tooLarge(size: range.count, limit: sizeLimit) }
        return bytes(in: range, fill: fill)
    }
}

import CQREncode
import Synchronization

#if canImport(Glibc)
    import Glibc  // errno
#endif

/// A QR code symbol as a square of modules, without its quiet zone.
public struct QRMatrix: Sendable, Equatable {
    /// The symbol version, 1…40 (version N is 17 + 4·N modules wide).
    public let version: Int
    /// Modules per side.
    public let size: Int
    /// Whether each module is dark, row by row from the top left.
    public let modules: [Bool]

    /// A symbol of `size`×`size` `modules`; `modules.count` must be `size * size`.
    public init(version: Int, size: Int, modules: [Bool]) {
        precondition(size > 0 && modules.count == size * size, "a QR matrix is size × size modules")
        self.version = version
        self.size = size
        self.modules = modules
    }

    /// Whether the module in `row` and `column` (from the top left, 0-based) is dark.
    public func isDark(row: Int, column: Int) -> Bool { modules[row * size + column] }

    /// The runs of dark modules in each row, as (row, first column, length), top to bottom and
    /// left to right: what a drawing fills, one rectangle per run instead of one per module.
    public var darkRuns: [(row: Int, column: Int, length: Int)] {
        var runs: [(row: Int, column: Int, length: Int)] = []
        for row in 0..<size {
            var column = 0
            while column < size {
                guard isDark(row: row, column: column) else {
                    column += 1
                    continue
                }
                let start = column
                while column < size, isDark(row: row, column: column) { column += 1 }
                runs.append((row, start, column - start))
            }
        }
        return runs
    }
}

/// Why a QR code could not be made.
public enum QREncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// More bytes than the largest symbol (version 40) holds at this error-correction level.
    case tooLong(bytes: Int)
    /// libqrencode could not allocate memory.
    case outOfMemory
    /// libqrencode refused the input for another reason (its `errno`).
    case refused(errno: Int32)
    /// The code fits the label only with modules smaller than print and phone cameras resolve:
    /// symbol `version` at `millimetres` per module, under `minimum`.
    case modulesTooSmall(version: Int, millimetres: Double, minimum: Double)

    /// One sentence.
    public var description: String {
        switch self {
        case .tooLong(let bytes):
            return
                "\(bytes) bytes are more than a QR code holds at error-correction level M (\(QREncoder.capacity) bytes in version 40)"
        case .outOfMemory: return "libqrencode ran out of memory"
        case .refused(let code): return "libqrencode refused the text (errno \(code))"
        case .modulesTooSmall(let version, let millimetres, let minimum):
            // Hundredths rounded down: a size under the minimum never reads as the minimum.
            let shown = (millimetres * 100).rounded(.down) / 100
            return
                "its string needs a version \(version) code, whose modules would be \(shown) mm on this label, under the \(minimum) mm a 300 dpi printer and a phone camera resolve"

        }
    }
}

/// QR codes through Debian's libqrencode: 8-bit mode (the bytes as they are, UTF-8 text
/// included), error-correction level M (15 % of the symbol may be lost — a scratched or
/// dirty label still reads), the smallest version that holds the data.
public enum QREncoder {
    /// The most bytes a version-40 symbol holds in 8-bit mode at level M (ISO/IEC 18004 table 7).
    public static let capacity = 2331

    /// libqrencode is thread-safe only when built with pthread support; one call at a time makes
    /// labels independent of how the installed library was built. Encoding a label takes
    /// microseconds.
    private static let lock = Mutex(())

    /// The symbol for `bytes`.
    public static func encode(_ bytes: [UInt8]) throws(QREncodingError) -> QRMatrix {
        // Checked here too, so the message names the limit instead of libqrencode's ERANGE.
        guard bytes.count <= capacity else { throw .tooLong(bytes: bytes.count) }
        guard !bytes.isEmpty else { throw .refused(errno: EINVAL) }
        let result: Result<QRMatrix, QREncodingError> = lock.withLock { _ in
            errno = 0
            let code = bytes.withUnsafeBufferPointer { buffer in
                QRcode_encodeData(Int32(buffer.count), buffer.baseAddress, 0, QR_ECLEVEL_M)
            }
            guard let code else {
                // The header documents errno for every failure: ERANGE too large, ENOMEM, EINVAL.
                switch errno {
                case ERANGE: return .failure(.tooLong(bytes: bytes.count))
                case ENOMEM: return .failure(.outOfMemory)
                default: return .failure(.refused(errno: errno))
                }
            }
            defer { QRcode_free(code) }
            let width = Int(code.pointee.width)
            guard width > 0, let data = code.pointee.data else { return .failure(.refused(errno: EINVAL)) }
            // Bit 0 of each byte is the module's colour; the other bits say what the module is for.
            let modules = (0..<width * width).map { data[$0] & 1 == 1 }
            return .success(QRMatrix(version: Int(code.pointee.version), size: width, modules: modules))
        }
        return try result.get()
    }
}

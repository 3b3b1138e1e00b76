import HexText

/// Where in a HEX file a problem was found: 1-based line and column (columns count bytes).
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    /// The file name given to the reader, or `nil` when the text did not come from a file.
    public var file: String?
    /// 1-based line number.
    public var line: Int
    /// 1-based column (byte offset within the line plus one).
    public var column: Int

    /// Creates a location.
    public init(file: String?, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`, the form compilers use, so editors can jump to it.
    public var description: String {
        "\(file ?? "<input>"):\(line):\(column)"
    }
}

/// What exactly is wrong with a HEX file, in terms a user can act on.
public enum HexReadProblem: Sendable, Equatable {
    /// The file begins with a UTF-8 byte-order mark, which is not part of Intel HEX.
    case byteOrderMark
    /// A non-blank line does not start with `:`.
    case missingColon(found: UInt8)
    /// A character that is not a hexadecimal digit where one is required.
    case badDigit(found: UInt8)
    /// The line ends before the record is complete.
    case truncated(declaredDataBytes: Int?, expectedCharacters: Int, foundCharacters: Int)
    /// The line holds more characters than the record's byte count allows.
    case byteCountMismatch(declaredDataBytes: Int, expectedCharacters: Int, foundCharacters: Int)
    /// The record's checksum does not make its bytes sum to zero.
    case badChecksum(found: UInt8, expected: UInt8)
    /// A record type other than 00–05.
    case unknownRecordType(UInt8)
    /// A 01–05 record whose payload length is not the fixed one its type requires.
    case wrongPayloadLength(recordType: UInt8, expected: Int, found: Int)
    /// A record follows the end-of-file record.
    case dataAfterEndOfFile(endOfFileLine: Int)
    /// The file ends without an end-of-file record.
    case missingEndOfFile
    /// Two records put different bytes at the same address.
    case conflictingData(address: Int, byte: UInt8, otherByte: UInt8, otherLine: Int)
    /// Two start-address records disagree.
    case conflictingStartAddress(start: StartAddress, otherStart: StartAddress, otherLine: Int)
    /// A data byte would land at or beyond 4 GiB.
    case addressBeyond4GiB(address: Int)
    /// A character after a record's checksum that neither ends the line nor is white space.
    case textAfterRecord(found: UInt8)
}

/// A HEX file could not be read; says where and why.
public struct HexReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the problem is.
    public var location: SourceLocation
    /// What the problem is.
    public var problem: HexReadProblem

    /// Creates an error.
    public init(location: SourceLocation, problem: HexReadProblem) {
        self.location = location
        self.problem = problem
    }

    /// `file:line:column: reason`.
    public var description: String { "\(location): \(reason)" }

    /// The problem in plain words, without the location.
    public var reason: String {
        switch problem {
        case .byteOrderMark:
            return
                "the file starts with a UTF-8 byte-order mark (EF BB BF); Intel HEX is plain ASCII, save it without the mark"
        case .missingColon(let found):
            return "a record must start with ':' but this line starts with \(describe(found))"
        case .badDigit(let found):
            return "expected a hexadecimal digit (0-9, A-F, a-f), found \(describe(found))"
        case .truncated(let declared, let expected, let found):
            if let declared {
                return
                    "truncated record: it declares \(declared) data byte\(declared == 1 ? "" : "s"), which needs \(expected) characters, but the line has \(found)"
            }
            return
                "truncated record: a record needs at least \(expected) characters (':' and 10 hex digits), the line has \(found)"
        case .byteCountMismatch(let declared, let expected, let found):
            return
                "wrong byte count: the record declares \(declared) data byte\(declared == 1 ? "" : "s") (\(expected) characters) but the line has \(found) characters"
        case .badChecksum(let found, let expected):
            return "bad checksum: the record ends in \(hex8(found)) but its bytes need \(hex8(expected))"
        case .unknownRecordType(let type):
            return "unknown record type \(hex8(type, prefix: false)); Intel HEX defines 00 to 05"
        case .wrongPayloadLength(let type, let expected, let found):
            return
                "\(withArticle(recordTypeName(type))) record (\(hex8(type, prefix: false))) carries \(expected) byte\(expected == 1 ? "" : "s"), this one carries \(found)"
        case .dataAfterEndOfFile(let eofLine):
            return "record after the end-of-file record on line \(eofLine); remove it or the end-of-file record"
        case .missingEndOfFile:
            return "the file ends without an end-of-file record (:00000001FF); it may be truncated"
        case .conflictingData(let address, let byte, let otherByte, let otherLine):
            return
                "conflicting data: this record puts \(hex8(byte)) at address \(hex32(address)), line \(otherLine) already put \(hex8(otherByte)) there"
        case .conflictingStartAddress(let start, let otherStart, let otherLine):
            return "conflicting start address: this record sets \(start), line \(otherLine) already set \(otherStart)"
        case .addressBeyond4GiB(let address):
            return
                "address \(HexText.address(address)) is beyond 4 GiB (0xFFFFFFFF is the last address)"
        case .textAfterRecord(0x0D):
            return
                "a carriage return after the record that does not end the line; lines end in LF or CRLF (a file with CR line endings alone must be converted first)"
        case .textAfterRecord(let found):
            return
                "\(describe(found)) after the record's checksum; a line holds one record, then spaces or tabs at most"
        }
    }
}

/// `name` after "a", or "an" before a vowel ("an extended linear address").
func withArticle(_ name: String) -> String {
    (name.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + name
}

/// Name of a record type in words, for messages.
func recordTypeName(_ type: UInt8) -> String {
    switch type {
    case 0: return "data"
    case 1: return "end-of-file"
    case 2: return "extended segment address"
    case 3: return "start segment address"
    case 4: return "extended linear address"
    case 5: return "start linear address"
    default: return "unknown"
    }
}

func describe(_ character: UInt8) -> String {
    switch character {
    case 0x21...0x7E: return "'\(Character(Unicode.Scalar(character)))'"
    case 0x20: return "a space"
    case 0x09: return "a tab"
    case 0x0D: return "a carriage return"
    default: return "byte \(hex8(character))"
    }
}

func hex8(_ value: UInt8, prefix: Bool = true) -> String { (prefix ? "0x" : "") + HexText.byte(value) }

func hex32(_ value: Int) -> String { HexText.address(value, width: value > 0xFFFF ? 8 : 4) }

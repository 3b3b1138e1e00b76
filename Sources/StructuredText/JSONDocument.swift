/// A parsed JSON value that remembers where it stood in the text, so that errors in data files
/// can name line, column and key path.
public struct JSONNode: Sendable {
    /// The value.
    public enum Value: Sendable {
        /// An object; member order is kept.
        case object([Member])
        /// An array.
        case array([JSONNode])
        /// A string.
        case string(String)
        /// A number, as written (converted by the reader that knows its range).
        case number(String)
        /// `true` or `false`.
        case bool(Bool)
        /// `null`.
        case null
    }

    /// One object member.
    public struct Member: Sendable {
        /// The key.
        public var key: String
        /// The value.
        public var value: JSONNode
    }

    /// The value.
    public var value: Value
    /// 1-based line of the value's first character.
    public var line: Int
    /// 1-based column of the value's first character.
    public var column: Int

    /// A word for the value's kind, for messages ("an object", "a string").
    public var kindDescription: String {
        switch value {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "true/false"
        case .null: return "null"
        }
    }
}

/// A data file that cannot be used: which file, where, which key, and what to do.
public struct DataFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public var file: String
    /// 1-based line (0 when the problem concerns the whole file).
    public var line: Int
    /// 1-based column.
    public var column: Int
    /// JSON key path such as `fields[0].address`, or a CSV column name; empty when none applies.
    public var keyPath: String
    /// What is wrong and what is allowed.
    public var message: String

    /// Creates an error.
    public init(file: String, line: Int, column: Int, keyPath: String = "", message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.message = message
    }

    /// `file:line:column: keyPath: message`.
    public var description: String {
        let location = line > 0 ? "\(file):\(line):\(column)" : file
        return keyPath.isEmpty ? "\(location): \(message)" : "\(location): \(keyPath): \(message)"
    }
}

/// A strict JSON parser (RFC 8259) over UTF-8 bytes, with positions. Duplicate keys and nesting
/// deeper than 64 levels are errors; a UTF-8 byte-order mark at the start is skipped.
public enum JSONParser {
    /// Deepest nesting accepted; deeper input is refused rather than risking the stack.
    public static let maximumDepth = 64

    /// Parses a whole document. Invalid UTF-8 is an error at its first bad byte, never turned
    /// into U+FFFD.
    public static func parse(_ bytes: [UInt8], file: String) throws(DataFileError) -> JSONNode {
        var scanner = Scanner(bytes: bytes, file: file)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.offset = 3 }
        scanner.invalidByte = UTF8Validation.firstInvalidByte(in: bytes, from: scanner.offset)
        scanner.skipWhitespace()
        let node = try scanner.value(depth: 0)
        scanner.skipWhitespace()
        if scanner.offset < bytes.count { throw scanner.error("unexpected text after the JSON value") }
        return node
    }

    private struct Scanner {
        let bytes: [UInt8]
        let file: String
        var offset = 0
        var line = 1
        var lineStart = 0
        /// The first invalid UTF-8 byte; only a string can take it in without an error of its own.
        var invalidByte: Int?

        init(bytes: [UInt8], file: String) {
            self.bytes = bytes
            self.file = file
        }

        var column: Int { offset - lineStart + 1 }

        func error(_ message: String) -> DataFileError {
            DataFileError(file: file, line: line, column: column, message: message)
        }

        mutating func skipWhitespace() {
            while offset < bytes.count {
                switch bytes[offset] {
                case 0x20, 0x09, 0x0D: offset += 1
                case 0x0A:
                    offset += 1
                    line += 1
                    lineStart = offset
                default: return
                }
            }
        }

        /// Reads the elements of an object or array, the opening byte under `offset`: `element`
        /// reads one, whitespace skipped around it, until `closing` (none at all when it comes first).
        mutating func elements(
            closedBy closing: Unicode.Scalar, container: String, _ element: (inout Self) throws(DataFileError) -> Void
        ) throws(DataFileError) {
            offset += 1
            skipWhitespace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: closing) {
                offset += 1
                return
            }
            while true {
                skipWhitespace()
                try element(&self)
                skipWhitespace()
                guard offset < bytes.count else { throw error("the file ends inside \(container)") }
                if bytes[offset] == UInt8(ascii: ",") {
                    offset += 1
                    continue
                }
                guard bytes[offset] == UInt8(ascii: closing) else { throw error("expected ',' or '\(closing)'") }
                offset += 1
                return
            }
        }

        mutating func value(depth: Int) throws(DataFileError) -> JSONNode {
            guard depth < JSONParser.maximumDepth else { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
            guard offset < bytes.count else { throw error("the file ends where a value should start") }
            let (startLine, startColumn) = (line, column)
            func node(_ value: JSONNode.Value) -> JSONNode {
                JSONNode(value: value, line: startLine, column: startColumn)
            }
            switch bytes[offset] {
            case UInt8(ascii: "{"):
                var members: [JSONNode.Member] = []
                var seen = Set<String>()
                try elements(closedBy: "}", container: "an object") { (parser: inout Self) throws(DataFileError) in
                    guard parser.offset < parser.bytes.count, parser.bytes[parser.offset] == UInt8(ascii: "\"") else {
                        throw parser.error("expected a quoted key")
                    }
                    let (keyLine, keyColumn) = (parser.line, parser.column)
                    let key = try parser.string()
                    guard !seen.contains(key) else {
                        throw DataFileError(
                            file: parser.file, line: keyLine, column: keyColumn, message: "key \"\(key)\" appears twice"
                        )
                    }
                    seen.insert(key)
                    parser.skipWhitespace()
                    guard parser.offset < parser.bytes.count, parser.bytes[parser.offset] == UInt8(ascii: ":") else {
                        throw parser.error("expected ':' after the key")
                    }
                    parser.offset += 1
                    parser.skipWhitespace()
                    members.append(JSONNode.Member(key: key, value: try parser.value(depth: depth + 1)))
                }
                return node(.object(members))
            case UInt8(ascii: "["):
                var items: [JSONNode] = []
                try elements(closedBy: "]", container: "an array") { (parser: inout Self) throws(DataFileError) in
                    items.append(try parser.value(depth: depth + 1))
                }
                return node(.array(items))
            case UInt8(ascii: "\""):
                return node(.string(try string()))
            case UInt8(ascii: "t"):
                try literal("true")
                return node(.bool(true))
            case UInt8(ascii: "f"):
                try literal("false")
                return node(.bool(false))
            case UInt8(ascii: "n"):
                try literal("null")
                return node(.null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return node(.number(try number()))
            default:
                throw error("expected a value (object, array, string, number, true, false or null)")
            }
        }

        /// `true`, `false` or `null` as a whole word: any other run of letters here is no value
        /// (said as what it is, not as the word its first letter began).
        mutating func literal(_ word: String) throws(DataFileError) {
            let letters = bytes[offset...].prefix { (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) }
            guard Array(letters) == Array(word.utf8) else {
                let shown = String(decoding: letters.prefix(20), as: UTF8.self)
                throw error(
                    "not a JSON value: '\(shown)\(letters.count > 20 ? "…" : "")' (a value is an object, array, string, number, true, false or null)"
                )
            }
            offset += letters.count
        }

        mutating func number() throws(DataFileError) -> String {
            let start = offset
            func digits() -> Int {
                let first = offset
                while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) { offset += 1 }
                return offset - first
            }
            if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            let integerStart = offset
            guard digits() > 0 else { throw error("a number needs digits") }
            if bytes[integerStart] == UInt8(ascii: "0"), offset - integerStart > 1 {
                throw error("numbers do not start with 0 (write hex as a string, \"0x…\")")
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
                offset += 1
                guard digits() > 0 else { throw error("a fraction needs digits") }
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
                offset += 1
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                    offset += 1
                }
                guard digits() > 0 else { throw error("an exponent needs digits") }
            }
            return String(decoding: bytes[start..<offset], as: UTF8.self)
        }

        mutating func string() throws(DataFileError) -> String {
            offset += 1  // opening quote
            var scalars = String.UnicodeScalarView()
            var runStart = offset
            func flushRun() {
                if runStart < offset {
                    scalars.append(contentsOf: String(decoding: bytes[runStart..<offset], as: UTF8.self).unicodeScalars)
                }
            }
            while true {
                guard offset < bytes.count else { throw error("the file ends inside a string") }
                let byte = bytes[offset]
                switch byte {
                case UInt8(ascii: "\""):
                    flushRun()
                    offset += 1
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flushRun()
                    offset += 1
                    guard offset < bytes.count else { throw error("the file ends inside a string") }
                    let escape = bytes[offset]
                    offset += 1
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800...0xDBFF).contains(code) {
                            guard bytes.count - offset >= 6, bytes[offset] == UInt8(ascii: "\\"),
                                bytes[offset + 1] == UInt8(ascii: "u")
                            else { throw error("a high surrogate must be followed by a low surrogate") }
                            offset += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                        scalars.append(scalar)
                    default:
                        throw error("unknown escape \\\(String(decoding: [escape], as: UTF8.self))")
                    }
                    runStart = offset
                case 0x00..<0x20:
                    throw error("control character in a string (write it as an escape)")
                default:
                    if offset == invalidByte { throw error(UTF8Validation.message(byte)) }
                    offset += 1
                }
            }
        }

        mutating func hex4() throws(DataFileError) -> UInt32 {
            guard bytes.count - offset >= 4 else { throw error("\\u needs four hex digits") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = Character(Unicode.Scalar(bytes[offset])).hexDigitValue else {
                    throw error("\\u needs four hex digits")
                }
                value = value << 4 | UInt32(digit)
                offset += 1
            }
            return value
        }
    }
}
